/**
 * The ledger of a conversation's delegated runs (`runs`): one row per run of a turn, keyed by the turn and the path of the
 * calls that delegated it, whether it runs in the turn (`delegation`) or in the background (`background`). The one reader
 * and writer of the table. A row holds what resumes the run (its holder, the wait it ended in, the asks its decisions took);
 * a background run's also holds its schedule entry's id, its status and times, what it spent, its spans, and the decisions
 * on its wait. A run's requests are its stored wait's, shown under the path of calls that asked it: stored once. Its history
 * is the `delegations` table's, by the same key.
 */
import * as z from "zod";
import type { BackgroundOutcome, BackgroundResult } from "../../runtime/background-delegation.ts";
import { type Holding, newHolding } from "../../runtime/holding.ts";
import type { StepCommit } from "../../runtime/ports/store-port.ts";
import { type Decision, forwardedRequest, undecided, type UserRequest } from "../../runtime/wait/requests.ts";
import { DecisionsSchema, HoldingSchema, readRow, SpansSchema, SuspensionSchema } from "./row-schemas.ts";
import type { Suspension } from "../../runtime/wait/suspension.ts";
import type { UsageTotals } from "../../runtime/usage.ts";
import type { Span } from "../../traces/turn-trace.ts";
import type { Schedule, ScheduleEntry } from "../schedule/schedule.ts";
import type { SqlWriter } from "./sql-writer.ts";
import { ROW_VERSION, spentIn } from "./stored-state.ts";

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

/** What resumes a delegated run: its holder and the wait its last step left, and how many of its delegating call's asks it took. */
export interface RunState {
  holding: Holding;
  suspension: Suspension | null;
  asked: number;
}

/** How long a waiting run's entry goes before it rings to look at it again (its deadlines have an entry of their own). */
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

/** A run's state row: what resumes it. */
const RunStateSchema = z.lazy(() =>
  z.object({ v: z.number().optional(), holding: HoldingSchema, suspension: SuspensionSchema.nullable(), asked: z.number() }),
);

const key = (path: readonly string[]) => path.join("/");

function readState(json: string): RunState {
  const { holding, suspension, asked } = readRow(RunStateSchema, json, "run's state");
  return { holding, suspension, asked };
}

export class RunLedger {
  readonly #db: SqlWriter;
  readonly #schedule: Schedule;

  constructor(db: SqlWriter, schedule: Schedule) {
    this.#db = db;
    this.#schedule = schedule;
  }

  /** What resumes the run at `path` of turn `turn`, as its steps left it; undefined before a step stored one. */
  state(turn: number, path: readonly string[]): RunState | undefined {
    const row = this.#db.rows<{ state: string | null }>(`SELECT state FROM runs WHERE turn = ? AND path = ?`, turn, key(path))[0];
    return row?.state ? readState(row.state) : undefined;
  }

  /**
   * A delegated step changed the run's holder or wait: its state is written (a run in the turn gets its row then; a
   * background run's row is its own already). Call inside a transaction.
   */
  step(turn: number, path: readonly string[], agent: string, commit: StepCommit, asked: number): void {
    if (commit.holding === undefined && commit.suspension === undefined) return;
    const before = this.state(turn, path);
    const holding = commit.holding ?? before?.holding ?? newHolding(agent);
    const suspension = commit.suspension === undefined ? (before?.suspension ?? null) : commit.suspension;
    const state = JSON.stringify({ v: ROW_VERSION, holding, suspension, asked });
    this.#db.exec(
      `INSERT INTO runs (turn, path, mode, agent, state) VALUES (?, ?, 'delegation', ?, ?)
         ON CONFLICT (turn, path) DO UPDATE SET state = excluded.state`,
      turn,
      key(path),
      agent,
      state,
    );
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
        `UPDATE runs SET status = ?, ended_at = ?, spans = ?, decisions = NULL WHERE entry = ?`,
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

