/**
 * A signed-in user's memory, as a run reaches it: what outlives a conversation (a fact they told any agent, a preference,
 * an instruction), recalled into later turns by every agent that reads memory. The host backs it (a Durable Object per
 * user with full-text search, or Cloudflare's Agent Memory); an anonymous conversation has none.
 */
import * as z from "zod";

/** What a memory is about: a fact, a preference, an event, an instruction to agents, or a task still to do. */
export const MEMORY_TYPES = ["fact", "preference", "event", "instruction", "task"] as const;
/** A memory's kind (`MEMORY_TYPES`). */
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** Where a memory came from: the conversation, the agent that wrote it, and the message it was read from. */
export interface MemorySource {
  conversation: string;
  agent?: string | undefined;
  /** The index of the message in the conversation's history it was read from. */
  message?: number | undefined;
}

/** One thing remembered of a user. */
export interface Memory {
  id: string;
  text: string;
  type: MemoryType;
  /**
   * What it is about ("language", "home address"): a newer memory of the same key supersedes the older one ("moved to
   * Lyon" over "lives in Paris"), so only the newer is recalled.
   */
  key?: string | undefined;
  source: MemorySource;
  /** ISO 8601. */
  createdAt: string;
  /** The ids of the memories it superseded. */
  replaced?: string[] | undefined;
}

/** A memory to keep: `origin` makes writing it twice (a retried extraction) keep it once. */
export interface NewMemory {
  text: string;
  type: MemoryType;
  key?: string | undefined;
  source: MemorySource;
  origin?: string | undefined;
}

/** What a recall is bounded by: at most `limit` memories, whose words come to at most `maxTokens` (four characters each). */
export interface RecallOptions {
  limit?: number;
  maxTokens?: number;
}

/** One user's memory: what the run loop and tools read and write. */
export interface MemoryPort {
  /** The memories that fit `query` best, then the user's standing preferences and instructions, within the bounds. */
  recall(query: string, options?: RecallOptions): Promise<Memory[]>;
  /** Keeps a memory (superseding an older one of its key); refused past the configured limits (`memory_limit`). */
  remember(memory: NewMemory): Promise<Memory>;
}

/**
 * Whether an agent reads the user's memory (recalled into its instructions, `ctx.memory.recall`), writes it
 * (`ctx.memory.remember`, the `remember` tool), both or neither. A conversation's own agents read and write by default; a
 * delegated agent (`asTool`) and a remote agent get nothing unless they declare it.
 */
export type MemoryAccess = "read-write" | "read" | "write" | "none";

/** What a recall gives by default: a few memories, a few hundred tokens. */
export const RECALL_DEFAULTS = { limit: 8, maxTokens: 300 } as const;

/** A memory as it is stored and sent: every field checked. */
export const MemorySchema = z.strictObject({
  id: z.string(),
  text: z.string(),
  type: z.enum(MEMORY_TYPES),
  key: z.string().optional(),
  source: z.strictObject({ conversation: z.string(), agent: z.string().optional(), message: z.number().int().optional() }),
  createdAt: z.string(),
  replaced: z.array(z.string()).optional(),
});
