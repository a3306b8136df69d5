import OpenAI from "openai";
import type { Config } from "../config.ts";
import { OpenAIModel, type ProviderDefaults } from "../models/index.ts";
import { RuntimeError } from "../runtime/errors.ts";
import type { Model } from "../runtime/ports/model-port.ts";
import type { Redactor } from "../runtime/redact.ts";

/** HTTP requests the client has sent, retries included; a trace tells a retried call by it. */
export interface RequestCount {
  sent: number;
}

/** Marks a request's fetch options with the counter of the conversation that sent it, for the client they share. */
const SENT_BY = Symbol("sent by");
interface Counted {
  [SENT_BY]?: RequestCount;
}

/**
 * One `openai` client per configuration, which is one per environment and so per isolate: a
 * client is ~7 KiB of resource objects that every conversation object in memory held a copy of
 * (issue 67). Each request still counts for the conversation that sent it, by its fetch options.
 * The client's logger redacts with the secrets of the conversation that made it: every
 * conversation of one environment has the same (and the client logs nothing below `warn`).
 */
const clients = new WeakMap<Config, OpenAI>();

function clientFor(config: Config, redactor: Redactor): OpenAI {
  let client = clients.get(config);
  if (!client) {
    client = new OpenAI({
      logger: redactingLogger(redactor),
      apiKey: config.OPENAI_API_KEY ?? "not-needed",
      ...(config.OPENAI_BASE_URL ? { baseURL: config.OPENAI_BASE_URL } : {}),
      // Retries 429, 5xx and connection failures before the first byte, with backoff, jitter and Retry-After.
      maxRetries: config.OPENAI_MAX_RETRIES,
      fetch: (input, init?: RequestInit & Counted) => {
        const { [SENT_BY]: requests, ...rest } = init ?? {};
        if (requests) requests.sent++;
        return fetch(input, rest);
      },
    });
    clients.set(config, client);
  }
  return client;
}

/**
 * The configured provider's model; undefined when neither a key nor a base URL is configured. What
 * the provider says in its errors, and whatever the client logs, reaches the log only through `redactor`.
 */
export function createModel(config: Config, redactor: Redactor, requests: RequestCount = { sent: 0 }): Model | undefined {
  if (!config.OPENAI_API_KEY && !config.OPENAI_BASE_URL) return undefined;
  const log = (message: string) => console.warn(redactor.text(message));
  // A key of our own beside fetch's: the client hands its fetch options to `fetch` as they are.
  const counted = { [SENT_BY]: requests } satisfies Counted as ProviderDefaults["fetchOptions"];
  return new OpenAIModel(clientFor(config, redactor), {
    idleTimeoutMs: config.OPENAI_IDLE_TIMEOUT_MS,
    log,
    fetchOptions: counted,
    ...(config.OPENAI_API ? { api: config.OPENAI_API } : {}),
    ...(config.OPENAI_TEMPERATURE !== undefined ? { temperature: config.OPENAI_TEMPERATURE } : {}),
    ...(config.OPENAI_REASONING_EFFORT ? { reasoningEffort: config.OPENAI_REASONING_EFFORT } : {}),
    ...(config.OPENAI_MAX_OUTPUT_TOKENS !== undefined ? { maxOutputTokens: config.OPENAI_MAX_OUTPUT_TOKENS } : {}),
    ...(config.OPENAI_PARALLEL_TOOL_CALLS !== undefined ? { parallelToolCalls: config.OPENAI_PARALLEL_TOOL_CALLS } : {}),
  });
}

/** The `openai` client's logger, with every argument redacted before it reaches the console. */
function redactingLogger(redactor: Redactor) {
  const clean = (args: unknown[]) =>
    args.map((arg) =>
      redactor.text(typeof arg === "string" ? arg : arg instanceof Error ? arg.message : (JSON.stringify(arg) ?? String(arg))),
    );
  return {
    error: (...args: unknown[]) => console.error(...clean(args)),
    warn: (...args: unknown[]) => console.warn(...clean(args)),
    info: (...args: unknown[]) => console.info(...clean(args)),
    debug: (...args: unknown[]) => console.debug(...clean(args)),
  };
}

/** Without a provider and without an offline model, every turn says what to configure. */
export function unconfiguredModel(): Model {
  return {
    stream() {
      throw new RuntimeError(
        "model_not_configured",
        "No model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a provider other than OpenAI), " +
          "or OFFLINE_MODEL=true in .dev.vars for the offline model (not a real model) while you develop.",
      );
    },
  };
}
