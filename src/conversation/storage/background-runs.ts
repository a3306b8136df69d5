/**
 * Background delegations' runs (`asTool({ background: true })`), by their schedule entry's id:
 * whether one has started (a restart that finds it started and not running cut it off), the wait
 * for the user it is in, how it ended, and what it spent (the conversation's spending counts it, as
 * it counts its turns').
 */
import type { BackgroundOutcome, BackgroundResult } from "../../runtime/background-delegation.ts";
import { type Decision, undecided, type UserRequest } from "../../runtime/wait/requests.ts";
import { nextDeadline } from "../../runtime/wait/deadlines.ts";
import type { UsageTotals } from "../../runtime/usage.ts";
import type { Span } from "../../traces/turn-trace.ts";
import type { Schedule, ScheduleEntry } from "../schedule/schedule.ts";
import type { SqlWriter } from "./sql-writer.ts";
import { spentIn } from "./stored-state.ts";

/** A background delegation's entry in the schedule. */
export type DelegationEntry = Extract<ScheduleEntry, { kind: "delegation" }>;

/** How a background run stands: running, waiting for the user, or how it ended. */
export type BackgroundStatus = "running" | BackgroundResult["status"];

/** A background run's wait for the user: its requests (under the call that asked the run), and the decisions so far. */
export interface BackgroundWait {
  id: string;
  requests: UserRequest[];
  decisions: Decision[];
}

/** How long a wait with no deadline goes before its entry rings to look at it again. */
const LOOK_AGAIN_MS = 24 * 60 * 60 * 1000;

export interface BackgroundRunRecord {
  id: string;
  turn: number;
  toolCallId: string;
  agent: string;
  status: BackgroundStatus;
  startedAt: number;
  endedAt: number | null;
}

export class BackgroundRuns {
  readonly #db: SqlWriter;
  readonly #schedule: Schedule;

  constructor(db: SqlWriter, schedule: Schedule) {
    this.#db = db;
    this.#schedule = schedule;
  }

