/**
 * The conversation's SQLite storage: the state row and the commits that change it. History is
 * appended one row per message and kept in memory after the first read, so a turn writes only
 * what it adds and reads the history once per start; an object at rest keeps at most
 * KEPT_HISTORY_CHARS of it (a longer one is read again by the next turn). The turn log, the event log, forks and the
 * trace ring are modules of their own over the same SQL handle, whose writes count into the turn.
 */
import type { OperatorIdentity } from "../../runtime/handoff/types.ts";
import { ActivityLog } from "./activity-log.ts";
import { FileLedger } from "./file-ledger.ts";
import { RunLedger, type RunWait } from "./run-ledger.ts";
import { Outbox } from "./outbox.ts";
import { ProtocolRows } from "./protocol-rows.ts";
import { EXPIRED, Schedule } from "./schedule.ts";
import type { CallsInFlight } from "../../runtime/calls-in-flight.ts";
import type { Compaction } from "../../runtime/compaction.ts";
import type { TurnOutcome } from "../../runtime/events.ts";
import type { ConversationSnapshot } from "../../runtime/conversation-snapshot.ts";
import { type Holding, newHolding } from "../../runtime/holding.ts";
import type { FileRef, Message } from "../../runtime/messages.ts";
import { applyCommit, type StepCommit, type StoredDelegation } from "../../runtime/ports/store-port.ts";
import { type Decision, isAnswer, type UserRequest } from "../../runtime/wait/requests.ts";
import { addUsage, NO_USAGE, type UsageTotals } from "../../runtime/usage.ts";
import type { StoredEvent } from "../../wire/sse.ts";
import { CRASH_ID_GAP, EventLog, recoveredLegStart } from "./event-log.ts";
import { type ForkSnapshot, storeSnapshot, takeSnapshot } from "./forks.ts";
import { settleCutOff } from "./recovery.ts";
import { migrate } from "./schema.ts";
import { CallsInFlightSchema, EventsRowSchema, MessageSchema, readRow } from "./row-schemas.ts";
import { SqlWriter, type Written } from "./sql-writer.ts";
import { readHandoffRow, readStateRow, type StoredState, type TurnOpening, writeHandoff, writeStateRow } from "./stored-state.ts";
import { capHandoff, capMessage } from "./stored-size-limits.ts";
import { DEFAULT_KEPT_TRACES, TraceRing } from "./trace-ring.ts";
import { type StoredHandoff, TurnLog } from "./turn-log.ts";
import type { TurnTrace } from "../../traces/turn-trace.ts";

/**
 * History an object at rest keeps in memory, in characters of its stored rows (about a thousand turns of short
 * exchanges): a longer one is read again for each use between legs. Its figures: bench/RESULTS.md §25.
 */
export const KEPT_HISTORY_CHARS = 256 * 1024;

/**
 * The conversation's state: the stored row, and the latest turn and event id, which are read back
 * from the turns and events tables rather than written on every step. A step writes its messages
 * and events, and the state row only when what the conversation holds or its suspension changes.
 */
/** A delegated run of a turn: the delegating calls' ids (outermost first), the agent delegated to, and its history. */
export interface DelegatedRun {
  path: string[];
  agent: string;
  messages: Message[];
}

export interface ConversationState extends StoredState {
  lastEventId: number;
  /** The number of the latest turn; 0 before the first message. */
  turn: number;
}

