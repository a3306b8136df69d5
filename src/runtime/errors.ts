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
  /** A file the history refers to is not in the host's file store (or the host stores no files). */
  | "file_not_found"
  /**
   * The user's memory cannot be used here: the conversation has no signed-in user, the agent did not declare it, or a
   * memory is past the configured limits (`memory_limit`).
   */
  | "memory_unavailable"
  | "memory_limit"
  | "internal_error";

/** An error as a plain value, the shape it has on every wire: a stable code, words that say what to fix, details where they help. */
export interface ErrorValue<C extends string = string> {
  code: C;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * The one error family of this project: the loop's failures (`RuntimeError`), the HTTP API's
 * (`HttpError`), the configuration's (`ConfigError`) and A2A's JSON-RPC ones (`RpcFailure`) are
 * each a `HandoffError` with a literal `code`, its `cause`, and the `details` a caller needs. Only
 * the edges map codes: src/http/errors.ts to HTTP statuses and to A2A's JSON-RPC codes.
 */
export class HandoffError<C extends string = string> extends Error {
  override readonly name: string = "HandoffError";
  readonly code: C;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: C, message: string, options?: { cause?: unknown; details?: Record<string, unknown> | undefined }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options?.details;
  }

  /** The error as a value: what crosses a Durable Object's RPC or goes into a body. */
  toValue(): ErrorValue<C> {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

/** A failure of the loop, with a stable `code` (an `error` event's code); model adapters throw it with a model_* code. */
export class RuntimeError extends HandoffError<RuntimeErrorCode> {
  override readonly name = "RuntimeError";
  /** The provider's HTTP status, when a model call failed with one. */
  readonly status: number | undefined;

  constructor(code: RuntimeErrorCode, message: string, options?: { cause?: unknown; status?: number }) {
    super(code, message, options?.cause === undefined ? undefined : { cause: options.cause });
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
