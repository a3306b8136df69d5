/**
 * A user's memories in SQLite with an FTS5 index over their words: what `UserMemory` keeps. A memory of a `key` the user
 * has one of already supersedes it (the older one is kept, marked, and never recalled); writing a memory of the same
 * `origin` twice keeps it once, so a retried extraction stores nothing twice.
 */
import { type Memory, MemorySchema, type NewMemory, RECALL_DEFAULTS, type RecallOptions } from "../runtime/ports/memory-port.ts";
import type { MemoryChange, MemoryLimits, MemoryResult } from "./memory-store.ts";
import { memoryTokens } from "./memory-store.ts";

type Row = Record<string, SqlStorageValue> & {
  rowid: number;
  id: string;
  text: string;
  type: string;
  key: string | null;
  source: string;
  created_at: string;
  replaced: string | null;
};

const COLUMNS = ["rowid", "id", "text", "type", "key", "source", "created_at", "replaced"].map((c) => `memories.${c} AS ${c}`).join(", ");
/** The words of a query matched at most. */
const MATCHED_WORDS = 32;
/** Standing wishes are given every turn, whatever it is about. */
const STANDING = ["preference", "instruction"];

export class MemoryTable {
  readonly #sql: SqlStorage;
  readonly #transaction: <T>(run: () => T) => T;

  constructor(storage: DurableObjectStorage) {
    this.#sql = storage.sql;
    this.#transaction = (run) => storage.transactionSync(run);
    this.create();
  }