  /** The run starts: stored as running, its entry due again at `leaseUntil` (a restart before its end finds it cut off then). */
  begin(entry: DelegationEntry, leaseUntil: number): void {
    this.#db.transactionAlone(() => {
      this.#start(entry);
      this.#schedule.postpone(entry.id, leaseUntil);
    });
  }

  /**
   * The run has ended: in one write, its status, its entry gone, and the follow-up that brings `note` to the agent that
   * asked (none when the entry was cancelled or went with a rewound turn). The follow-up runs once, as every follow-up does.
   */
  finish(entry: DelegationEntry, status: BackgroundOutcome["status"], note: string, spans: readonly Span[] = []): void {
    this.#db.transactionAlone(() => {
      if (!this.get(entry.id)) this.#start(entry, status);
      this.#db.exec(
        `UPDATE background_runs SET status = ?, ended_at = ?, spans = ?, wait = NULL WHERE id = ?`,
        status,
        Date.now(),
        this.#withSpans(entry.id, spans),
        entry.id,
      );
      if (!this.#schedule.get(entry.id)) return;
      this.#schedule.remove(entry.id);
      const { askedBy, toolCallId, agent } = entry;
      this.#schedule.add({ kind: "follow-up", dueAt: Date.now(), note, agent: askedBy, toolCallId, delegated: agent }, entry.turn);
    });
  }

  /** The run waits for the user: its requests stored, its entry due at the earliest deadline among them (or later, to look again). */
  wait(
    entry: DelegationEntry,
    status: Exclude<BackgroundStatus, "running" | BackgroundOutcome["status"]>,
    requests: UserRequest[],
    spans: readonly Span[],
  ): void {
    const wait: BackgroundWait = { id: entry.id, requests, decisions: [] };
    this.#db.transactionAlone(() => {
      this.#db.exec(
        `UPDATE background_runs SET status = ?, wait = ?, spans = ? WHERE id = ?`,
        status,
        JSON.stringify(wait),
        this.#withSpans(entry.id, spans),
        entry.id,
      );
      this.#schedule.postpone(entry.id, lookAt(wait));
      // The owner's list shows what waits for them.
      this.#db.changed("entry");
    });
  }

  /**
   * Decisions on a waiting run's requests; once none is left undecided its entry is due now, and the alarm carries the run
   * on. Call inside a transaction.
   */
  decide(wait: BackgroundWait, decisions: readonly Decision[]): BackgroundWait {
    const decided = { ...wait, decisions: [...wait.decisions, ...decisions] };
    this.#db.exec(`UPDATE background_runs SET wait = ? WHERE id = ?`, JSON.stringify(decided), wait.id);
    this.#schedule.postpone(wait.id, undecidedIn(decided).length === 0 ? Date.now() : lookAt(decided));
    this.#db.changed("entry");
    return decided;
  }

  /** The runs that wait for the user (while their entry is there). */
  waits(): BackgroundWait[] {
    return this.#db
      .rows<{ wait: string }>(
        `SELECT wait FROM background_runs WHERE wait IS NOT NULL AND id IN (SELECT id FROM schedule) ORDER BY started_at`,
      )
      .map((row) => JSON.parse(row.wait) as BackgroundWait);
  }

  /** Waits whose entry is gone (cancelled, or gone with a rewound turn) end interrupted, as a run stopped there would. */
  endOrphanedWaits(): void {
    const orphaned = "wait IS NOT NULL AND id NOT IN (SELECT id FROM schedule)";
    if (!this.#db.rows(`SELECT id FROM background_runs WHERE ${orphaned}`).length) return;
    this.#db.exec(`UPDATE background_runs SET status = 'interrupted', ended_at = ?, wait = NULL WHERE ${orphaned}`, Date.now());
    // The owner's list no longer shows them waiting.
    this.#db.changed("entry");
  }

  /** The run carries on from its decided wait: running again, its entry due a lease on. */
  resume(id: string, leaseUntil: number): void {
    this.#db.transactionAlone(() => {
      this.#db.exec(`UPDATE background_runs SET status = 'running', wait = NULL WHERE id = ?`, id);
      this.#schedule.postpone(id, leaseUntil);
    });
  }

  /** The run's spans so far, then `spans` (a run that waited adds its next leg's). */
  #withSpans(id: string, spans: readonly Span[]): string {
    const before = this.#db.rows<{ spans: string | null }>(`SELECT spans FROM background_runs WHERE id = ?`, id)[0]?.spans;
    return JSON.stringify([...(before ? (JSON.parse(before) as Span[]) : []), ...spans]);
  }

  get(id: string): BackgroundRunRecord | undefined {
    return this.#db.rows<RunRow>(`SELECT ${RUN_COLUMNS} FROM background_runs WHERE id = ?`, id).map(runRecord)[0];
  }

  #start(run: DelegationEntry, status: BackgroundStatus = "running"): void {
    this.#db.exec(
      `INSERT INTO background_runs (id, turn, tool_call_id, agent, status, started_at) VALUES (?, ?, ?, ?, ?, ?)`,
      run.id,
      run.turn,
      run.toolCallId,
      run.agent,
      status,
      Date.now(),
    );
  }

  /** What a step of the run spent. Call inside a transaction. */
  spend(id: string, usage: Partial<UsageTotals>): void {
    this.#db.exec(
      `UPDATE background_runs SET model_calls = model_calls + ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
         tool_calls = tool_calls + ? WHERE id = ?`,
      usage.modelCalls ?? 0,
      usage.inputTokens ?? 0,
      usage.outputTokens ?? 0,
      usage.toolCalls ?? 0,
      id,
    );
  }

  /** The latest runs, newest first. */
  latest(limit: number): BackgroundRunRecord[] {
    return this.#db.rows<RunRow>(`SELECT ${RUN_COLUMNS} FROM background_runs ORDER BY started_at DESC LIMIT ?`, limit).map(runRecord);
  }

  /** The spans of turn `turn`'s background runs, under the calls that started them (the turn's trace shows them). */
  spans(turn: number): Span[] {
    return this.#db
      .rows<{ spans: string | null }>(`SELECT spans FROM background_runs WHERE turn = ? ORDER BY started_at`, turn)
      .flatMap((row) => (row.spans ? (JSON.parse(row.spans) as Span[]) : []));
  }

  /** What every background run has spent. */
  spent(): UsageTotals {
    return spentIn(this.#db, "background_runs");
  }
}

/** A wait's requests still undecided. */
export function undecidedIn(wait: BackgroundWait): UserRequest[] {
  return undecided({ suspension: { pending: wait.requests }, decisions: wait.decisions });
}

/** When a wait's entry rings: at the earliest deadline of its undecided requests, else a day on. */
function lookAt(wait: BackgroundWait): number {
  return Math.min(Date.now() + LOOK_AGAIN_MS, nextDeadline(wait) ?? Number.POSITIVE_INFINITY);
}

const RUN_COLUMNS = "id, turn, tool_call_id, agent, status, started_at, ended_at";

type RunRow = {
  id: string;
  turn: number;
  tool_call_id: string;
  agent: string;
  status: string;
  started_at: number;
  ended_at: number | null;
};

function runRecord(row: RunRow): BackgroundRunRecord {
  return {
    id: row.id,
    turn: row.turn,
    toolCallId: row.tool_call_id,
    agent: row.agent,
    status: row.status as BackgroundStatus,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}
