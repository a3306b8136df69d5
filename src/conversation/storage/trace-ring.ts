/** The latest turns' traces, a row per turn in a ring of slots (turn modulo the turns kept): one row written per turn, none deleted. */
import type { SqlWriter } from "./sql-writer.ts";
import type { TurnTrace } from "../../traces/turn-trace.ts";
import { readRow, TraceSchema } from "./row-schemas.ts";

/** Traces kept per conversation: the latest turns'. */
export const DEFAULT_KEPT_TRACES = 50;

export class TraceRing {
  readonly #db: SqlWriter;

  constructor(db: SqlWriter) {
    this.#db = db;
  }

  /** Keeps a turn's trace (a later leg of the turn rewrites it); none when `keep` is 0. Call inside a transaction. */
  keep(turn: number, trace: TurnTrace, keep: number): void {
    if (keep <= 0) return;
    // The slot of a turn `keep` turns back is taken over.
    this.#db.exec(
      `INSERT INTO traces (slot, turn, data) VALUES (?, ?, ?) ON CONFLICT (slot) DO UPDATE SET turn = excluded.turn, data = excluded.data`,
      turn % keep,
      turn,
      JSON.stringify(trace),
    );
  }

  /** A turn's trace, while it is kept. */
  read(turn: number): TurnTrace | undefined {
    const row = this.#db.rows<{ data: string }>(`SELECT data FROM traces WHERE turn = ?`, turn)[0];
    return row && readRow(TraceSchema, row.data, "trace");
  }
}
