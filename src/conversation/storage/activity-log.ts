/**
 * What people did in a conversation, and when: a person's answers and hand backs, and each
 * approval or denial, with who did it (from their sign-in token, or the name an operator typed
 * with the shared key; absent when a key or conversation token decided). One row per act.
 */
import type { OperatorIdentity } from "../../runtime/handoff/types.ts";
import type { SqlWriter } from "./sql-writer.ts";
import * as z from "zod";
import { exactly } from "../../runtime/schema/exactly.ts";
import { readRow } from "./row-schemas.ts";

/** An act as stored (its time is the row's own column). */
const ActivityRowSchema = exactly<Omit<Activity, "at">>()(
  z.lazy(() =>
    z.object({
      kind: z.enum(["answered", "handed-back", "approved", "denied", "expired", "timed-out"]),
      by: z.object({ id: z.string().optional(), name: z.string().optional() }).optional(),
      agent: z.string(),
      toolCallId: z.string().optional(),
      tool: z.string().optional(),
      to: z.string().optional(),
    }),
  ),
);

/** `expired`: a call nobody decided before its deadline, declined by the schedule; `timed-out`: a person who did not answer in time. */
export type ActivityKind = "answered" | "handed-back" | "approved" | "denied" | "expired" | "timed-out";

/** One act of a person in the conversation: what, when, by whom, on which agent or call. */
export interface Activity {
  kind: ActivityKind;
  /** When (ISO 8601). */
  at: string;
  /** Who: a signed-in person's id and name, or only the name an operator gave with the shared key. */
  by?: { id?: string; name?: string };
  /** The agent (or person) that held the conversation when it happened. */
  agent: string;
  /** An approval's call. */
  toolCallId?: string;
  tool?: string;
  /** A hand back's new holder. */
  to?: string;
}

/** The view shows the latest acts; older ones stay stored. */
const SHOWN = 100;

export class ActivityLog {
  readonly #db: SqlWriter;

  constructor(db: SqlWriter) {
    this.#db = db;
  }

  record(act: Omit<Activity, "at">, at = Date.now()): void {
    this.#db.exec(`INSERT INTO activity (at, data) VALUES (?, ?)`, at, JSON.stringify(act));
  }

  /** The latest acts, oldest first. */
  latest(): Activity[] {
    return this.#db
      .rows<{ at: number; data: string }>(`SELECT at, data FROM activity ORDER BY seq DESC LIMIT ?`, SHOWN)
      .reverse()
      .map((row) => ({ ...readRow(ActivityRowSchema, row.data, "activity row"), at: new Date(row.at).toISOString() }));
  }
}

/** Who an act names: the signed-in identity, else a typed name, else no one. */
export function actor(identity: OperatorIdentity | undefined, typedName?: string): Activity["by"] | undefined {
  if (identity) return identity;
  return typedName ? { name: typedName } : undefined;
}
