import { type Duration, durationMs } from "./runtime/duration.ts";
import { HandoffError } from "./runtime/errors.ts";
import * as z from "zod";
import type { Limits } from "./runtime/limits.ts";
import type { NetworkOptions } from "./runtime/network.ts";
import { Redactor } from "./runtime/redact.ts";

/** The Worker's configuration, read from its environment and validated once per use. */
const Budget = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: "custom", message: "must be JSON" });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .strictObject({
        modelCalls: z.number().int().min(1),
        inputTokens: z.number().int().min(1),
        outputTokens: z.number().int().min(1),
        toolCalls: z.number().int().min(0),
      })
      .partial(),
  );

/** A key a client presents as `Authorization: Bearer <key>`: one with a space in it could never be presented. */
const bearerKey = (name: string) =>
  z
    .string()
    .min(16, `${name} must be at least 16 characters`)
    .regex(/^\S+$/, `${name} cannot contain spaces: clients send it as "Authorization: Bearer <${name}>"`);

/** Every variable the Worker reads, with its default and what it accepts: the one list (docs/configuration.md is tested against it). */
export const ConfigSchema = z.object({
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: z.url().optional(),
  OPENAI_MODEL: z.string().min(1).optional(),
  /** Retries after the first attempt: 2 means 3 attempts in all. */
  OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  OPENAI_API: z.enum(["chat", "responses"]).optional(),
  OPENAI_TEMPERATURE: z.coerce.number().min(0).max(2).optional(),
  OPENAI_REASONING_EFFORT: z.enum(["minimal", "low", "medium", "high"]).optional(),
  OPENAI_MAX_OUTPUT_TOKENS: z.coerce.number().int().min(1).optional(),
  OPENAI_PARALLEL_TOOL_CALLS: z
    .enum(["true", "false"])
    .transform((value) => value === "true")
    .optional(),
  /** Tokens (input and output) a signed-in user may spend per UTC day across all their conversations; unset for no limit. */
  USER_DAILY_TOKENS: z.coerce.number().int().min(1).optional(),
  /**
   * How long a tool call waits for approval before it is declined with reason `expired` (`90s`, `30m`, `24h`, `7d`); unset: as long as it
   * takes. A tool's or agent's own wins.
   */
  APPROVAL_EXPIRES_IN: z
    .string()
    .regex(/^\d+(\.\d+)?[smhd]$/, "APPROVAL_EXPIRES_IN is a duration such as 90s, 30m, 24h or 7d.")
    .optional(),
  /**
   * Where the app is told that a user is needed (an approval waits or expired, a person answered or did not, a follow-up was answered): a
   * signed JSON POST.
   */
  NOTIFY_URL: z.url().optional(),
  /** Signs those notifications (HMAC-SHA256, `x-handoff-signature`); a secret. */
  NOTIFY_SECRET: z.string().min(16, "NOTIFY_SECRET must be at least 16 characters").optional(),
  /**
   * The model that titles a signed-in user's conversations after their first turn (default: the agents' model); `off` titles them by their
   * first message.
   */
  TITLE_MODEL: z.string().min(1).optional(),
  OPENAI_IDLE_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
  MAX_STEPS: z.coerce.number().int().min(1).max(100).optional(),
  MAX_HANDOFFS_PER_TURN: z.coerce.number().int().min(0).max(100).optional(),
  /** Master key for /v1/*; without it the API answers 503 unless ALLOW_ANONYMOUS is "true". */
  API_KEY: bearerKey("API_KEY").optional(),
  /** Opens the operator API (people answering conversations handed to them); the API key opens it too. */
  OPERATOR_KEY: bearerKey("OPERATOR_KEY").optional(),
  /** Signed-in users: the identity provider's keys (a JWKS URL, http allowed for local providers), or a shared HS256 secret. */
  AUTH_JWKS_URL: z.url().optional(),
  AUTH_JWT_SECRET: z.string().min(32, "AUTH_JWT_SECRET must be at least 32 characters (its UTF-8 bytes are the HS256 key)").optional(),
  /** The `iss` and `aud` a user's token must carry, when set. */
  AUTH_ISSUER: z.string().min(1).optional(),
  AUTH_AUDIENCE: z.string().min(1).optional(),
  /** The claims that hold the user's id, display name and roles (a string or an array). */
  AUTH_USER_CLAIM: z.string().min(1).default("sub"),
  AUTH_NAME_CLAIM: z.string().min(1).default("name"),
  AUTH_ROLES_CLAIM: z.string().min(1).default("roles"),
  /** The role that opens the operator API to a signed-in user. */
  AUTH_OPERATOR_ROLE: z.string().min(1).default("operator"),
  /**
   * The algorithms a user's token may be signed with, pinned here, never taken from the token: RS256,ES256 with a JWKS, HS256 with a secret
   * by default.
   */
  AUTH_ALGORITHMS: z
    .string()
    .optional()
    .transform((value) =>
      value
        ?.split(",")
        .map((a) => a.trim())
        .filter(Boolean),
    ),
  /** Signs conversation tokens; API_KEY signs them when it is not set. */
  SESSION_SECRET: z.string().min(16, "SESSION_SECRET must be at least 16 characters").optional(),
  ALLOW_ANONYMOUS: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
  /** `true` (with ALLOW_ANONYMOUS and no identity provider): the development sign-in, for local runs only. */
  DEV_SIGN_IN: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
  /** `true`: with no provider configured, the offline model (not a real model) answers, for local runs. */
  OFFLINE_MODEL: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
  /** Comma-separated origins allowed by CORS; none by default. */
  ALLOWED_ORIGINS: z
    .string()
    .default("")
    .transform((value) =>
      value
        .split(",")
        .map((o) => o.trim())
        .filter(Boolean),
    ),
  MAX_MESSAGE_CHARS: z.coerce.number().int().min(1).max(60_000).default(8_000),
  /** The largest file a message may carry, in bytes (10 MB). */
  FILE_MAX_BYTES: z.coerce.number().int().min(1).max(100_000_000).default(10_485_760),
  /**
   * How long an upload no message has sent is kept before the sweep lets it go (`90s`, `30m`, `1h`): at least 10 seconds, the
   * time a client takes from its upload to its message.
   */
  FILE_ORPHAN_AFTER: z
    .string()
    .regex(/^\d+(\.\d+)?[smhd]$/, "FILE_ORPHAN_AFTER is a duration such as 90s, 30m or 1h.")
    .default("1h")
    .transform((value) => durationMs(value as Duration, "FILE_ORPHAN_AFTER"))
    .refine((ms) => ms >= 10_000, "FILE_ORPHAN_AFTER is at least 10s: a client needs that long from its upload to its message."),
  /**
   * How images reach the model: `inline` (their bytes in every request, as data URLs) or `url` (a link to the file route,
   * signed and open 15 minutes, which the provider fetches: PUBLIC_URL must say where the Worker is, and the provider must
   * reach it). PDFs and text are sent inline either way.
   */
  FILES_SENT_AS: z.enum(["inline", "url"]).default("inline"),
  /** The Worker's public origin (https://chat.example.com): where a provider fetches images sent as links. */
  PUBLIC_URL: z.url().optional(),
  /** Files one message may carry. */
  FILES_PER_MESSAGE: z.coerce.number().int().min(1).max(100).default(10),
  /** Bytes of files one conversation may hold, all together (100 MB). */
  CONVERSATION_FILES_MAX_BYTES: z.coerce.number().int().min(1).max(10_000_000_000).default(104_857_600),
  /** Spending limits, as JSON: {"modelCalls":20,"inputTokens":200000,"outputTokens":20000,"toolCalls":50}. */
  TURN_BUDGET: Budget.optional(),
  CONVERSATION_BUDGET: Budget.optional(),
  /** Token budget of a model request; over it, older turns are summarized. */
  CONTEXT_BUDGET: z.coerce.number().int().min(500).optional(),
  COMPACTION_KEEP_TURNS: z.coerce.number().int().min(1).max(100).default(4),
  /** The latest images of the history sent in full with each model request (older ones named in words); unset: all of them. */
  IMAGES_SENT: z.coerce.number().int().min(0).max(1000).optional(),
  /** An OTLP/HTTP collector: each turn's trace is sent to <endpoint>/v1/traces as JSON. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  /** Headers for the collector (`name=value,name=value`): a secret. */
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  /** "true": exported spans carry the messages, tool arguments and results (never the stored traces). */
  OTEL_CAPTURE_CONTENT: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
  /** Turns whose trace a conversation keeps (the latest ones); 0 keeps none. */
  TRACE_TURNS: z.coerce.number().int().min(0).max(1000).default(50),
  /**
   * `on`: new turns per client are limited by the CLIENT_LIMITER rate-limiting binding, and a Worker that binds none refuses them
   * (fail closed); `off`: a rule in front of the Worker limits clients, and no binding is needed.
   */
  CLIENT_LIMIT: z.enum(["on", "off"]).default("on"),
  /** `off`: no A2A interface (no public agent card, no /v1/a2a); `on` by default. */
  A2A: z.enum(["on", "off"]).default("on"),
  /** `true`: A2A push URLs may be http and loopback or private addresses (development only); https to public hosts otherwise. */
  A2A_PUSH_ALLOW_PRIVATE: z
    .enum(["true", "false"])
    .default("false")
    .transform((value) => value === "true"),
  /** Characters one memory may hold; a longer one is refused (`memory_limit`). */
  MEMORY_MAX_CHARS: z.coerce.number().int().min(20).max(4_000).default(500),
  /** Memories one signed-in user may keep (those superseded not counted); past it, new ones are refused (`memory_limit`). */
  MEMORY_MAX_PER_USER: z.coerce.number().int().min(1).max(100_000).default(500),
  /** How long a conversation is quiet before what it said is read for memories (`off`: never by idleness). */
  MEMORY_IDLE_AFTER: z
    .string()
    .regex(/^(off|\d+(\.\d+)?[smhd])$/, "MEMORY_IDLE_AFTER is a duration such as 90s, 10m or 1h, or off.")
    .default("10m"),
  /** The model that reads conversations for memories (the agents' model by default); `off` for no extraction. */
  MEMORY_MODEL: z.string().min(1).optional(),
  /** Tokens of memories given to an agent at a turn's start (about four characters each). */
  MEMORY_RECALL_TOKENS: z.coerce.number().int().min(0).max(8_000).default(300),
  /** New turns per conversation per minute. */
  TURNS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(30),
});

