/**
 * The ledger of a conversation's runs (`runs`): one row per run, keyed by its turn and the path of the calls that
 * delegated it: the turn itself (the root run, path [], mode `turn`: one row, the latest turn's, under turn 0), a run
 * delegated in the turn (`delegation`) or in the background (`background`). The one reader and writer of the table.
 * Every run waits the same way: its row holds the step it suspended on and the decisions so far, and a decision is
 * stored, expires and completes the wait by one path; the turn and a background run differ only in where the result
 * goes (the turn's leg resumes; a background run's entry is due). A row holds what resumes the run (its holder, the wait
 * it ended in, the asks its decisions took); a background run's also holds its schedule entry's id, its status and
 * times, what it spent and its spans. A run's requests are its stored wait's, shown under the path of calls that asked
 * it: stored once. Its history is the `delegations` table's (the turn's: the conversation's messages), by the same key.
 */
import type { BackgroundOutcome } from "../../runtime/background-delegation.ts";
import { type Holding, newHolding } from "../../runtime/holding.ts";
import type { StepCommit } from "../../runtime/ports/store-port.ts";
import { type Decision, forwardedRequest, undecided, type UserRequest } from "../../runtime/wait/requests.ts";
import { DecisionsSchema, readRow, SpansSchema } from "./row-schemas.ts";
import type { Suspension } from "../../runtime/wait/suspension.ts";
import type { UsageTotals } from "../../runtime/usage.ts";
import type { Span } from "../../traces/turn-trace.ts";
import type { Schedule, ScheduleEntry } from "./schedule.ts";
import type { SqlWriter } from "./sql-writer.ts";
import { readRunState, type TurnWait, writeRunState } from "./stored-state.ts";
import { ADD_SPENT, type BackgroundStatus, backgroundStatus, spentIn, spentValues } from "./run-accounts.ts";

/** A background delegation's entry in the schedule. */
export type DelegationEntry = Extract<ScheduleEntry, { kind: "delegation" }>;

export type { BackgroundStatus } from "./run-accounts.ts";

/**
 * A run's wait for the user: its requests (a background run's under the call that asked the run), and the decisions so
 * far. `id`: a background run's schedule entry; undefined for the turn's own wait.
 */
export interface RunWait {
  id: string | undefined;
  requests: UserRequest[];
  decisions: Decision[];
}

/** A background run's wait: by its schedule entry. */
export type BackgroundWait = RunWait & { id: string };

export function isBackground(wait: RunWait): wait is BackgroundWait {
  return wait.id !== undefined;
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
const key = (path: readonly string[]) => path.join("/");

/**
 * The turn's own row, the root run's: one per conversation, the latest turn's (turn 0 names it whichever turn that is),
 * rewritten in place as a turn waits and its wait ends. A row per turn would write the table's two indexes at each turn
 * that waits; this writes one row, as the state row did when it held the wait.
 */
const ROOT = key([]);
const TURN_ROW = 0;
/** The turn's own row while it waits (bound to ROOT). */
const TURN_WAITS = "path = ? AND decisions IS NOT NULL";

export class RunLedger {
  readonly #db: SqlWriter;
  readonly #schedule: Schedule;

  constructor(db: SqlWriter, schedule: Schedule) {
    this.#db = db;
    this.#schedule = schedule;
  }

  /** What resumes the run at `path` of turn `turn`, as its steps left it; undefined before a step stored one. */
  state(turn: number, path: readonly string[]): RunState | undefined {
    type Row = { state: string | null; agent: string };
    const row = this.#db.rows<Row>(`SELECT state, agent FROM runs WHERE turn = ? AND path = ?`, turn, key(path))[0];
    if (!row?.state) return undefined;
    const { holding, suspension, asked } = readRunState(row.state);
    return { holding: holding ?? newHolding(row.agent), suspension, asked };
  }

  /** The turn's own wait: its suspended step and the decisions so far (none while it does not wait). */
  turnWait(): TurnWait {
    type Row = { state: string; decisions: string };
    const row = this.#db.rows<Row>(`SELECT state, decisions FROM runs WHERE ${TURN_WAITS} AND state IS NOT NULL`, ROOT)[0];
    const suspension = row ? readRunState(row.state).suspension : null;
    if (!row || !suspension) return { suspension: null, decisions: [] };
    return { suspension, decisions: readRow(DecisionsSchema, row.decisions, "run's decisions") };
  }

  /**
   * The turn's step suspended (or its wait is over, `suspension` null): stored in its own row, the root run's, with the
   * decisions so far. Call inside a transaction.
   */
  storeTurnWait(agent: string, { suspension, decisions }: TurnWait): void {
    const state = writeRunState({ suspension, asked: 0 });
    const waiting = suspension === null ? null : JSON.stringify(decisions);
    const query = `UPDATE runs SET agent = ?, state = ?, decisions = ? WHERE turn = ? AND path = ?`;
    if (this.#db.exec(query, agent, state, waiting, TURN_ROW, ROOT) > 0 || waiting === null) return;
    this.#db.exec(
      `INSERT INTO runs (turn, path, mode, agent, state, decisions) VALUES (?, ?, 'turn', ?, ?, ?)`,
      TURN_ROW,
      ROOT,
      agent,
      state,
      waiting,
    );
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
    const state = writeRunState({ holding, suspension, asked });
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
   * Decisions on a waiting run's requests, with its next deadline planned; once none is left undecided, a background run's
   * entry is due now (the alarm carries the run on), and the turn's wait is over (its leg resumes: see the store's
   * `decide`). Call inside a transaction.
   */
  decide<W extends RunWait>(wait: W, decisions: readonly Decision[]): W {
    const decided = { ...wait, decisions: [...wait.decisions, ...decisions] };
    const json = JSON.stringify(decided.decisions);
    if (wait.id === undefined) this.#db.exec(`UPDATE runs SET decisions = ? WHERE ${TURN_WAITS}`, json, ROOT);
    else this.#db.exec(`UPDATE runs SET decisions = ? WHERE entry = ?`, json, wait.id);
    this.#schedule.planExpiry(decided, wait.id);
    if (wait.id !== undefined && undecidedIn(decided).length === 0) this.#schedule.postpone(wait.id, Date.now());
    this.#db.changed("entry");
    return decided;
  }

  /**
   * The runs that wait for the user: the latest turn's own, then each background run's (while its entry is there), in the
   * order they started.
   */
  waits(): RunWait[] {
    type Row = { entry: string | null; path: string; state: string | null; decisions: string };
    return this.#db
      .rows<Row>(
        `SELECT entry, path, state, decisions FROM runs WHERE decisions IS NOT NULL
           AND (path = ? OR entry IN (SELECT id FROM schedule)) ORDER BY path != ?, started_at`,
        ROOT,
        ROOT,
      )
      .flatMap((row): RunWait[] => {
        const pending = (row.state ? readRunState(row.state).suspension?.pending : undefined) ?? [];
        const path = row.path.split("/");
        const requests = row.entry === null ? pending : pending.map((request) => forwardedRequest(request, path));
        const decisions = readRow(DecisionsSchema, row.decisions, "run's decisions");
        return requests.length || row.entry !== null ? [{ id: row.entry ?? undefined, requests, decisions }] : [];
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
    this.#db.exec(`UPDATE runs SET ${ADD_SPENT} WHERE entry = ?`, ...spentValues(usage), id);
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
export function undecidedIn(wait: RunWait): UserRequest[] {
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
    status: backgroundStatus(row.status),
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}
