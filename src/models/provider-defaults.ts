import type OpenAI from "openai";
import type { ModelSettings } from "../runtime/ports/model-port.ts";
import type { ProviderLog } from "./model-errors.ts";

/** Model options from the Worker's environment; an agent's own modelSettings win. */
export interface ProviderDefaults extends ModelSettings {
  /** A stream that sends nothing for this long fails with model_timeout. */
  idleTimeoutMs: number;
  /** Where the provider's own error messages go (the operator's log); clients get a message of ours. */
  log?: ProviderLog;
  /** Passed to `fetch` with every request this model sends, retries included (the `openai` client's per-request `fetchOptions`). */
  fetchOptions?: OpenAI.RequestOptions["fetchOptions"];
}

/** A signal that aborts with the run's signal or on its own (idle timeout). */
export function linkedAbort(signal: AbortSignal): AbortController {
  const controller = new AbortController();
  if (signal.aborted) controller.abort(signal.reason);
  else signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
  return controller;
}