export type Config = z.infer<typeof ConfigSchema>;

/** What the configuration sets for runs, in one place: the network's budgets, compaction and model, the loop's limits. */
export interface RunSettings {
  network: Pick<NetworkOptions, "defaultModel" | "budgets" | "compaction" | "approvalExpiresIn" | "imagesSent">;
  limits: Partial<Limits>;
}

export function runSettings(config: Config): RunSettings {
  const budgets = {
    ...(config.TURN_BUDGET ? { perTurn: config.TURN_BUDGET } : {}),
    ...(config.CONVERSATION_BUDGET ? { perConversation: config.CONVERSATION_BUDGET } : {}),
  };
  return {
    network: {
      ...(config.OPENAI_MODEL ? { defaultModel: config.OPENAI_MODEL } : {}),
      ...(Object.keys(budgets).length ? { budgets } : {}),
      compaction: { keepTurns: config.COMPACTION_KEEP_TURNS, ...(config.CONTEXT_BUDGET ? { contextBudget: config.CONTEXT_BUDGET } : {}) },
      ...(config.APPROVAL_EXPIRES_IN ? { approvalExpiresIn: config.APPROVAL_EXPIRES_IN as Duration } : {}),
      ...(config.IMAGES_SENT !== undefined ? { imagesSent: config.IMAGES_SENT } : {}),
    },
    limits: {
      ...(config.MAX_STEPS ? { maxSteps: config.MAX_STEPS } : {}),
      ...(config.MAX_HANDOFFS_PER_TURN !== undefined ? { maxHandoffsPerTurn: config.MAX_HANDOFFS_PER_TURN } : {}),
    },
  };
}

