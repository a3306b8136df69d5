import type { Conversation } from "./conversation/conversation.ts";
import type { Inbox } from "./inbox/inbox.ts";
import type { OperatorDesk } from "./desk/operator-desk.ts";
import type { UserMemory } from "./memory/user-memory.ts";
import type { AgentMemoryNamespace } from "./memory/agent-memory.ts";
import type { WorkerVars } from "./worker-vars.ts";

/** The Worker's bindings, with its variables and secrets. */
export interface Env extends WorkerVars {
  CONVERSATIONS: DurableObjectNamespace<Conversation>;
  /** The chat page and its scripts (static assets). */
  ASSETS?: Fetcher;
  /** The operator desk: conversations people hold or should take (a network with `humanAgent`s needs it). */
  OPERATOR_DESK?: DurableObjectNamespace<OperatorDesk>;
  /** Signed-in users' inboxes: one Durable Object per user (class Inbox), named by a hash of the user's id. */
  INBOXES?: DurableObjectNamespace<Inbox>;
  /** Signed-in users' memories: one Durable Object per user (class UserMemory), named by a hash of the user's id. */
  MEMORIES?: DurableObjectNamespace<UserMemory>;
  /** Cloudflare's Agent Memory (`[[agent_memory]] binding = "AGENT_MEMORY"`): when bound, users' memories live there instead. */
  AGENT_MEMORY?: AgentMemoryNamespace;
  /** R2: the bytes of the conversations' files (the conversation keeps only references); without it, files are refused. */
  FILES?: R2Bucket;
  /** The Workers rate-limiting binding: new turns per client. */
  CLIENT_LIMITER?: { limit(options: { key: string }): Promise<{ success: boolean }> };
}