export class ConversationStore {
  readonly #db: SqlWriter;
  readonly turns: TurnLog;
  readonly events: EventLog;
  readonly traces: TraceRing;
  readonly activity: ActivityLog;
  /** The files the conversation holds, by reference. */
  readonly files: FileLedger;
  readonly schedule: Schedule;
  /** Messages to send out (the app's webhook), apart from the schedule's timers. */
  readonly outbox: Outbox;
  /** What protocols keep here (A2A's push configs), each read by its own protocol's part. */
  readonly protocolRows: ProtocolRows;
  /** The turns' delegated runs, in the turn or in the background: one ledger. */
  readonly runs: RunLedger;
  #state: ConversationState | null = null;
  #messages: Message[] | null = null;
  /** The length of the kept history's stored rows: past `#keptHistoryChars`, an object at rest lets it go. */
  #historyChars = 0;
  readonly #keptHistoryChars: number;
  /** The latest handoff and compaction, read once with the history and kept up to date by the commits that add them. */
  #latest: Pick<ConversationSnapshot, "lastHandoff" | "compaction"> | null = null;
  /** What the current turn spent so far; written with the turn's end. */
  #turnUsage: UsageTotals = NO_USAGE;
  #conversationUsage: UsageTotals | null = null;
  /** A leg runs (a turn begun or resumed, not yet ended): its commits tell no one until its end. */
  #legOpen = false;
  /** Who the running (or last) leg answers: the signed-in user whose message or decision started it; the desk shows who waits. */
  legFor: OperatorIdentity | undefined;

