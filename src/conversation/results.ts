import type { ErrorValue } from "../runtime/errors.ts";

/** What the Durable Object answers over RPC: a value or an error with a stable code (no HTTP here). */
export type ConversationErrorCode =
  | "run_in_progress"
  | "conversation_not_found"
  | "request_pending"
  | "no_pending_request"
  | "request_not_found"
  | "request_already_decided"
  | "invalid_answer"
  | "answer_not_allowed"
  | "rate_limited"
  | "token_revoked"
  | "too_many_streams"
  | "event_id_unknown"
  | "nothing_to_retry"
  | "turn_not_found"
  | "not_held_by_person"
  | "unknown_agent"
  | "schedule_entry_not_found"
  | "invalid_request"
  | "message_too_long"
  | "user_budget_exhausted"
  | "invalid_configuration"
  | "too_many_files"
  | "invalid_file"
  | "file_too_large"
  | "unsupported_media_type"
  | "conversation_files_full"
  | "file_not_found"
  | "files_not_configured";

/**
 * A refusal of the conversation's: a value of the error family (`ErrorValue`, what a `HandoffError`
 * is on a wire), since it crosses the Durable Object's RPC; the HTTP edge throws it as an `HttpError`.
 */
export interface ConversationError extends ErrorValue<ConversationErrorCode> {
  details?: Record<string, string | number | string[]>;
}

/** What every method of the conversation's RPC surface answers: its value, or a refusal. */
export type ConversationResult<T> = { ok: true; value: T } | { ok: false; error: ConversationError };

export function ok<T>(value: T): ConversationResult<T> {
  return { ok: true, value };
}

export function fail<T>(code: ConversationErrorCode, message: string, details?: ConversationError["details"]): ConversationResult<T> {
  return { ok: false, error: details ? { code, message, details } : { code, message } };
}

/** @deprecated Renamed `ConversationResult` (docs/layout.md, "Words"); this alias goes in the next minor version. */
export type SessionResult<T> = ConversationResult<T>;
/** @deprecated Renamed `ConversationError`; this alias goes in the next minor version. */
export type SessionError = ConversationError;
/** @deprecated Renamed `ConversationErrorCode`; this alias goes in the next minor version. */
export type SessionErrorCode = ConversationErrorCode;
