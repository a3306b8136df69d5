/**
 * @module
 * Model adapters: OpenAI-compatible Chat Completions and Responses through the `openai` package,
 * their stream assemblers and error mapping. The offline demo model lives with the example network it
 * knows (src/agents), and answers when no provider is configured.
 */
import OpenAI from "openai";
import type { Config } from "../config.ts";
import type { Model, Redactor } from "../runtime/index.ts";
import { DemoModel } from "../agents/demo-model.ts";
import { OpenAIModel } from "./openai-model.ts";

export { ChatStreamAssembler, type ChatChunk } from "./chat-stream-assembler.ts";
export { toChatMessages } from "./openai-chat-model.ts";
export { OpenAIModel } from "./openai-model.ts";
export { toResponsesInput } from "./openai-responses-model.ts";
export { ResponsesStreamAssembler, type ResponsesEvent } from "./responses-stream-assembler.ts";

/**
 * The demo model answers when neither a key nor a base URL is configured. What the provider says
 * in its errors, and whatever the client logs, reaches the log only through `redactor`.
 */
export function createModel(config: Config, redactor: Redactor): Model {
  if (!config.OPENAI_API_KEY && !config.OPENAI_BASE_URL) return new DemoModel({ delayMs: config.DEMO_DELAY_MS });
  const log = (message: string) => console.warn(redactor.text(message));
  const client = new OpenAI({
    logger: redactingLogger(redactor),
    apiKey: config.OPENAI_API_KEY ?? "not-needed",
    ...(config.OPENAI_BASE_URL ? { baseURL: config.OPENAI_BASE_URL } : {}),
    // Retries 429, 5xx and connection failures before the first byte, with backoff, jitter and Retry-After.
    maxRetries: config.OPENAI_MAX_RETRIES,
  });
  return new OpenAIModel(client, {
    idleTimeoutMs: config.OPENAI_IDLE_TIMEOUT_MS,
    log,
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