/** A variable of the Worker's environment is invalid: an operator's error, named in the message. */
export class ConfigError extends HandoffError<"invalid_configuration"> {
  override readonly name = "ConfigError";

  constructor(message: string) {
    super("invalid_configuration", message);
  }
}

const cache = new WeakMap<object, Config>();

/** Reads and validates the configuration; the result is kept per environment object. */
export function readConfig(env: object): Config {
  const cached = cache.get(env);
  if (cached) return cached;
  const strings = Object.fromEntries(
    Object.entries(env).filter(([key, value]) => key in ConfigSchema.shape && typeof value === "string" && value !== ""),
  );
  const parsed = ConfigSchema.safeParse(strings);
  if (!parsed.success) throw new ConfigError(`Invalid Worker configuration: ${z.prettifyError(parsed.error)}`);
  const links = parsed.data.FILES_SENT_AS === "url";
  if (links && !parsed.data.PUBLIC_URL)
    throw new ConfigError("Invalid Worker configuration: FILES_SENT_AS=url needs PUBLIC_URL, the Worker's public origin, for the links.");
  if (links && !parsed.data.SESSION_SECRET && !parsed.data.API_KEY)
    throw new ConfigError("Invalid Worker configuration: FILES_SENT_AS=url signs its links with SESSION_SECRET (or API_KEY): set one.");
  cache.set(env, parsed.data);
  return parsed.data;
}

