/**
 * A signed-in user's memory in a Durable Object of its own (SQLite with FTS5), one per user, named by a hash of the user's
 * id as their inbox is: what their conversations recall and write, and what they see, correct and erase at
 * /v1/me/memory. No one but the user and their own conversations reaches it.
 */
import { DurableObject } from "cloudflare:workers";
import { userObjectName } from "../user-object-name.ts";
import type { Memory, NewMemory, RecallOptions } from "../runtime/ports/memory-port.ts";
import type { MemoryChange, MemoryLimits, MemoryResult, UserMemoryStore } from "./memory-store.ts";
import { MemoryTable } from "./memory-table.ts";

/** A signed-in user's memory, one object per user (bind it as `MEMORIES`). */
export class UserMemory extends DurableObject<Record<string, unknown>> implements UserMemoryStore {
  readonly #table: MemoryTable;

  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
    this.#table = new MemoryTable(ctx.storage);
  }

  async recall(query: string, options?: RecallOptions): Promise<Memory[]> {
    return this.#table.recall(query, options);
  }

  async remember(memory: NewMemory, limits: MemoryLimits): Promise<MemoryResult<Memory>> {
    return this.#table.remember(memory, limits);
  }

  async readFrom(conversation: string): Promise<number> {
    return this.#table.readFrom(conversation);
  }

  async keepRead(conversation: string, upTo: number, found: readonly NewMemory[], limits: MemoryLimits): Promise<Memory[]> {
    return this.#table.keepRead(conversation, upTo, found, limits);
  }

  async list(options?: { q?: string | undefined; limit?: number | undefined }): Promise<Memory[]> {
    return this.#table.list(options);
  }

  async update(id: string, change: MemoryChange, limits: MemoryLimits): Promise<MemoryResult<Memory>> {
    return this.#table.update(id, change, limits);
  }

  async forget(id: string): Promise<MemoryResult<{ forgotten: number }>> {
    return this.#table.forget(id);
  }

  /** Everything goes, the object's storage with it; the tables are made again for what comes next. */
  async forgetAll(): Promise<{ forgotten: number }> {
    const forgotten = this.#table.count();
    await this.ctx.storage.deleteAll();
    this.#table.create();
    return { forgotten };
  }
}

/** The bindings a user's memory can live behind: Cloudflare's Agent Memory, else this package's own object. */
export interface MemoryBindings {
  MEMORIES?: DurableObjectNamespace<UserMemory>;
}

/** The object that keeps a user's memory, by a hash of their id; undefined when none is bound. */
export async function userMemoryObject(env: unknown, userId: string): Promise<DurableObjectStub<UserMemory> | undefined> {
  const namespace = (env as MemoryBindings).MEMORIES;
  if (!namespace) return undefined;
  return namespace.getByName(await userObjectName(userId));
}
