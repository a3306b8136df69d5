/** The Worker's variables and secrets (wrangler.toml, secrets, `--var`): what the configuration reads. */
export interface WorkerVars {
  API_KEY?: string;
  OPERATOR_KEY?: string;
  SESSION_SECRET?: string;
  ALLOW_ANONYMOUS?: string;
  /** `true` (with ALLOW_ANONYMOUS and no identity provider): the development sign-in of local runs. */
  DEV_SIGN_IN?: string;
  /** `true`: with no provider configured, the offline model (not a real model) answers turns, for local runs. */
  OFFLINE_MODEL?: string;
  ALLOWED_ORIGINS?: string;
  MAX_MESSAGE_CHARS?: string;
  FILE_MAX_BYTES?: string;
  FILES_PER_MESSAGE?: string;
  FILE_ORPHAN_AFTER?: string;
  FILES_SENT_AS?: string;
  PUBLIC_URL?: string;
  CONVERSATION_FILES_MAX_BYTES?: string;
  TURN_BUDGET?: string;
  CONVERSATION_BUDGET?: string;
  CONTEXT_BUDGET?: string;
  COMPACTION_KEEP_TURNS?: string;
  IMAGES_SENT?: string;
  TURNS_PER_MINUTE?: string;
  MEMORY_MAX_CHARS?: string;
  MEMORY_MAX_PER_USER?: string;
  MEMORY_IDLE_AFTER?: string;
  MEMORY_MODEL?: string;
  MEMORY_RECALL_TOKENS?: string;
  /** `off`: no A2A interface (no public agent card, no /v1/a2a). */
  A2A?: string;
  /** `true`: A2A push URLs may be http and private or loopback addresses (development only). */
  A2A_PUSH_ALLOW_PRIVATE?: string;
  /** `off` when a rule in front of the Worker limits clients: then no CLIENT_LIMITER binding is needed. */
  CLIENT_LIMIT?: string;
  TRACE_TURNS?: string;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_HEADERS?: string;
  OTEL_CAPTURE_CONTENT?: string;
  OPENAI_API_KEY?: string;
  OPENAI_BASE_URL?: string;
  OPENAI_MODEL?: string;
  OPENAI_MAX_RETRIES?: string;
  OPENAI_API?: string;
  OPENAI_TEMPERATURE?: string;
  OPENAI_REASONING_EFFORT?: string;
  OPENAI_MAX_OUTPUT_TOKENS?: string;
  OPENAI_PARALLEL_TOOL_CALLS?: string;
  OPENAI_IDLE_TIMEOUT_MS?: string;
  MAX_STEPS?: string;
  MAX_HANDOFFS_PER_TURN?: string;
  /** Tokens a signed-in user may spend per UTC day across their conversations (`USER_DAILY_TOKENS`); unset for no limit. */
  USER_DAILY_TOKENS?: string;
  /** How long a call waits for approval before it is declined `expired` (`90s`, `30m`, `24h`, `7d`). */
  APPROVAL_EXPIRES_IN?: string;
  /** Where the app is told that a user is needed (a signed JSON POST), and the secret that signs it. */
  NOTIFY_URL?: string;
  NOTIFY_SECRET?: string;
  /** The model that titles a signed-in user's conversations after their first turn; `off` titles them by their first message. */
  TITLE_MODEL?: string;
  /** Signed-in users: the identity provider's keys (a JWKS URL), or a shared HS256 secret. */
  AUTH_JWKS_URL?: string;
  AUTH_JWT_SECRET?: string;
  /** The `iss` and `aud` a user's token must carry, when set. */
  AUTH_ISSUER?: string;
  AUTH_AUDIENCE?: string;
  /** The algorithms a user's token may be signed with (comma-separated), pinned here. */
  AUTH_ALGORITHMS?: string;
  /** The claims that hold the user's id, display name and roles. */
  AUTH_USER_CLAIM?: string;
  AUTH_NAME_CLAIM?: string;
  AUTH_ROLES_CLAIM?: string;
  /** The role that opens the operator API to a signed-in user. */
  AUTH_OPERATOR_ROLE?: string;
}