/**
 * Variables whose values are secrets: the provider key, API_KEY, SESSION_SECRET, and any other
 * `*_KEY`, `*_SECRET`, `*_TOKEN`, `*_PASSWORD` or `*_HEADERS` a deploy sets for a provider or tool server.
 */
const SECRET_NAME = /(^|_)(KEY|SECRET|TOKEN|PASSWORD|HEADERS?|AUTHORIZATION|CREDENTIALS?)$/;

/** The configured secret values, and the header values inside a headers variable (JSON or `k=v,k=v`). */
export function secretValues(env: object): string[] {
  const values: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== "string" || !SECRET_NAME.test(name)) continue;
    values.push(value, ...headerValues(value));
  }
  return values.flatMap(secretForms);
}

/** A secret as it may appear: whole, and without an authorization scheme in front of it. */
export function secretForms(value: string): string[] {
  return [value, value.replace(/^(Bearer|Basic|Token)\s+/i, "")];
}

function headerValues(value: string): string[] {
  try {
    const parsed = JSON.parse(value) as unknown;
    if (parsed && typeof parsed === "object") return Object.values(parsed).filter((v): v is string => typeof v === "string");
  } catch {
    // Not JSON: the OpenTelemetry form, `name=value,name=value`.
  }
  if (!value.includes("=")) return [];
  return value.split(",").flatMap((pair) => {
    const raw = pair.slice(pair.indexOf("=") + 1).trim();
    if (!pair.includes("=")) return [];
    try {
      return [raw, decodeURIComponent(raw)];
    } catch {
      return [raw];
    }
  });
}

const redactors = new WeakMap<object, Redactor>();

/** The redactor of this environment's secrets, kept per environment object. */
export function redactorFor(env: object): Redactor {
  let redactor = redactors.get(env);
  if (!redactor) {
    redactor = new Redactor(secretValues(env));
    redactors.set(env, redactor);
  }
  return redactor;
}
