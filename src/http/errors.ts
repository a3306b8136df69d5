import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { redactorFor } from "../config.ts";
import { HandoffError } from "../runtime/errors.ts";

/** Every error code the HTTP API answers with, and its status: the one place codes meet statuses. */
export const HTTP_ERROR_STATUS = {
  bad_json: 400,
  invalid_request: 400,
  invalid_conversation_id: 400,
  unauthorized: 401,
  token_revoked: 401,
  forbidden: 403,
  not_found: 404,
  protocol_not_enabled: 404,
  conversation_not_found: 404,
  method_not_allowed: 405,
  run_in_progress: 409,
  request_pending: 409,
  no_pending_request: 409,
  request_already_decided: 409,
  invalid_answer: 400,
  answer_not_allowed: 403,
  event_id_unknown: 409,
  nothing_to_retry: 409,
  request_not_found: 404,
  turn_not_found: 404,
  schedule_entry_not_found: 404,
  not_held_by_person: 409,
  unknown_agent: 400,
  payload_too_large: 413,
  message_too_long: 413,
  unsupported_media_type: 415,
  file_too_large: 413,
  conversation_files_full: 413,
  too_many_files: 400,
  invalid_file: 400,
  file_not_found: 404,
  files_not_configured: 503,
  upgrade_required: 426,
  rate_limited: 429,
  user_budget_exhausted: 429,
  too_many_streams: 429,
  internal_error: 500,
  invalid_configuration: 500,
  auth_not_configured: 503,
  auth_unavailable: 503,
  operator_desk_not_configured: 503,
  inbox_not_configured: 503,
  memory_not_found: 404,
  memory_limit: 413,
  memory_not_configured: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

/** Every error code the HTTP API answers with; each has one status. */
export type HttpErrorCode = keyof typeof HTTP_ERROR_STATUS;

/**
 * Codes renamed for requests of every kind (they said "approval" of a question too), and what they were called: a body
 * with one of them says the old name in `alias` too, for clients that read it, until the next minor version.
 */
export const ERROR_CODE_ALIASES: Partial<Record<HttpErrorCode, string>> = {
  request_pending: "approval_pending",
  no_pending_request: "no_pending_approval",
  request_already_decided: "approval_already_decided",
  request_not_found: "approval_not_found",
};

/** The body of every error response: a machine-readable code, a message that says what to fix, details where they help. */
export interface ErrorBody {
  /** `alias`: the code's former name, for a renamed code (`ERROR_CODE_ALIASES`). */
  error: { code: string; alias?: string; message: string; details?: Record<string, unknown> };
}

/** How a protocol's paths say the API's errors (A2A: a JSON-RPC error); undefined: as the API says them. */
export type ErrorShape = (error: ErrorBody["error"] & { code: HttpErrorCode }) => Record<string, unknown> | undefined;

/**
 * The shape of the error bodies of a request on a protocol's paths, set by the app as the request comes in: every way an
 * error is answered (the body limit, access, a route, `onError`) reads it from the request it answers.
 */
const errorShapes = new WeakMap<Request, ErrorShape>();

/** Errors answered to `request` are shaped by `shape`. */
export function shapeErrors(request: Request, shape: ErrorShape): void {
  errorShapes.set(request, shape);
}

/**
 * An error body; its message and details are redacted of the configured secrets, like everything sent. On a protocol's
 * paths it is in the protocol's shape (`Protocol.errorBody`).
 */
export function errorResponse(c: Context, code: HttpErrorCode, message: string, details?: Record<string, unknown>): Response {
  const redactor = redactorFor((c.env as object | undefined) ?? {});
  const alias = ERROR_CODE_ALIASES[code];
  const error = { code, ...(alias ? { alias } : {}), message, ...(details ? { details } : {}) };
  const shape = errorShapes.get(c.req.raw);
  const res = c.json(redactor.value(shape?.(error) ?? { error }), HTTP_ERROR_STATUS[code]);
  if (typeof details?.retryAfter === "number") res.headers.set("retry-after", String(details.retryAfter));
  return res;
}

/**
 * An HTTP error thrown from a route or middleware; the app's `onError` answers it with
 * `errorResponse`, so a handler states the failure and returns only its success.
 */
export class HttpError extends HandoffError<HttpErrorCode> {
  override readonly name = "HttpError";

  constructor(code: HttpErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, { details });
  }
}

/** The response for an HttpError: a revoked token also says so in WWW-Authenticate. */
export function httpErrorResponse(c: Context, error: HttpError): Response {
  const res = errorResponse(c, error.code, error.message, error.details);
  if (error.code === "token_revoked") res.headers.set("www-authenticate", bearerChallenge(c, error.message));
  return res;
}

/**
 * The `WWW-Authenticate` challenge of RFC 6750 §3: bare when no credential was sent; with
 * `error="invalid_token"` and an `error_description` when the one sent is not good (redacted like
 * every body, and kept to what a quoted header string may hold).
 */
export function bearerChallenge(c: Context, invalid?: string): string {
  if (invalid === undefined) return 'Bearer realm="handoff-runtime"';
  const redacted = redactorFor((c.env as object | undefined) ?? {}).text(invalid);
  const description = redacted.replaceAll(/["\\]/g, "'").replaceAll(/[^\x20-\x7e]/g, "?");
  return `Bearer realm="handoff-runtime", error="invalid_token", error_description="${description}"`;
}
