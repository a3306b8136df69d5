import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { errorMessage, RuntimeError } from "../runtime/errors.ts";

/** Where a provider's own words go: the operator's log, redacted there, never a client. */
export type ProviderLog = (message: string) => void;

/**
 * Maps a provider failure to a stable code and a message of this runtime's own, with the
 * provider's status and error code. The provider's body never reaches a client: it may echo the
 * key ("Incorrect API key provided: …") or carry a stack trace; it goes to `log` instead.
 */
export function toModelError(error: unknown, log?: ProviderLog): RuntimeError {
  if (error instanceof RuntimeError) return error;
  if (error instanceof APIUserAbortError) return new RuntimeError("run_aborted", "The model call was cancelled.", { cause: error });
  if (error instanceof APIConnectionTimeoutError) {
    return new RuntimeError("model_timeout", "The model provider did not answer in time.", { cause: error });
  }
  if (error instanceof APIConnectionError) {
    log?.(`model provider unreachable: ${error.message}`);
    return new RuntimeError("model_unavailable", "The model provider could not be reached.", { cause: error });
  }
  if (error instanceof APIError) {
    const status = error.status;
    const code = providerCode(error);
    log?.(`model provider error ${status ?? "in stream"}${code ? ` (${code})` : ""}: ${providerMessage(error)}`);
    const answered = `The model provider answered ${status}${code ? ` (${code})` : ""}`;
    if (status === 401 || status === 403)
      return new RuntimeError("model_auth_failed", `${answered}: it refused the credentials; check OPENAI_API_KEY.`, {
        cause: error,
        status,
      });
    if (status === 429)
      return new RuntimeError("model_rate_limited", `${answered}: it is rate limiting this Worker; try again shortly.`, {
        cause: error,
        status,
      });
    if (status !== undefined && status >= 500)
      return new RuntimeError("model_unavailable", `${answered}: it failed or is overloaded.`, { cause: error, status });
    if (status !== undefined)
      return new RuntimeError("model_bad_request", `${answered}: it refused the request.`, { cause: error, status });
    return new RuntimeError(
      "model_stream_interrupted",
      `The model provider reported an error inside the stream${code ? ` (${code})` : ""}.`,
      { cause: error },
    );
  }
  log?.(`model call failed: ${errorMessage(error)}`);
  return new RuntimeError("model_error", "The model call failed inside the adapter.", { cause: error });
}

/** The provider's machine-readable error code (`invalid_api_key`, `rate_limit_exceeded`), if it is one. */
export function providerCode(error: { code?: unknown; type?: unknown }): string | undefined {
  const code = typeof error.code === "string" ? error.code : typeof error.type === "string" ? error.type : undefined;
  return code && /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : undefined;
}

function providerMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  const message = typeof body?.message === "string" ? body.message : error.message;
  return message.slice(0, 500);
}
