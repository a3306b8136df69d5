/** The Worker's variables and secrets (wrangler.toml, secrets, `--var`): what the configuration reads. */
export interface WorkerVars {
  API_KEY?: string;
  OPERATOR_KEY?: string;
  SESSION_SECRET?: string;
  ALLOW_ANONYMOUS?: string;
  ALLOWED_ORIGINS?: string;
  MAX_MESSAGE_CHARS?: string;
  TURN_BUDGET?: string;
  CONVERSATION_BUDGET?: string;
  CONTEXT_BUDGET?: string;
  COMPACTION_KEEP_TURNS?: string;
  TURNS_PER_MINUTE?: string;
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
}
