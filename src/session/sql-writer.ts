/**
 * The conversation's SQL handle, shared by its storage modules: writes that count their rows and
 * bytes into the current turn (the storage figures), and transactions that take along a write
 * deferred until the next one (a turn's row, written with its first commit).
 */
export class SqlWriter {
  readonly sql: SqlStorage;
  readonly #storage: DurableObjectStorage;
  #written = { rows: 0, bytes: 0 };
  #deferred: (() => void) | null = null;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.sql = storage.sql;
  }

  /** Rows of a query. */
  rows<T extends Record<string, SqlStorageValue>>(query: string, ...bindings: Array<string | number | null>): T[] {
    return this.sql.exec<T>(query, ...bindings).toArray();
  }

  /** A write, counted. */
  exec(query: string, ...bindings: Array<string | number | null>): void {
    const cursor = this.sql.exec(query, ...bindings);
    this.#written.rows += cursor.rowsWritten;
    for (const value of bindings) this.#written.bytes += typeof value === "string" ? value.length : 8;
  }

  /** Runs `write` in the next transaction, before its own writes (or drops it when `write` is null). */
  defer(write: (() => void) | null): void {
    this.#deferred = write;
  }

  /** Runs `write` in the next transaction too, after what was deferred before it. */
  deferAlso(write: () => void): void {
    const before = this.#deferred;
    this.#deferred = before
      ? () => {
          before();
          write();
        }
      : write;
  }

  /** Runs writes atomically, with the deferred write first; a failed transaction keeps it deferred. */
  transaction(writes: () => void): void {
    const deferred = this.#deferred;
    this.#storage.transactionSync(() => {
      deferred?.();
      writes();
    });
    this.#deferred = null;
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
    this.#written = { rows: 0, bytes: 0 };
  }
}
