import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { RuntimeError } from "../runtime/index.ts";

/** Maps a provider failure to a stable code; the message carries the provider's status, never a key. */
export function toModelError(error: unknown): RuntimeError {
  if (error instanceof RuntimeError) return error;
  if (error instanceof APIUserAbortError) return new RuntimeError("run_aborted", "The model call was cancelled.", { cause: error });
  if (error instanceof APIConnectionTimeoutError) {
    return new RuntimeError("model_timeout", "The model provider did not answer in time.", { cause: error });
  }
  if (error instanceof APIConnectionError) {
    return new RuntimeError("model_unavailable", "The model provider could not be reached.", { cause: error });
  }
  if (error instanceof APIError) {
    const status = error.status;
    const detail = `The model provider answered ${status ?? "an error"}: ${providerMessage(error)}`;
    if (status === 401 || status === 403) return new RuntimeError("model_auth_failed", detail, { cause: error, status });
    if (status === 429) return new RuntimeError("model_rate_limited", detail, { cause: error, status });
    if (status !== undefined && status >= 500) return new RuntimeError("model_unavailable", detail, { cause: error, status });
    if (status !== undefined) return new RuntimeError("model_bad_request", detail, { cause: error, status });
    return new RuntimeError("model_stream_interrupted", `The model stream failed: ${providerMessage(error)}`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new RuntimeError("model_error", `The model call failed: ${message}`, { cause: error });
}

function providerMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  const message = typeof body?.message === "string" ? body.message : error.message;
  // Providers echo a rejected key now and then ("Incorrect API key provided: sk-..."): never pass it on.
  return message.replace(/\b(sk|key|Bearer)[-_A-Za-z0-9]{8,}/g, "[redacted]").slice(0, 500);
}