  create(): void {
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS memories (id TEXT PRIMARY KEY, text TEXT NOT NULL, type TEXT NOT NULL, key TEXT,
         source TEXT NOT NULL, created_at TEXT NOT NULL, replaced TEXT, replaced_by TEXT, origin TEXT UNIQUE)`,
    );
    this.#sql.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS memory_text USING fts5(text, key)`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS memory_reads (conversation TEXT PRIMARY KEY, up_to INTEGER NOT NULL)`);
  }

  readFrom(conversation: string): number {
    return (
      this.#sql.exec<{ up_to: number }>(`SELECT up_to FROM memory_reads WHERE conversation = ?`, conversation).toArray()[0]?.up_to ?? 0
    );
  }

  /** What a read found, kept with where it got to, in one transaction (each memory's origin names the read and its place). */
  keepRead(conversation: string, upTo: number, found: readonly NewMemory[], limits: MemoryLimits): Memory[] {
    return this.#transaction(() => {
      const kept: Memory[] = [];
      for (const [i, memory] of found.entries()) {
        const written = this.#remember({ ...memory, origin: `${conversation}:${upTo}:${i}` }, limits);
        if (written.ok) kept.push(written.value);
      }
      this.#sql.exec(
        `INSERT INTO memory_reads (conversation, up_to) VALUES (?, ?) ON CONFLICT (conversation) DO UPDATE SET up_to = excluded.up_to`,
        conversation,
        upTo,
      );
      return kept;
    });
  }

  /** The best matches of `query` first, then standing preferences and instructions, then the newest; within the bounds. */
  recall(query: string, options: RecallOptions = {}): Memory[] {
    const limit = options.limit ?? RECALL_DEFAULTS.limit;
    const maxTokens = options.maxTokens ?? RECALL_DEFAULTS.maxTokens;
    const seen = new Set<string>();
    const picked: Memory[] = [];
    let tokens = 0;
    for (const row of [...this.#matching(query, 50), ...this.#current()]) {
      if (seen.has(row.id)) continue;
      seen.add(row.id);
      const cost = memoryTokens(row.text);
      if (picked.length >= limit || tokens + cost > maxTokens) continue;
      tokens += cost;
      picked.push(memoryOf(row));
    }
    return picked;
  }

  remember(memory: NewMemory, limits: MemoryLimits): MemoryResult<Memory> {
    return this.#transaction(() => this.#remember(memory, limits));
  }

  #remember(memory: NewMemory, limits: MemoryLimits): MemoryResult<Memory> {
    const text = memory.text.trim();
    const problem = textProblem(text, limits);
    if (problem) return problem;
    const existing = memory.origin ? this.#rows(`WHERE origin = ?`, memory.origin)[0] : undefined;
    if (existing) return { ok: true, value: memoryOf(existing) };
    const key = memory.key?.trim().toLowerCase() || null;
    const superseded = key ? this.#rows(`WHERE key = ? AND replaced_by IS NULL`, key).map((r) => r.id) : [];
    if (this.count() - superseded.length >= limits.maxPerUser)
      return refused("memory_limit", `This user's memory is full (${limits.maxPerUser} memories): forget some to keep more.`);
    const id = crypto.randomUUID();
    const createdAt = new Date().toISOString();
    this.#sql.exec(
      `INSERT INTO memories (id, text, type, key, source, created_at, replaced, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      text,
      memory.type,
      key,
      JSON.stringify(memory.source),
      createdAt,
      superseded.length ? JSON.stringify(superseded) : null,
      memory.origin ?? null,
    );
    for (const old of superseded) this.#sql.exec(`UPDATE memories SET replaced_by = ? WHERE id = ?`, id, old);
    this.#sql.exec(`INSERT INTO memory_text (rowid, text, key) SELECT rowid, ?, ? FROM memories WHERE id = ?`, text, key ?? "", id);
    return { ok: true, value: memoryOf(this.#rows(`WHERE id = ?`, id)[0]!) };
  }

  /** The memories the user has now, newest first; `q` searches their words. */
  list(options: { q?: string | undefined; limit?: number | undefined } = {}): Memory[] {
    const limit = options.limit ?? 200;
    const rows = options.q?.trim()
      ? this.#matching(options.q, limit)
      : this.#rows(`WHERE replaced_by IS NULL ORDER BY rowid DESC LIMIT ?`, limit);
    return rows.map(memoryOf);
  }

  update(id: string, change: MemoryChange, limits: MemoryLimits): MemoryResult<Memory> {
    const row = this.#rows(`WHERE id = ? AND replaced_by IS NULL`, id)[0];
    if (!row) return refused("memory_not_found", `No memory '${id}' (it was forgotten, or replaced by a newer one).`);
    const text = change.text?.trim() ?? row.text;
    const problem = textProblem(text, limits);
    if (problem) return problem;
    this.#transaction(() => {
      this.#sql.exec(`UPDATE memories SET text = ?, type = ? WHERE id = ?`, text, change.type ?? row.type, id);
      this.#sql.exec(`UPDATE memory_text SET text = ? WHERE rowid = ?`, text, row.rowid);
    });
    return { ok: true, value: memoryOf(this.#rows(`WHERE id = ?`, id)[0]!) };
  }

  /** Forgets a memory and those it superseded (forgetting "moved to Lyon" does not bring "lives in Paris" back). */
  forget(id: string): MemoryResult<{ forgotten: number }> {
    const row = this.#rows(`WHERE id = ? AND replaced_by IS NULL`, id)[0];
    if (!row) return refused("memory_not_found", `No memory '${id}' (it was forgotten, or replaced by a newer one).`);
    const chain = [row];
    for (let i = 0; i < chain.length; i++) chain.push(...this.#rows(`WHERE replaced_by = ?`, chain[i]!.id));
    this.#transaction(() => {
      for (const gone of chain) {
        this.#sql.exec(`DELETE FROM memories WHERE id = ?`, gone.id);
        this.#sql.exec(`DELETE FROM memory_text WHERE rowid = ?`, gone.rowid);
      }
    });
    return { ok: true, value: { forgotten: chain.length } };
  }

  /** The memories kept now (superseded ones not counted). */
  count(): number {
    return this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM memories WHERE replaced_by IS NULL`).one().n;
  }

  /** Current memories matching the words of `query`, best first (an empty query matches none). */
  #matching(query: string, limit: number): Row[] {
    // A long message is a long query: its first distinct words are what it is about.
    const words = [...new Set(query.match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, MATCHED_WORDS);
    if (words.length === 0) return [];
    const match = words.map((w) => `"${w}"*`).join(" OR ");
    return this.#sql
      .exec<Row>(
        `SELECT ${COLUMNS} FROM memory_text JOIN memories ON memories.rowid = memory_text.rowid
         WHERE memory_text MATCH ? AND replaced_by IS NULL ORDER BY bm25(memory_text) LIMIT ?`,
        match,
        limit,
      )
      .toArray();
  }

  /** Every current memory: standing wishes first, then the newest. */
  #current(): Row[] {
    const standing = STANDING.map((t) => `'${t}'`).join(", ");
    return this.#rows(`WHERE replaced_by IS NULL ORDER BY type IN (${standing}) DESC, rowid DESC`);
  }

  #rows(where: string, ...bindings: SqlStorageValue[]): Row[] {
    return this.#sql.exec<Row>(`SELECT ${COLUMNS} FROM memories ${where}`, ...bindings).toArray();
  }
}

function memoryOf(row: Row): Memory {
  return MemorySchema.parse({
    id: row.id,
    text: row.text,
    type: row.type,
    ...(row.key ? { key: row.key } : {}),
    source: JSON.parse(row.source),
    createdAt: row.created_at,
    ...(row.replaced ? { replaced: JSON.parse(row.replaced) } : {}),
  });
}

function textProblem(text: string, limits: MemoryLimits): MemoryResult<never> | undefined {
  if (!text) return refused("invalid_request", "A memory needs words: `text` is empty.");
  if (text.length > limits.maxChars)
    return refused("memory_limit", `A memory holds at most ${limits.maxChars} characters (MEMORY_MAX_CHARS); this one has ${text.length}.`);
  return undefined;
}

function refused(code: "memory_limit" | "memory_not_found" | "invalid_request", message: string): MemoryResult<never> {
  return { ok: false, error: { code, message } };
}