  /** `keptHistoryChars`: how much history an object at rest keeps in memory, in characters of its stored rows. */
  constructor(storage: DurableObjectStorage, { keptHistoryChars = KEPT_HISTORY_CHARS } = {}) {
    this.#keptHistoryChars = keptHistoryChars;
    this.#db = new SqlWriter(storage);
    this.turns = new TurnLog(this.#db);
    this.events = new EventLog(this.#db);
    this.traces = new TraceRing(this.#db);
    this.activity = new ActivityLog(this.#db);
    this.files = new FileLedger(this.#db);
    this.schedule = new Schedule(this.#db, () => this.state()?.turn ?? 0);
    this.outbox = new Outbox(this.#db);
    this.protocolRows = new ProtocolRows(this.#db);
    this.runs = new RunLedger(this.#db, this.schedule);
    migrate(this.#db.sql);
    this.#recoverInterruptedTurn();
  }

  /** Told what each committed write changed (see CommitEffects). */
  onWritten(listener: (written: Written) => void): void {
    this.#db.onWritten(listener);
  }

  /** Whether a leg is running: begun or resumed, and not yet ended. */
  get legOpen(): boolean {
    return this.#legOpen;
  }

  state(): ConversationState | null {
    if (this.#state === null) {
      const row = this.#db.rows<{ data: string }>(`SELECT data FROM state WHERE id = 1`)[0];
      if (row) {
        const turn = this.turns.latest();
        this.#state = { ...readStateRow(row.data), ...this.runs.turnWait(), turn, lastEventId: this.events.lastId() };
      }
    }
    return this.#state;
  }

  messages(): readonly Message[] {
    return this.#loadedMessages();
  }

  #loadedMessages(): Message[] {
    if (this.#messages) return this.#messages;
    const rows = this.#db.rows<{ data: string }>(`SELECT data FROM messages ORDER BY seq`);
    const messages = rows.map((row) => readRow(MessageSchema, row.data, "message"));
    const chars = rows.reduce((sum, row) => sum + row.data.length, 0);
    // A leg keeps what it reads (each step needs it); at rest, a history past the bound is read for each use, not kept.
    if (this.#legOpen || chars <= this.#keptHistoryChars) {
      this.#messages = messages;
      this.#historyChars = chars;
    }
    return messages;
  }

  /** The messages one turn added to the history, in order. */
  messagesOfTurn(turn: number): Message[] {
    return this.#db
      .rows<{ data: string }>(`SELECT data FROM messages WHERE turn = ? ORDER BY seq`, turn)
      .map((row) => readRow(MessageSchema, row.data, "message"));
  }

  handoffs(): StoredHandoff[] {
    return this.#db
      .rows<{ turn: number; data: string }>(`SELECT turn, data FROM handoffs ORDER BY seq`)
      .map((row) => ({ turn: row.turn, ...readHandoffRow(row.data) }));
  }

  /** What the conversation has spent, its current turn included. */
  usage(): UsageTotals {
    this.#conversationUsage ??= addUsage(this.turns.spent(), this.runs.spent());
    return addUsage(this.#conversationUsage, this.#turnUsage);
  }

  compactions(): Array<Compaction & { turn: number; agent: string }> {
    return this.#db.rows<{ turn: number; replaces: number; summary: string; agent: string }>(
      `SELECT turn, replaces, summary, agent FROM compactions ORDER BY seq`,
    );
  }

  /** The stored conversation as a turn starts from it. */
  snapshot(): ConversationSnapshot {
    const { holding } = this.#requireState();
    return { holding, history: this.messages(), usage: this.usage(), ...this.#latestRows() };
  }

  #latestRows(): Pick<ConversationSnapshot, "lastHandoff" | "compaction"> {
    if (this.#latest) return this.#latest;
    const handoff = this.#db.rows<{ data: string }>(`SELECT data FROM handoffs ORDER BY seq DESC LIMIT 1`)[0];
    const compaction = this.#db.rows<{ replaces: number; summary: string }>(
      `SELECT replaces, summary FROM compactions ORDER BY seq DESC LIMIT 1`,
    )[0];
    this.#latest = {
      ...(handoff ? { lastHandoff: readHandoffRow(handoff.data) } : {}),
      ...(compaction ? { compaction: { replaces: compaction.replaces, summary: compaction.summary } } : {}),
    };
    return this.#latest;
  }

  /** Stores an empty conversation held by the entry agent, unless one exists; `owner` is the signed-in user who made it. */
  create(conversationId: string, entryAgent: string, grant: string, owner?: string): ConversationState {
    const existing = this.state();
    if (existing) return existing;
    return this.#write(freshState(conversationId, newHolding(entryAgent), grant, owner));
  }

  /** A new title or archived flag, what its owner's inbox shows. */
  describe(meta: { title?: string | undefined; archived?: boolean | undefined }): ConversationState {
    const state = this.#requireState();
    return this.#write({
      ...state,
      ...(meta.title === undefined ? {} : { title: meta.title }),
      ...(meta.archived === undefined ? {} : { archived: meta.archived }),
    });
  }

  /**
   * What reading the conversation for memories spent, counted with its latest turn, and that turn's trace with what the
   * read kept (when its trace is kept).
   */
  recordMemoryRead(spent: { inputTokens: number; outputTokens: number }, trace: TurnTrace | undefined, keep: number): void {
    const state = this.#requireState();
    this.#conversationUsage = null;
    this.#write(state, () => {
      if (state.turn > 0)
        this.turns.addSpent(state.turn, { modelCalls: 1, inputTokens: spent.inputTokens, outputTokens: spent.outputTokens, toolCalls: 0 });
      if (trace) this.traces.keep(trace.turn, trace, keep);
    });
  }

  /** The title a model made after the first turn, and what the call spent, counted with that turn. */
  titleFirstTurn(title: string, spent: { inputTokens: number; outputTokens: number }): ConversationState {
    const state = this.#requireState();
    this.#conversationUsage = null;
    return this.#write({ ...state, title }, () =>
      this.turns.addSpent(1, { modelCalls: 1, inputTokens: spent.inputTokens, outputTokens: spent.outputTokens, toolCalls: 0 }),
    );
  }

  /**
   * Opens a new turn; with a user message (and its files, or a scheduled turn's note), it records what the conversation
   * held, for a rewind.
   */
  beginTurn(message?: string | { note: string }, files: readonly FileRef[] = []): ConversationState {
    const previous = this.#requireState();
    const next: ConversationState = { ...previous, turn: previous.turn + 1 };
    const sent = files.length ? { files: [...files] } : {};
    const opening = message === undefined ? null : typeof message === "string" ? { message, ...sent } : { message: "", note: message.note };
    this.turns.begin(next.turn, opening && { ...opening, holding: previous.holding });
    this.#state = next;
    this.#legOpen = true;
    return next;
  }

  /**
   * Rewinds the latest turn to where it started: its rows go (see TurnLog.rewind), what the
   * conversation held returns to what it was, and a suspension and its decisions go with it.
   * Null when the turn cannot be rewound (none, or stored before turns recorded their opening).
   */
  rewindLastTurn(): TurnOpening | null {
    const state = this.#requireState();
    const opening = this.turns.opening(state.turn);
    if (!opening) return null;
    this.#write({ ...state, holding: opening.holding, suspension: null, decisions: [] }, () => {
      this.turns.rewind(state.turn);
      // What the rewound turn scheduled (its follow-ups, its approvals' deadline) goes with it.
      this.schedule.removeTurn(state.turn);
    });
    this.#forgetHistory();
    return opening;
  }

  /** The conversation as it stood after `afterTurn` (see takeSnapshot). */
  forkSnapshot(afterTurn: number): ForkSnapshot | null {
    return takeSnapshot(this.#db, this.turns, afterTurn, this.#requireState().holding);
  }

  /** Stores a new conversation from another's snapshot: its rows as they were, a state of its own, no events. */
  importFork(conversationId: string, grant: string, snapshot: ForkSnapshot, owner?: string): ConversationState {
    this.#write(freshState(conversationId, snapshot.holding, grant, owner), () => storeSnapshot(this.#db, snapshot));
    this.#state = null;
    this.#forgetHistory();
    this.#conversationUsage = null;
    return this.state()!;
  }

  /**
   * Decisions on the runs' waits (a share per run: the turn's, background runs'), and who made them (one activity row
   * each), in one transaction; what each wait is now, in order. `resume`: the turn's wait is complete and its leg starts.
   * Without the turn's share the batch is written on its own: a turn may be running, and its deferred writes are not these.
   */
  decide(shares: readonly WaitShare[], by?: OperatorIdentity, resume = false): RunWait[] {
    const state = this.#requireState();
    const ofTurn = shares.some((share) => share.wait.id === undefined);
    let decided: RunWait[] = [];
    const writes = () => {
      decided = shares.map(({ wait, decisions }) => {
        this.#recordDecided(decisions, wait.requests, state.holding.activeAgent, by);
        return this.runs.decide(wait, decisions);
      });
      if (!resume) return;
      this.turns.resume(state.turn);
      this.schedule.removeExpiry();
      this.#legOpen = true;
    };
    if (!ofTurn) {
      this.#db.transactionAlone(writes);
      return decided;
    }
    this.#transaction(writes);
    const turnWait = decided.find((wait) => wait.id === undefined);
    if (turnWait) this.#state = { ...state, decisions: turnWait.decisions };
    return decided;
  }

  /** Each decision in the activity log, with the call it decided (`holder`: the agent named when the call is not known). */
  #recordDecided(decisions: readonly Decision[], requests: readonly UserRequest[], holder: string, by?: OperatorIdentity): void {
    const pending = new Map(requests.map((p) => [p.toolCallId, p]));
    for (const decision of decisions) {
      const { toolCallId } = decision;
      const call = pending.get(toolCallId);
      this.activity.record({
        kind: decisionActivity(decision, by),
        ...(by ? { by } : {}),
        agent: call?.agent ?? holder,
        toolCallId,
        ...(call ? { tool: call.name } : {}),
      });
    }
  }

  /**
   * The calls of the current step, written before its first tool starts: one row, rewritten by the
   * next such step. The step's commit answers them; if the process dies first, the next start does
   * (see #recoverInterruptedTurn). The events so far (the calls' `tool-call` events among them) go
   * in the same row, for that recovery to store before its answers; the commit stores them as usual.
   */
  recordCalls(calls: CallsInFlight, events: readonly StoredEvent[] = []): void {
    const { turn } = this.#requireState();
    this.#transaction(() =>
      this.#db.exec(
        `INSERT OR REPLACE INTO calls_in_flight (id, turn, data, events) VALUES (1, ?, ?, ?)`,
        turn,
        JSON.stringify(calls),
        JSON.stringify(events),
      ),
    );
  }

