/**
 * One user's memory as the Worker and the conversations reach it, whatever backs it: this package's own Durable Object
 * (user-memory.ts) or Cloudflare's Agent Memory (agent-memory.ts). Its answers are values, since they cross an RPC.
 */
import type { Memory, MemoryType, NewMemory, RecallOptions } from "../runtime/ports/memory-port.ts";

/** The configured bounds of a user's memory. */
export interface MemoryLimits {
  /** Characters one memory may hold. */
  maxChars: number;
  /** Memories one user may keep (superseded ones not counted). */
  maxPerUser: number;
}

/** A refusal, with the code the HTTP API and tools answer with. */
export interface MemoryProblem {
  code: "memory_limit" | "memory_not_found" | "invalid_request";
  message: string;
}

/** A memory store's answer: the value, or the refusal (an RPC carries it as a value). */
export type MemoryResult<T> = { ok: true; value: T } | { ok: false; error: MemoryProblem };

/** A user's correction of a memory. */
export interface MemoryChange {
  text?: string | undefined;
  type?: MemoryType | undefined;
}

/** A message of a conversation, as a backend that extracts memories itself is given it (`ingest`). */
export interface IngestMessage {
  role: "user" | "assistant";
  content: string;
}

/** One user's memory, whichever backend keeps it (`UserMemory`, or Agent Memory through `AgentMemoryStore`). */
export interface UserMemoryStore {
  recall(query: string, options?: RecallOptions): Promise<Memory[]>;
  remember(memory: NewMemory, limits: MemoryLimits): Promise<MemoryResult<Memory>>;
  /** The memories the user has now (superseded ones left out), newest first; `q` searches their words. */
  list(options?: { q?: string | undefined; limit?: number | undefined }): Promise<Memory[]>;
  update(id: string, change: MemoryChange, limits: MemoryLimits): Promise<MemoryResult<Memory>>;
  /** Forgets one memory, with those it superseded. */
  forget(id: string): Promise<MemoryResult<{ forgotten: number }>>;
  /** Forgets everything: the next recall finds nothing. */
  forgetAll(): Promise<{ forgotten: number }>;
  /** Where the next read of a conversation for memories starts: the index after the last message read (0 before any). */
  readFrom(conversation: string): Promise<number>;
  /**
   * Keeps what a read of a conversation found and that it was read up to `upTo`, at once, so a read retried after a crash
   * stores nothing twice. Memories past the limits are left out (the rest are kept).
   */
  keepRead(conversation: string, upTo: number, found: readonly NewMemory[], limits: MemoryLimits): Promise<Memory[]>;
  /**
   * Present where the backend reads conversations for memories itself (Agent Memory's `ingest`): the conversation hands
   * it the new part instead of asking its own model. Idempotent for the same `session` and messages.
   */
  ingest?(messages: readonly IngestMessage[], session: string): Promise<void>;
}

/** Words of a memory as a recall counts them against its token budget (four characters a token, and the line's framing). */
export function memoryTokens(text: string): number {
  return Math.ceil(text.length / 4) + 4;
}
