/**
 * How a run stands and what it spent, as stored: the turn's in `turns` (its one row, written with its end: a turn
 * writes no second row for them) and a background run's in `runs`. Both keep the same columns, written and read here
 * only: spending added by one statement fragment and summed by one query, a status read through its schema (a value
 * that fits none is an error naming the row, never a wrong status passed on).
 */
import * as z from "zod";
import type { BackgroundResult } from "../../runtime/background-delegation.ts";
import type { TurnOutcome } from "../../runtime/events.ts";
import { exactly } from "../../runtime/schema/exactly.ts";
import { NO_USAGE, type UsageTotals } from "../../runtime/usage.ts";
import { fitted } from "./row-schemas.ts";
import type { SqlWriter } from "./sql-writer.ts";

/** A stored turn: running, ended with its outcome's status, or rewound to run again. */
export type StoredTurnStatus = "running" | TurnOutcome["status"] | "rewound";

/** How a background run stands: running, waiting for the user, or how it ended. */
export type BackgroundStatus = "running" | BackgroundResult["status"];

const LEG_ENDS = ["completed", "awaiting_approval", "awaiting_input", "failed"] as const;
const TURN_STATUS = () => exactly<StoredTurnStatus>()(z.enum(["running", ...LEG_ENDS, "awaiting_human", "cancelled", "rewound"]));
const BACKGROUND_STATUS = () => exactly<BackgroundStatus>()(z.enum(["running", ...LEG_ENDS, "interrupted"]));

/** A turn's stored status, checked. */
export function turnStatus(value: string): StoredTurnStatus {
  return fitted(TURN_STATUS(), value, "turn's status");
}

/** A background run's stored status, checked. */
export function backgroundStatus(value: string): BackgroundStatus {
  return fitted(BACKGROUND_STATUS(), value, "background run's status");
}

/** The SET fragment that adds what a run spent to its row; its values are `spentValues(usage)`, in order. */
export const ADD_SPENT =
  "model_calls = model_calls + ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, tool_calls = tool_calls + ?";

export function spentValues(usage: Partial<UsageTotals>): number[] {
  return [usage.modelCalls ?? 0, usage.inputTokens ?? 0, usage.outputTokens ?? 0, usage.toolCalls ?? 0];
}

/** The columns a row's spending is read from, as `m, i, o, t`. */
export const SPENT_COLUMNS = "model_calls AS m, input_tokens AS i, output_tokens AS o, tool_calls AS t";

/** A row's spending, read by SPENT_COLUMNS. */
export function spentOf(row: { m: number; i: number; o: number; t: number }): UsageTotals {
  return { modelCalls: row.m, inputTokens: row.i, outputTokens: row.o, toolCalls: row.t };
}

/** What the rows that count spending (turns, background runs) have spent, summed. */
export function spentIn(db: SqlWriter, table: "turns" | "runs WHERE mode = 'background'"): UsageTotals {
  type Row = { m: number | null; i: number | null; o: number | null; t: number | null };
  const row = db.rows<Row>(
    `SELECT sum(model_calls) AS m, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(tool_calls) AS t FROM ${table}`,
  )[0];
  return !row || row.m === null
    ? NO_USAGE
    : { modelCalls: row.m, inputTokens: row.i ?? 0, outputTokens: row.o ?? 0, toolCalls: row.t ?? 0 };
}
