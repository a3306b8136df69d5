/**
 * What protocols keep in a conversation (A2A's push configs, a protocol of a Worker's own): rows by protocol, turn and
 * key, each a JSON value its protocol reads through its own schema. The conversation names none of them: a protocol's
 * part (protocol-parts.ts) is the only reader of its rows.
 */
import type { SqlWriter } from "./sql-writer.ts";

/** One protocol's rows in one conversation. */
export interface PartRows {
  /** Keeps the value under the turn and key (a value of that key is replaced). */
  set(turn: number, key: string, value: unknown): void;
  get(turn: number, key: string): unknown;
  /** The turn's values, in the order of their keys. */
  list(turn: number): { key: string; value: unknown }[];
  /** Whether there was one to remove. */
  remove(turn: number, key: string): boolean;
}

export class ProtocolRows {
  readonly #db: SqlWriter;
  /** The (protocol, turn) pairs that have rows, read once: every turn's end asks, and almost every turn has none. */
  #held: Set<string> | null = null;

  constructor(db: SqlWriter) {
    this.#db = db;
  }

  of(protocol: string): PartRows {
    const db = this.#db;
    const has = (turn: number) => this.#withRows().has(`${protocol}:${turn}`);
    return {
      set: (turn, key, value) => {
        db.exec(
          `INSERT OR REPLACE INTO protocol_rows (protocol, turn, key, data) VALUES (?, ?, ?, ?)`,
          protocol,
          turn,
          key,
          JSON.stringify(value),
        );
        this.#withRows().add(`${protocol}:${turn}`);
      },
      get: (turn, key) => {
        if (!has(turn)) return undefined;
        const [row] = db.rows<{ data: string }>(
          `SELECT data FROM protocol_rows WHERE protocol = ? AND turn = ? AND key = ?`,
          protocol,
          turn,
          key,
        );
        return row ? JSON.parse(row.data) : undefined;
      },
      list: (turn) => {
        if (!has(turn)) return [];
        return db
          .rows<{ key: string; data: string }>(
            `SELECT key, data FROM protocol_rows WHERE protocol = ? AND turn = ? ORDER BY key`,
            protocol,
            turn,
          )
          .map((row) => ({ key: row.key, value: JSON.parse(row.data) }));
      },
      remove: (turn, key) => {
        if (!has(turn)) return false;
        const found =
          db.rows<{ one: number }>(`SELECT 1 AS one FROM protocol_rows WHERE protocol = ? AND turn = ? AND key = ?`, protocol, turn, key)
            .length > 0;
        db.exec(`DELETE FROM protocol_rows WHERE protocol = ? AND turn = ? AND key = ?`, protocol, turn, key);
        this.#held = null;
        return found;
      },
    };
  }

  /** Every row went (the conversation was erased): read again when next asked for. */
  forget(): void {
    this.#held = null;
  }

  #withRows(): Set<string> {
    this.#held ??= new Set(
      this.#db
        .rows<{ protocol: string; turn: number }>(`SELECT DISTINCT protocol, turn FROM protocol_rows`)
        .map((r) => `${r.protocol}:${r.turn}`),
    );
    return this.#held;
  }
}