  /** Commits one step with its events (those before it and those it announces), in one transaction. */
  commitStep(commit: StepCommit, events: readonly StoredEvent[]): void {
    const state = this.#requireState();
    // Read before the step's rows are written, or a first read (a person's answer to an object that restarted) would hold them twice.
    const history = this.#loadedMessages();
    const messages = commit.messages.map(capMessage);
    const next: ConversationState = {
      ...applyCommit(state, commit),
      lastEventId: events.at(-1)?.id ?? state.lastEventId,
      // Decisions belong to the suspension they decide.
      ...(commit.suspension === undefined ? {} : { decisions: [] }),
    };
    const holder = next.holding.activeAgent;
    const rows = messages.map((message) => [state.turn, JSON.stringify(message)] as const);
    this.#transaction(() => {
      this.#db.insertRows("messages (turn, data)", rows);
      if (commit.handoff)
        this.#db.exec(`INSERT INTO handoffs (turn, data) VALUES (?, ?)`, state.turn, writeHandoff(capHandoff(commit.handoff)));
      const { compaction } = commit;
      if (compaction) {
        this.#db.exec(
          `INSERT INTO compactions (turn, replaces, summary, agent) VALUES (?, ?, ?, ?)`,
          state.turn,
          compaction.replaces,
          compaction.summary,
          holder,
        );
      }
      this.events.insert(state.turn, events);
      if (next.holding !== state.holding || next.suspension !== state.suspension) this.#writeState(next);
      if (messages.length > 0) this.#db.changed("entry");
    });
    this.#state = next;
    if (commit.usage) this.#turnUsage = addUsage(this.#turnUsage, commit.usage);
    history.push(...messages);
    if (history === this.#messages) this.#historyChars += rows.reduce((sum, [, data]) => sum + data.length, 0);
    this.#latest &&= {
      ...this.#latest,
      // As a read of the stored row would give it.
      ...(commit.handoff ? { lastHandoff: readHandoffRow(writeHandoff(commit.handoff)) } : {}),
      ...(commit.compaction ? { compaction: { replaces: commit.compaction.replaces, summary: commit.compaction.summary } } : {}),
    };
  }

  /**
   * A delegated agent's step (`path`: the delegating calls, outermost first) in its own history, with the events before it and
   * those it announces, in one transaction; what it spent counts toward the turn's and the conversation's spending.
   */
  commitDelegation(path: readonly string[], agent: string, commit: StepCommit, events: readonly StoredEvent[], asked = 0): void {
    const state = this.#requireState();
    this.#transaction(() => {
      this.#delegationRows(state.turn, path, agent, commit, asked);
      this.events.insert(state.turn, events);
      // The events the delegating step's calls were written ahead with are stored now: a recovery must not store them twice.
      this.#db.exec(`UPDATE calls_in_flight SET events = '[]' WHERE id = 1`);
    });
    this.#state = { ...state, lastEventId: events.at(-1)?.id ?? state.lastEventId };
    if (commit.usage) this.#turnUsage = addUsage(this.#turnUsage, commit.usage);
  }

  /**
   * A background delegation's step, in the delegated run's history under the turn that asked (`run.turn`), on its own: no
   * running turn's write goes with it. What it spent counts toward the conversation's spending.
   */
  commitBackgroundStep(
    run: { id: string; turn: number },
    step: { path: readonly string[]; agent: string; commit: StepCommit; asked: number },
  ): void {
    const { commit } = step;
    this.#db.transactionAlone(() => {
      this.#delegationRows(run.turn, step.path, step.agent, commit, step.asked);
      if (commit.usage) this.runs.spend(run.id, commit.usage);
    });
    if (commit.usage && this.#conversationUsage) this.#conversationUsage = addUsage(this.#conversationUsage, commit.usage);
  }

  /** A delegated step's rows: its messages in the run's history, and the run's state in the ledger where the step changed it. */
  #delegationRows(turn: number, path: readonly string[], agent: string, commit: StepCommit, asked: number): void {
    this.runs.step(turn, path, agent, commit, asked);
    this.#db.insertRows(
      "delegations (turn, path, agent, data)",
      commit.messages.map((message) => [turn, path.join("/"), agent, JSON.stringify(capMessage(message))]),
    );
  }

  /**
   * A delegated run as its steps left it (its holder and history, its wait, the asks its decisions took): of the current
   * turn unless `turn` says which (a background run's is under the turn that asked it).
   */
  readDelegation(path: readonly string[], turn = this.#requireState().turn): StoredDelegation | undefined {
    const run = this.runs.state(turn, path);
    if (!run) return undefined;
    return { conversation: { holding: run.holding, history: this.delegation(turn, path) }, suspension: run.suspension, asked: run.asked };
  }

  /** Turn `turn`'s delegated runs (in the background or not), in the order they began: each one's path, agent and history. */
  delegatedRuns(turn: number): DelegatedRun[] {
    const runs = new Map<string, DelegatedRun>();
    for (const row of this.#db.rows<{ path: string; agent: string; data: string }>(
      `SELECT path, agent, data FROM delegations WHERE turn = ? ORDER BY seq`,
      turn,
    )) {
      const run = runs.get(row.path) ?? { path: row.path.split("/"), agent: row.agent, messages: [] };
      run.messages.push(readRow(MessageSchema, row.data, "delegated run's message"));
      runs.set(row.path, run);
    }
    return [...runs.values()];
  }

  /** A delegated agent's history in turn `turn`, by the path of the calls that delegated it. */
  delegation(turn: number, path: readonly string[]): Message[] {
    return this.#db
      .rows<{ data: string }>(`SELECT data FROM delegations WHERE turn = ? AND path = ? ORDER BY seq`, turn, path.join("/"))
      .map((row) => readRow(MessageSchema, row.data, "message"));
  }

  /**
   * Ends the turn's leg with the outcome the run reported, its remaining events and its trace (one
   * row per turn, rewritten by a later leg; only the latest `keepTraces` turns keep theirs, none when it is 0).
   */
  endTurn(outcome: TurnOutcome, events: readonly StoredEvent[], trace?: TurnTrace, keepTraces = DEFAULT_KEPT_TRACES): void {
    const state = this.#requireState();
    this.#transaction(() => {
      this.events.insert(state.turn, events);
      if (trace) this.traces.keep(state.turn, trace, keepTraces);
      this.turns.end(state.turn, outcome, this.#turnUsage);
      this.#legOpen = false;
      this.#db.changed("entry");
    });
    this.#db.takeWritten();
    this.#state = { ...state, lastEventId: events.at(-1)?.id ?? state.lastEventId };
    if (this.#historyChars > this.#keptHistoryChars) this.#forgetHistory();
    if (this.#conversationUsage) this.#conversationUsage = addUsage(this.#conversationUsage, this.#turnUsage);
    this.#turnUsage = NO_USAGE;
  }

  /** Sets the token grant (a new one revokes the tokens issued under the old). */
  setGrant(grant: string): ConversationState {
    return this.#write({ ...this.#requireState(), grant });
  }

  async erase(): Promise<void> {
    await this.#db.deleteAll();
    this.protocolRows.forget();
    this.#state = null;
    this.#forgetHistory();
    this.#conversationUsage = null;
    this.#turnUsage = NO_USAGE;
    migrate(this.#db.sql);
    // Nothing is scheduled any more: no alarm wakes the object.
    this.#db.changed("schedule");
  }

  /**
   * A turn still marked running belongs to an instance that died mid-run: it failed. Its stream
   * gets a terminal error event, past the ids that may have been streamed but not stored, after
   * the answers of the calls it cut off (see settleCutOff), so the conversation is neither left
   * waiting on decisions already taken nor missing a call that may have run.
   */
  #recoverInterruptedTurn(): void {
    if (this.#db.rows(`SELECT turn FROM turns WHERE status = 'running' LIMIT 1`).length === 0) return;
    let id = this.events.lastId() + CRASH_ID_GAP;
    const state = this.state();
    const row = this.#db.rows<{ turn: number; data: string; events: string | null }>(
      `SELECT turn, data, events FROM calls_in_flight WHERE id = 1`,
    )[0];
    const inFlight = row && {
      turn: row.turn,
      calls: readRow(CallsInFlightSchema, row.data, "step's calls in flight"),
      events: readRow(EventsRowSchema, row.events ?? "[]", "events streamed before the calls in flight"),
    };
    const settled = state ? settleCutOff(state, this.messages(), inFlight) : { messages: [], answered: [], streamed: [] };
    // A leg cut off before its first write stored no start: it gets one, so the replay's legs each start with run-start.
    const cutOff = state && settled.streamed.length === 0;
    const legStart = cutOff ? recoveredLegStart(this.events, state.turn, state.conversationId, state.holding.activeAgent) : null;
    const start: StoredEvent[] = legStart ? [{ id: id++, ...legStart }] : [];
    const results: StoredEvent[] = settled.answered.map((m) => ({
      id: id++,
      type: "tool-result",
      toolCallId: m.toolCallId,
      name: m.name,
      result: m.content,
      isError: true,
      ...(m.approval?.approved === false ? { denied: true as const } : {}),
    }));
    const event: StoredEvent = {
      id,
      type: "error",
      code: "interrupted",
      message: "The run was interrupted (the conversation's process restarted); send the message again.",
    };
    this.#db.transaction(() => {
      for (const turn of this.turns.failRunning())
        this.events.insert(turn, [...(turn === state?.turn ? [...start, ...settled.streamed, ...results] : []), { ...event }]);
      if (!state) return;
      for (const message of settled.messages)
        this.#db.exec(`INSERT INTO messages (turn, data) VALUES (?, ?)`, state.turn, JSON.stringify(message));
      if (settled.suspension !== undefined) this.#writeState({ ...state, suspension: settled.suspension, decisions: [] });
    });
    this.#db.takeWritten();
    this.#state = null;
    this.#forgetHistory();
  }

  /** The history and its latest handoff and compaction are read again from storage when next asked for. */
  #forgetHistory(): void {
    this.#messages = null;
    this.#historyChars = 0;
    this.#latest = null;
  }

  /** Writes the state row (and `also`, in the same transaction) and keeps the state. */
  #write(state: ConversationState, also?: () => void): ConversationState {
    this.#transaction(() => {
      also?.();
      this.#writeState(state);
    });
    this.#state = state;
    return state;
  }

  /** Runs writes atomically; the cached state is restored if it fails. */
  #transaction(writes: () => void): void {
    const before = this.#state;
    try {
      this.#db.transaction(writes);
    } catch (error) {
      this.#state = before;
      throw error;
    }
  }

  /**
   * Writes what changed since `before`: the state row (what the inbox entry shows, the holder, the title, may have changed),
   * and the latest turn's wait, in its own row of the ledger.
   */
  #writeState(state: ConversationState, before = this.#state): void {
    const { lastEventId: _derived, turn: _turn, suspension, decisions, ...row } = state;
    if (!before || stateRowChanged(before, state)) {
      this.#db.exec(`INSERT OR REPLACE INTO state (id, data) VALUES (1, ?)`, writeStateRow(row));
      this.#db.changed("entry");
    }
    if (before?.suspension !== suspension || before.decisions !== decisions) {
      this.runs.storeTurnWait(state.holding.activeAgent, { suspension, decisions });
      this.#db.changed("entry");
    }
  }

  #requireState(): ConversationState {
    const state = this.state();
    if (!state) throw new Error("No turn has begun in this conversation.");
    return state;
  }
}

