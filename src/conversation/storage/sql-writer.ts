import type { StoredEvent } from "../../wire/sse.ts";

/** What a write changed that something follows from: the schedule or the outbox (what the alarm rings for), the inbox entry. */
export type Changed = "schedule" | "entry";

/** What a committed write changed, and the events it stored (a leg's end, a person's answer, a hand back: what else follows from them). */
export interface Written {
  changed: ReadonlySet<Changed>;
  events: readonly StoredEvent[];
}

/** The most parameters a Durable Object's SQLite binds to one statement. */
const MAX_BOUND = 100;

/**
 * The conversation's SQL handle, shared by its storage modules: writes that count their rows and
 * bytes into the current turn (the storage figures), transactions that take along a write
 * deferred until the next one (a turn's row, written with its first commit), and what each write
 * changed, told to the listeners once it is committed (see CommitEffects).
 */
export class SqlWriter {
  readonly sql: SqlStorage;
  readonly #storage: DurableObjectStorage;
  #written = { rows: 0, bytes: 0 };
  #deferred: (() => void) | null = null;
  /** Writes that ride along with the next transaction whatever is deferred (a schedule entry leaving with its effect). */
  #riders: Array<() => void> = [];
  #inTransaction = false;
  #changed = new Set<Changed>();
  #events: StoredEvent[] = [];
  readonly #listeners: Array<(written: Written) => void> = [];

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.sql = storage.sql;
  }

  /** Rows of a query. */
  rows<T extends Record<string, SqlStorageValue>>(query: string, ...bindings: Array<string | number | null>): T[] {
    return this.sql.exec<T>(query, ...bindings).toArray();
  }

  /** A write, counted: the rows it wrote. */
  exec(query: string, ...bindings: Array<string | number | null>): number {
    const cursor = this.sql.exec(query, ...bindings);
    this.#written.rows += cursor.rowsWritten;
    // A statement that matched nothing (a delete of entries that are not there) wrote nothing.
    if (cursor.rowsWritten > 0) for (const value of bindings) this.#written.bytes += typeof value === "string" ? value.length : 8;
    return cursor.rowsWritten;
  }

  /**
   * Rows inserted with as few statements as the bound-parameter limit allows (one, for a step's
   * messages): each statement costs SQLite and workerd's bookkeeping more than its rows do.
   */
  insertRows(into: string, rows: ReadonlyArray<ReadonlyArray<string | number | null>>): void {
    const width = rows[0]?.length ?? 0;
    const per = Math.max(1, Math.floor(MAX_BOUND / Math.max(1, width)));
    const tuple = `(${Array(width).fill("?").join(", ")})`;
    for (let at = 0; at < rows.length; at += per) {
      const chunk = rows.slice(at, at + per);
      this.exec(`INSERT INTO ${into} VALUES ${Array(chunk.length).fill(tuple).join(", ")}`, ...chunk.flat());
    }
  }

  /** Runs `write` in the next transaction, before its own writes (or drops it when `write` is null). */
  defer(write: (() => void) | null): void {
    this.#deferred = write;
  }

  /** Runs `write` in the next transaction too, beside the deferred write (which a later `defer` may replace; this one stays). */
  deferAlso(write: () => void): void {
    this.#riders.push(write);
  }

  /** Runs writes atomically, with the deferred write first; a failed transaction keeps it deferred (and tells nothing). */
  transaction(writes: () => void): void {
    const deferred = this.#deferred;
    const riders = this.#riders;
    this.#atomic(() => {
      deferred?.();
      for (const ride of riders) ride();
      writes();
    });
    this.#deferred = null;
    this.#riders = [];
    this.#tell();
  }

  /**
   * Runs writes atomically on their own: what is deferred stays for the next `transaction` (a background run's writes are
   * not the running turn's, and must not carry its turn row or the schedule entry that leaves with its first commit).
   */
  transactionAlone(writes: () => void): void {
    this.#atomic(writes);
    this.#tell();
  }

  #atomic(writes: () => void): void {
    this.#inTransaction = true;
    try {
      this.#storage.transactionSync(writes);
    } catch (error) {
      this.#changed.clear();
      this.#events = [];
      throw error;
    } finally {
      this.#inTransaction = false;
    }
  }

  /** A write changed `what`: the listeners hear of it once it is committed (now, outside a transaction). */
  changed(what: Changed): void {
    this.#changed.add(what);
    if (!this.#inTransaction) this.#tell();
  }

  /** A write stored these events: the listeners hear of them once it is committed. */
  stored(events: readonly StoredEvent[]): void {
    this.#events.push(...events);
    if (!this.#inTransaction) this.#tell();
  }

  /** Told what each committed write changed. */
  onWritten(listener: (written: Written) => void): void {
    this.#listeners.push(listener);
  }

  #tell(): void {
    if (this.#changed.size === 0 && this.#events.length === 0) return;
    const written: Written = { changed: this.#changed, events: this.#events };
    this.#changed = new Set();
    this.#events = [];
    for (const listener of this.#listeners) listener(written);
  }

  /** What was written since the last call, and the count starts again. */
  takeWritten(): { rows: number; bytes: number } {
    const written = this.#written;
    this.#written = { rows: 0, bytes: 0 };
    return written;
  }

  async deleteAll(): Promise<void> {
    await this.#storage.deleteAll();
    this.#deferred = null;
    this.#riders = [];
    this.#written = { rows: 0, bytes: 0 };
  }
}
