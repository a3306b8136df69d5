/**
 * The conversation's turns in SQLite: each turn's row (its status, times, what it spent and wrote,
 * and the opening a rewind returns to), begun, ended, rewound and listed.
 */
import type { HandoffRecord } from "../../runtime/handoff/types.ts";
import type { TurnOutcome } from "../../runtime/events.ts";
import type { UsageTotals } from "../../runtime/usage.ts";
import type { SqlWriter } from "./sql-writer.ts";
import { readOpening, type TurnOpening, writeOpening } from "./stored-state.ts";
import { ADD_SPENT, SPENT_COLUMNS, spentIn, spentOf, spentValues, type StoredTurnStatus, turnStatus } from "./run-accounts.ts";

export type { StoredTurnStatus } from "./run-accounts.ts";

/** A handoff record with the turn that made it. */
export type StoredHandoff = HandoffRecord & { turn: number };

/** A turn as GET …/turns lists it. */
export interface TurnSummary {
  turn: number;
  status: StoredTurnStatus;
  startedAt: number;
  endedAt: number | null;
  durationMs: number | null;
  error: string | null;
  /** The agents that held the conversation during the turn, in order: who held it at the start, then each handoff's target. */
  agents: string[];
  usage: UsageTotals;
  handoffs: HandoffRecord[];
}

export interface TurnRecord {
  turn: number;
  status: StoredTurnStatus;
  error: string | null;
  rowsWritten: number;
  bytesWritten: number;
}

/** Tables whose rows belong to one turn, and go when it is rewound. */
const TURN_ROWS = ["messages", "handoffs", "compactions"] as const;

export class TurnLog {
  readonly #db: SqlWriter;

  constructor(db: SqlWriter) {
    this.#db = db;
  }

  /** When the conversation last did anything: its latest turn's end, or start while it runs; null before its first. */
  lastActivity(): number | null {
    return this.#db.sql.exec<{ at: number | null }>(`SELECT max(coalesce(ended_at, started_at)) AS at FROM turns`).one().at;
  }

  /** The number of the latest turn; 0 before the first. */
  latest(): number {
    return this.#db.sql.exec<{ turn: number | null }>(`SELECT max(turn) AS turn FROM turns`).one().turn ?? 0;
  }