/** A batch's decisions on one run's wait. */
export interface WaitShare {
  wait: RunWait;
  decisions: readonly Decision[];
}

/** Whether the state row's own fields differ (the turn's wait is in the ledger). */
function stateRowChanged(before: ConversationState, after: ConversationState): boolean {
  return (
    before.holding !== after.holding ||
    before.conversationId !== after.conversationId ||
    before.grant !== after.grant ||
    before.owner !== after.owner ||
    before.createdAt !== after.createdAt ||
    before.title !== after.title ||
    before.archived !== after.archived
  );
}

/** A conversation no turn has touched yet: new, or a fork about to take its snapshot's rows. */
function freshState(conversationId: string, holding: Holding, grant: string, owner: string | undefined): ConversationState {
  return {
    conversationId,
    holding,
    suspension: null,
    decisions: [],
    grant,
    lastEventId: 0,
    turn: 0,
    createdAt: Date.now(),
    ...(owner === undefined ? {} : { owner }),
  };
}

/** A decision's activity row: an answer, an approval, a decline, or the alarm's decline of a request past its deadline. */
function decisionActivity(decision: Decision, by: OperatorIdentity | undefined): "answered" | "approved" | "denied" | "expired" {
  if (isAnswer(decision)) return "answered";
  if (decision.approved) return "approved";
  return decision.reason === EXPIRED && !by ? "expired" : "denied";
}
