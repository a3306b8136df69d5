/**
 * Where an A2A client wants a task's updates pushed: configs per task (a turn), each with the id
 * the client gave it or one made here, kept in the conversation's own SQLite with the turn.
 */
import type { SqlWriter } from "../storage/sql-writer.ts";
import { PushConfigSchema, type PushTarget } from "./outbox.ts";
import { readRow } from "../storage/row-schemas.ts";

/** One push config of a task, as A2A names its fields. */
export interface PushConfig extends PushTarget {
  id: string;
}

export class PushConfigs {
  readonly #db: SqlWriter;
  /** The turns that have configs, read once: a turn's end asks for its configs, and almost every turn has none. */
  #turns: Set<number> | null = null;

  constructor(db: SqlWriter) {
    this.#db = db;
  }

  /** Keeps the config (a config of that id is replaced). */
  set(turn: number, config: PushConfig): void {
    this.#db.exec(`INSERT OR REPLACE INTO push_configs (turn, id, data) VALUES (?, ?, ?)`, turn, config.id, JSON.stringify(config));
    this.#withConfigs().add(turn);
  }

  get(turn: number, id: string): PushConfig | undefined {
    if (!this.#withConfigs().has(turn)) return undefined;
    const row = this.#db.rows<{ data: string }>(`SELECT data FROM push_configs WHERE turn = ? AND id = ?`, turn, id)[0];
    return row ? readRow(PushConfigSchema, row.data, "push config") : undefined;
  }

  /** The task's configs, in the order of their ids. */
  list(turn: number): PushConfig[] {
    if (!this.#withConfigs().has(turn)) return [];
    return this.#db
      .rows<{ data: string }>(`SELECT data FROM push_configs WHERE turn = ? ORDER BY id`, turn)
      .map((row) => readRow(PushConfigSchema, row.data, "push config"));
  }

  /** Whether there was one to delete. */
  remove(turn: number, id: string): boolean {
    const found = this.get(turn, id) !== undefined;
    this.#db.exec(`DELETE FROM push_configs WHERE turn = ? AND id = ?`, turn, id);
    this.#turns = null;
    return found;
  }

  /** Every row went (the conversation was erased): the turns are read again when next asked for. */
  forget(): void {
    this.#turns = null;
  }

  #withConfigs(): Set<number> {
    this.#turns ??= new Set(this.#db.rows<{ turn: number }>(`SELECT DISTINCT turn FROM push_configs`).map((row) => row.turn));
    return this.#turns;
  }
}
