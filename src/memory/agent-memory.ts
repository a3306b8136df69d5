/**
 * A user's memory kept by Cloudflare's Agent Memory (an `agent_memory` binding named AGENT_MEMORY), written against its
 * documented Workers API: a profile per user (named by a hash of their id), `remember`, `recall`, `list`, `get`,
 * `delete`, `ingest`, `deleteProfile`. The service extracts memories from conversations itself (`ingest`), classifies
 * and summarizes what it keeps; it has no keys, so a newer memory does not supersede an older one here.
 */
import type { Memory, MemoryType, NewMemory, RecallOptions } from "../runtime/ports/memory-port.ts";
import { RECALL_DEFAULTS } from "../runtime/ports/memory-port.ts";
import type { IngestMessage, MemoryChange, MemoryLimits, MemoryResult, UserMemoryStore } from "./memory-store.ts";
import { memoryTokens } from "./memory-store.ts";

/** A memory as the service gives it. */
export interface AgentMemoryMemory {
  id: string;
  type: "fact" | "event" | "instruction" | "task";
  summary: string;
  content: string;
  sessionId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A profile of the service: one user's memory there (the methods this adapter calls). */
export interface AgentMemoryProfile {
  ingest(
    messages: Iterable<{ role: "system" | "user" | "assistant"; content: string }>,
    options?: { sessionId?: string | null },
  ): Promise<void>;
  remember(memory: { content: string; sessionId?: string | null }): Promise<AgentMemoryMemory>;
  recall(
    query: string,
    options?: { thinkingLevel?: "low" | "medium" | "high" },
  ): Promise<{
    count: number;
    answer: string;
    candidates: Array<{ id: string; summary: string; sessionId: string | null; score: number }>;
  }>;
  list(options?: { limit?: number; cursor?: string }): Promise<{ memories: Array<Omit<AgentMemoryMemory, "content">>; cursor?: string }>;
  get(memoryId: string): Promise<AgentMemoryMemory>;
  delete(memoryId: string): Promise<AgentMemoryMemory>;
}

/** The binding (`[[agent_memory]] binding = "AGENT_MEMORY"`). */
export interface AgentMemoryNamespace {
  getProfile(profileName: string): Promise<AgentMemoryProfile>;
  deleteProfile(profileName: string): Promise<void>;
}

/** The service's limits this adapter holds to: its session ids and query sizes. */
const SESSION_CHARS = 64;
const QUERY_BYTES = 1024;

/** A user's memory kept in their Agent Memory profile, as the routes, tools and recalls reach it. */
export class AgentMemoryStore implements UserMemoryStore {
  readonly #namespace: AgentMemoryNamespace;
  readonly #profile: string;

  constructor(namespace: AgentMemoryNamespace, profile: string) {
    this.#namespace = namespace;
    this.#profile = profile;
  }

  async recall(query: string, options: RecallOptions = {}): Promise<Memory[]> {
    const words = query.trim();
    if (!words) return [];
    const found = await (await this.#get()).recall(cutToBytes(words, QUERY_BYTES));
    const limit = options.limit ?? RECALL_DEFAULTS.limit;
    let budget = options.maxTokens ?? RECALL_DEFAULTS.maxTokens;
    const memories: Memory[] = [];
    for (const candidate of [...found.candidates].sort((a, b) => b.score - a.score)) {
      if (memories.length >= limit || memoryTokens(candidate.summary) > budget) continue;
      budget -= memoryTokens(candidate.summary);
      const source = { conversation: candidate.sessionId ?? "" };
      memories.push({ id: candidate.id, text: candidate.summary, type: "fact", source, createdAt: "" });
    }
    return memories;
  }

  async remember(memory: NewMemory, limits: MemoryLimits): Promise<MemoryResult<Memory>> {
    const text = memory.text.trim();
    if (!text || text.length > limits.maxChars)
      return {
        ok: false,
        error: { code: "memory_limit", message: `A memory holds 1 to ${limits.maxChars} characters (MEMORY_MAX_CHARS).` },
      };
    const kept = await (await this.#get()).remember({ content: text, sessionId: memory.source.conversation.slice(0, SESSION_CHARS) });
    return { ok: true, value: memoryOf(kept, memory.type) };
  }

  /** The service reads whole conversations (`ingest`, idempotent): it keeps no place of its own here. */
  async readFrom(): Promise<number> {
    return 0;
  }

  async keepRead(_conversation: string, _upTo: number, found: readonly NewMemory[], limits: MemoryLimits): Promise<Memory[]> {
    const kept: Memory[] = [];
    for (const memory of found) {
      const written = await this.remember(memory, limits);
      if (written.ok) kept.push(written.value);
    }
    return kept;
  }

  async list(options: { q?: string | undefined; limit?: number | undefined } = {}): Promise<Memory[]> {
    if (options.q?.trim()) return this.recall(options.q, { limit: options.limit ?? 200, maxTokens: Number.MAX_SAFE_INTEGER });
    const listed = await (await this.#get()).list({ limit: Math.min(options.limit ?? 200, 500) });
    return listed.memories.map((m) => memoryOf({ ...m, content: m.summary }));
  }

  /** The service changes no memory in place: the correction is kept, the old one deleted. */
  async update(id: string, change: MemoryChange, limits: MemoryLimits): Promise<MemoryResult<Memory>> {
    const profile = await this.#get();
    const old = await found(() => profile.get(id));
    if (!old) return notFound(id);
    const kept = await this.remember(
      { text: change.text ?? old.summary, type: change.type ?? old.type, source: { conversation: old.sessionId ?? "" } },
      limits,
    );
    if (kept.ok) await profile.delete(id);
    return kept;
  }

  async forget(id: string): Promise<MemoryResult<{ forgotten: number }>> {
    const profile = await this.#get();
    return (await found(() => profile.delete(id))) ? { ok: true, value: { forgotten: 1 } } : notFound(id);
  }

  async forgetAll(): Promise<{ forgotten: number }> {
    const listed = await (await this.#get()).list({ limit: 500 });
    await this.#namespace.deleteProfile(this.#profile);
    return { forgotten: listed.memories.length };
  }

  async ingest(messages: readonly IngestMessage[], session: string): Promise<void> {
    if (messages.length === 0) return;
    await (await this.#get()).ingest(messages, { sessionId: session.slice(0, SESSION_CHARS) });
  }

  #get(): Promise<AgentMemoryProfile> {
    return this.#namespace.getProfile(this.#profile);
  }
}

function memoryOf(kept: AgentMemoryMemory, asked?: MemoryType): Memory {
  const created = kept.createdAt instanceof Date ? kept.createdAt.toISOString() : String(kept.createdAt);
  return {
    id: kept.id,
    text: kept.summary || kept.content,
    // The service has no "preference": it keeps one as a fact or an instruction; what was asked for is what is shown.
    type: asked ?? kept.type,
    source: { conversation: kept.sessionId ?? "" },
    createdAt: created,
  };
}

/** What `run` answers, or undefined where the service throws because the memory does not exist. */
async function found<T>(run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch {
    return undefined;
  }
}

function notFound(id: string): MemoryResult<never> {
  return { ok: false, error: { code: "memory_not_found", message: `No memory '${id}'.` } };
}

function cutToBytes(text: string, max: number): string {
  const bytes = new TextEncoder().encode(text);
  return bytes.length <= max ? text : new TextDecoder().decode(bytes.slice(0, max)).replace(/\uFFFD$/, "");
}
