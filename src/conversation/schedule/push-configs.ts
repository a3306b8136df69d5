/**
 * Where an A2A client wants a task's updates pushed: configs per task (a turn), each with the id
 * the client gave it or one made here, kept in the conversation's own SQLite with the turn.
 */
import type { SqlWriter } from "../storage/sql-writer.ts";
import type { PushTarget } from "./outbox.ts";

/** One push config of a task, as A2A names its fields. */
export interface PushConfig extends PushTarget {
  id: string;
}

export class PushConfigs {
  readonly #db: SqlWriter;

  constructor(db: SqlWriter) {
    this.#db = db;
  }

  /** Keeps the config (a config of that id is replaced). */
  set(turn: number, config: PushConfig): void {
    this.#db.exec(`INSERT OR REPLACE INTO push_configs (turn, id, data) VALUES (?, ?, ?)`, turn, config.id, JSON.stringify(config));
  }

  get(turn: number, id: string): PushConfig | undefined {
    const row = this.#db.rows<{ data: string }>(`SELECT data FROM push_configs WHERE turn = ? AND id = ?`, turn, id)[0];
    return row ? (JSON.parse(row.data) as PushConfig) : undefined;
  }

  /** The task's configs, in the order of their ids. */
  list(turn: number): PushConfig[] {
    return this.#db
      .rows<{ data: string }>(`SELECT data FROM push_configs WHERE turn = ? ORDER BY id`, turn)
      .map((row) => JSON.parse(row.data) as PushConfig);
  }

  /** Whether there was one to delete. */
  remove(turn: number, id: string): boolean {
    const found = this.get(turn, id) !== undefined;
    this.#db.exec(`DELETE FROM push_configs WHERE turn = ? AND id = ?`, turn, id);
    return found;
  }
}
