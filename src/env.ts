import type { Conversation } from "./session/conversation.ts";
import type { WorkerVars } from "./worker-vars.ts";

/** The Worker's bindings, with its variables and secrets. */
export interface Env extends WorkerVars {
  CONVERSATIONS: DurableObjectNamespace<Conversation>;
  /** The chat page and its scripts (static assets). */
  ASSETS?: Fetcher;
  /** The Workers rate-limiting binding: new turns per client. */
  CLIENT_LIMITER?: { limit(options: { key: string }): Promise<{ success: boolean }> };
}
