/** Errors are values with a stable code; only the HTTP layer maps codes to statuses. */

export type RuntimeErrorCode =
  | "max_steps"
  | "too_many_tool_errors"
  | "model_error"
  | "model_rate_limited"
  | "model_unavailable"
  | "model_bad_request"
  | "model_auth_failed"
  | "model_stream_interrupted"
  | "model_timeout"
  | "model_not_configured"
  | "hook_failed"
  | "budget_exceeded"
  | "guardrail_blocked"
  | "run_aborted"
  /** A follow-up outside the host's bounds (too soon, too late, too many), or no schedule: a tool's error result. */
  | "schedule_refused"
  /** A remote agent's task failed or was rejected, or it was not reached: the conversation goes back to the agent that handed over. */
  | "remote_failed"
  /** A remote agent took longer than its `timeoutMs`. */
  | "remote_timeout"
  /** A remote agent answered what A2A does not say. */
  | "remote_invalid"
  | "internal_error";

/** A failure of the loop, with a stable `code` (an `error` event's code); model adapters throw it with a model_* code. */
export class RuntimeError extends Error {
  override readonly name = "RuntimeError";
  readonly code: RuntimeErrorCode;
  /** The provider's HTTP status, when a model call failed with one. */
  readonly status: number | undefined;

  constructor(code: RuntimeErrorCode, message: string, options?: { cause?: unknown; status?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options?.status;
  }
}

/** Turns anything thrown into a RuntimeError without leaking a stack to the caller. */
export function toRuntimeError(error: unknown): RuntimeError {
  if (error instanceof RuntimeError) return error;
  return new RuntimeError("internal_error", errorMessage(error), { cause: error });
}

/** The words of anything thrown: an Error's message, anything else as a string. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