  /**
   * Opens a turn. Its row is written with the turn's first commit, not here: a Durable Object holds
   * its answers until its writes are durable, so a write now would delay the stream's first byte
   * by a storage flush while the model has not even been asked.
   */
  begin(turn: number, opening: TurnOpening | null): void {
    const startedAt = Date.now();
    const json = opening && writeOpening(opening);
    this.#db.defer(() =>
      this.#db.exec(`INSERT INTO turns (turn, status, started_at, opening) VALUES (?, 'running', ?, ?)`, turn, startedAt, json),
    );
  }

  /** Ends a leg with its outcome and what it spent; the rows it wrote are counted with this last write. Call inside a transaction. */
  end(turn: number, outcome: TurnOutcome, spent: UsageTotals): void {
    const written = this.#db.takeWritten();
    this.#db.exec(
      `UPDATE turns SET status = ?, ended_at = ?, error = ?, rows_written = rows_written + ?, bytes_written = bytes_written + ?,
         ${ADD_SPENT} WHERE turn = ?`,
      outcome.status,
      Date.now(),
      outcome.status === "failed" ? outcome.code : null,
      written.rows + 1,
      written.bytes,
      ...spentValues(spent),
      turn,
    );
  }

  /** Spending after a turn's end (its title call), added to the turn's. Call inside a transaction. */
  addSpent(turn: number, spent: UsageTotals): void {
    this.#db.exec(`UPDATE turns SET ${ADD_SPENT} WHERE turn = ?`, ...spentValues(spent), turn);
  }

  /** The turn runs again (its suspension was decided). Call inside a transaction. */
  resume(turn: number): void {
    this.#db.exec(`UPDATE turns SET status = 'running', ended_at = NULL WHERE turn = ?`, turn);
  }

  /** Turns left running by an instance that died: they are marked failed. Call inside a transaction. */
  failRunning(): number[] {
    const running = this.#db.rows<{ turn: number }>(`SELECT turn FROM turns WHERE status = 'running'`).map((r) => r.turn);
    if (running.length)
      this.#db.exec(`UPDATE turns SET status = 'failed', ended_at = ?, error = 'interrupted' WHERE status = 'running'`, Date.now());
    return running;
  }

  /** What a turn started from; null for turns stored before turns recorded it. */
  opening(turn: number): TurnOpening | null {
    const row = this.#db.rows<{ opening: string | null }>(`SELECT opening FROM turns WHERE turn = ?`, turn)[0];
    return row?.opening ? readOpening(row.opening) : null;
  }

  /** Whether a turn after `turn` exists, and what the first of them started from. */
  nextOpening(turn: number): { exists: boolean; opening: TurnOpening | null } {
    const row = this.#db.rows<{ opening: string | null }>(`SELECT opening FROM turns WHERE turn > ? ORDER BY turn LIMIT 1`, turn)[0];
    return { exists: row !== undefined, opening: row?.opening ? readOpening(row.opening) : null };
  }

  /**
   * Removes a turn's messages, handoffs and compactions; its row stays, marked `rewound` with what
   * was removed (counts, not content), and keeps what it spent. Call inside a transaction.
   */
  rewind(turn: number): void {
    const count = (table: string) => this.#db.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE turn = ?`, turn).one().n;
    const removed = Object.fromEntries(TURN_ROWS.map((table) => [table, count(table)]));
    for (const table of TURN_ROWS) this.#db.exec(`DELETE FROM ${table} WHERE turn = ?`, turn);
    // Its delegated runs go with it: their histories and waits belong to the turn that is gone. A background run's row
    // stays (what it spent still counts); its entry went with the turn, so it ends.
    this.#db.exec(`DELETE FROM delegations WHERE turn = ?`, turn);
    this.#db.exec(`DELETE FROM runs WHERE turn = ? AND mode = 'delegation'`, turn);
    this.#db.exec(`UPDATE turns SET status = 'rewound', rewound = ? WHERE turn = ?`, JSON.stringify(removed), turn);
  }

  record(turn: number): TurnRecord | undefined {
    type Row = { turn: number; status: string; error: string | null; rows_written: number; bytes_written: number };
    const row = this.#db.rows<Row>(`SELECT turn, status, error, rows_written, bytes_written FROM turns WHERE turn = ?`, turn)[0];
    return (
      row && {
        turn: row.turn,
        status: turnStatus(row.status),
        error: row.error,
        rowsWritten: row.rows_written,
        bytesWritten: row.bytes_written,
      }
    );
  }

  /** What every ended leg spent. */
  spent(): UsageTotals {
    return spentIn(this.#db, "turns");
  }

  /** Every turn, oldest first: its status, times, usage, and the handoffs it made. */
  list(handoffs: readonly StoredHandoff[]): TurnSummary[] {
    type Row = {
      turn: number;
      status: string;
      started_at: number;
      ended_at: number | null;
      error: string | null;
      opening: string | null;
      m: number;
      i: number;
      o: number;
      t: number;
    };
    const byTurn = new Map<number, HandoffRecord[]>();
    for (const { turn, ...record } of handoffs) byTurn.set(turn, [...(byTurn.get(turn) ?? []), record as HandoffRecord]);
    let holder: string | undefined;
    const rows = this.#db.rows<Row>(`SELECT turn, status, started_at, ended_at, error, opening, ${SPENT_COLUMNS} FROM turns ORDER BY turn`);
    return rows.map((row) => {
      const made = byTurn.get(row.turn) ?? [];
      // Who held the conversation when the turn began (turns stored before openings were: who held it after the last one).
      const first = row.opening ? readOpening(row.opening).holding.activeAgent : (holder ?? made[0]?.from);
      const agents = [...(first ? [first] : []), ...made.map((h) => h.to)];
      holder = agents.at(-1);
      return {
        turn: row.turn,
        status: turnStatus(row.status),
        startedAt: row.started_at,
        endedAt: row.ended_at,
        durationMs: row.ended_at === null ? null : row.ended_at - row.started_at,
        error: row.error,
        agents,
        usage: spentOf(row),
        handoffs: made,
      };
    });
  }
}