  /**
   * The run waits for the user (its requests are its stored wait's): its deadline planned as any run's (a `request-expiry`
   * entry), its own entry due a day on, to look again.
   */
  wait(entry: DelegationEntry, status: Exclude<BackgroundStatus, "running" | BackgroundOutcome["status"]>, spans: readonly Span[]): void {
    this.#db.transactionAlone(() => {
      this.#db.exec(
        `UPDATE runs SET status = ?, decisions = '[]', spans = ? WHERE entry = ?`,
        status,
        this.#withSpans(entry.id, spans),
        entry.id,
      );
      const wait = this.waits().find((w) => w.id === entry.id);
      if (wait) this.#schedule.planExpiry(wait, entry.id);
      this.#schedule.postpone(entry.id, Date.now() + LOOK_AGAIN_MS);
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
    this.#db.exec(`UPDATE runs SET decisions = ? WHERE entry = ?`, JSON.stringify(decided.decisions), wait.id);
    this.#schedule.planExpiry(decided, wait.id);
    if (undecidedIn(decided).length === 0) this.#schedule.postpone(wait.id, Date.now());
    this.#db.changed("entry");
    return decided;
  }

  /** The background runs that wait for the user (while their entry is there), in the order they started. */
  waits(): BackgroundWait[] {
    type Row = { entry: string; path: string; state: string | null; decisions: string };
    return this.#db
      .rows<Row>(
        `SELECT entry, path, state, decisions FROM runs
           WHERE decisions IS NOT NULL AND entry IN (SELECT id FROM schedule) ORDER BY started_at`,
      )
      .map((row) => {
        const path = row.path.split("/");
        const pending = (row.state ? readState(row.state).suspension?.pending : undefined) ?? [];
        return {
          id: row.entry,
          requests: pending.map((request) => forwardedRequest(request, path)),
          decisions: readRow(DecisionsSchema, row.decisions, "background run's decisions"),
        };
      });
  }

  /** Waits whose entry is gone (cancelled, or gone with a rewound turn) end interrupted, as a run stopped there would. */
  endOrphanedWaits(): void {
    const orphaned = "decisions IS NOT NULL AND entry IS NOT NULL AND entry NOT IN (SELECT id FROM schedule)";
    if (!this.#db.rows(`SELECT entry FROM runs WHERE ${orphaned}`).length) return;
    for (const row of this.#db.rows<{ entry: string }>(`SELECT entry FROM runs WHERE ${orphaned}`)) this.#schedule.removeExpiry(row.entry);
    this.#db.exec(`UPDATE runs SET status = 'interrupted', ended_at = ?, decisions = NULL WHERE ${orphaned}`, Date.now());
    // The owner's list no longer shows them waiting.
    this.#db.changed("entry");
  }

  /** The run carries on from its decided wait: running again, its entry due a lease on. */
  resume(id: string, leaseUntil: number): void {
    this.#db.transactionAlone(() => {
      this.#db.exec(`UPDATE runs SET status = 'running', decisions = NULL WHERE entry = ?`, id);
      this.#schedule.postpone(id, leaseUntil);
    });
  }

  /** The run's spans so far, then `spans` (a run that waited adds its next leg's). */
  #withSpans(id: string, spans: readonly Span[]): string {
    const before = this.#db.rows<{ spans: string | null }>(`SELECT spans FROM runs WHERE entry = ?`, id)[0]?.spans;
    return JSON.stringify([...(before ? readRow(SpansSchema, before, "run's spans") : []), ...spans]);
  }

  get(id: string): BackgroundRunRecord | undefined {
    return this.#db.rows<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE entry = ?`, id).map(runRecord)[0];
  }

  /** A background run's row: its own, or the row a step of it wrote first (made a background run's). */
  #start(run: DelegationEntry, status: BackgroundStatus = "running"): void {
    this.#db.exec(
      `INSERT INTO runs (turn, path, mode, agent, entry, status, started_at) VALUES (?, ?, 'background', ?, ?, ?, ?)
         ON CONFLICT (turn, path) DO UPDATE SET mode = 'background', agent = excluded.agent, entry = excluded.entry,
           status = excluded.status, started_at = excluded.started_at`,
      run.turn,
      run.toolCallId,
      run.agent,
      run.id,
      status,
      Date.now(),
    );
  }

  /** What a step of a background run spent. Call inside a transaction. */
  spend(id: string, usage: Partial<UsageTotals>): void {
    this.#db.exec(
      `UPDATE runs SET model_calls = model_calls + ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
         tool_calls = tool_calls + ? WHERE entry = ?`,
      usage.modelCalls ?? 0,
      usage.inputTokens ?? 0,
      usage.outputTokens ?? 0,
      usage.toolCalls ?? 0,
      id,
    );
  }

  /** The latest background runs, newest first. */
  latest(limit: number): BackgroundRunRecord[] {
    return this.#db
      .rows<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE mode = 'background' ORDER BY started_at DESC LIMIT ?`, limit)
      .map(runRecord);
  }

  /** The spans of turn `turn`'s background runs, under the calls that started them (the turn's trace shows them). */
  spans(turn: number): Span[] {
    return this.#db
      .rows<{ spans: string | null }>(`SELECT spans FROM runs WHERE turn = ? AND mode = 'background' ORDER BY started_at`, turn)
      .flatMap((row) => (row.spans ? readRow(SpansSchema, row.spans, "run's spans") : []));
  }

  /** What every background run has spent (a run in the turn counts in its turn's spending). */
  spent(): UsageTotals {
    return spentIn(this.#db, "runs WHERE mode = 'background'");
  }
}

/** A wait's requests still undecided. */
export function undecidedIn(wait: BackgroundWait): UserRequest[] {
  return undecided({ suspension: { pending: wait.requests }, decisions: wait.decisions });
}

const RUN_COLUMNS = "entry, turn, path, agent, status, started_at, ended_at";

type RunRow = {
  entry: string;
  turn: number;
  path: string;
  agent: string;
  status: string;
  started_at: number;
  ended_at: number | null;
};

function runRecord(row: RunRow): BackgroundRunRecord {
  return {
    id: row.entry,
    turn: row.turn,
    toolCallId: row.path,
    agent: row.agent,
    status: row.status as BackgroundStatus,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}
