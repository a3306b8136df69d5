/** Forks: a conversation's rows up to a turn and what it held after that turn, taken from one object and stored in another. */
import type { Holding } from "../../runtime/holding.ts";
import type { FileRef } from "../../runtime/messages.ts";
import type { SqlWriter } from "./sql-writer.ts";
import type { TurnLog } from "./turn-log.ts";

/** A conversation's rows up to a turn, and what it held after that turn: what a fork starts from. */
export interface ForkSnapshot {
  holding: Holding;
  messages: Array<{ turn: number; data: string }>;
  handoffs: Array<{ turn: number; data: string }>;
  compactions: Array<{ turn: number; replaces: number; summary: string; agent: string }>;
  /** Delegated agents' histories of those turns: part of the conversation, so part of its fork (absent in a snapshot from before them). */
  delegations?: Array<{ turn: number; path: string; agent: string; data: string }>;
  /**
   * Those turns' delegated runs (the ledger's rows): a background run's spending counts in the fork too (absent in a
   * snapshot from before them).
   */
  runs?: Array<Record<string, string | number | null>>;
  /** The files those turns' messages carry, by reference: the fork holds them too (absent when there are none). */
  files?: FileRef[];
  /** The signed-in user who owns the original: the fork is theirs too, whichever credential made it. */
  owner?: string;
  turns: Array<{
    turn: number;
    status: string;
    started_at: number;
    ended_at: number | null;
    error: string | null;
    model_calls: number;
    input_tokens: number;
    output_tokens: number;
    tool_calls: number;
    opening: string | null;
  }>;
}

const TURN_COLUMNS = [
  "turn",
  "status",
  "started_at",
  "ended_at",
  "error",
  "model_calls",
  "input_tokens",
  "output_tokens",
  "tool_calls",
  "opening",
] as const;

const RUN_COLUMNS = [
  "turn",
  "path",
  "mode",
  "agent",
  "entry",
  "status",
  "started_at",
  "ended_at",
  "model_calls",
  "input_tokens",
  "output_tokens",
  "tool_calls",
  "spans",
  "state",
] as const;

/**
 * The conversation as it stood after `afterTurn`: its rows up to that turn, and what it held after
 * it (the next turn's opening, or `current` after the last turn). Null when a later turn began
 * before turns recorded their opening.
 */
export function takeSnapshot(db: SqlWriter, turns: TurnLog, afterTurn: number, current: Holding): ForkSnapshot | null {
  const later = turns.nextOpening(afterTurn);
  if (later.exists && !later.opening) return null;
  const rows = <T>(query: string) => db.rows<T & Record<string, SqlStorageValue>>(query, afterTurn) as T[];
  return {
    holding: later.opening?.holding ?? current,
    messages: rows(`SELECT turn, data FROM messages WHERE turn <= ? ORDER BY seq`),
    handoffs: rows(`SELECT turn, data FROM handoffs WHERE turn <= ? ORDER BY seq`),
    compactions: rows(`SELECT turn, replaces, summary, agent FROM compactions WHERE turn <= ? ORDER BY seq`),
    delegations: rows(`SELECT turn, path, agent, data FROM delegations WHERE turn <= ? ORDER BY seq`),
    // A background run still going (or waiting for the user) belongs to the conversation it runs in: in the fork it is over,
    // cut off where it stood, its wait gone with it. The turn's own run is the conversation's: a fork begins with none.
    runs: rows<Record<string, string | number | null>>(`SELECT ${RUN_COLUMNS.join(", ")} FROM runs WHERE turn <= ? AND mode != 'turn'`).map(
      (run) => (run.mode === "background" && run.ended_at === null ? { ...run, status: "interrupted" } : run),
    ),
    turns: rows(`SELECT ${TURN_COLUMNS.join(", ")} FROM turns WHERE turn <= ? ORDER BY turn`),
  };
}

/** Stores a snapshot's rows as they were. Call inside a transaction. */
export function storeSnapshot(db: SqlWriter, snapshot: ForkSnapshot): void {
  for (const m of snapshot.messages) db.exec(`INSERT INTO messages (turn, data) VALUES (?, ?)`, m.turn, m.data);
  for (const h of snapshot.handoffs) db.exec(`INSERT INTO handoffs (turn, data) VALUES (?, ?)`, h.turn, h.data);
  for (const c of snapshot.compactions) {
    db.exec(`INSERT INTO compactions (turn, replaces, summary, agent) VALUES (?, ?, ?, ?)`, c.turn, c.replaces, c.summary, c.agent);
  }
  for (const d of snapshot.delegations ?? []) {
    db.exec(`INSERT INTO delegations (turn, path, agent, data) VALUES (?, ?, ?, ?)`, d.turn, d.path, d.agent, d.data);
  }
  for (const run of snapshot.runs ?? []) {
    db.exec(
      `INSERT INTO runs (${RUN_COLUMNS.join(", ")}) VALUES (${RUN_COLUMNS.map(() => "?").join(", ")})`,
      ...RUN_COLUMNS.map((c) => run[c] ?? null),
    );
  }
  const placeholders = TURN_COLUMNS.map(() => "?").join(", ");
  for (const t of snapshot.turns) {
    db.exec(`INSERT INTO turns (${TURN_COLUMNS.join(", ")}) VALUES (${placeholders})`, ...TURN_COLUMNS.map((column) => t[column]));
  }
}
