import {
  addUsage,
  applyCommit,
  type ApprovalDecision,
  type CallerFrame,
  type Compaction,
  type HandoffRecord,
  type Message,
  NO_USAGE,
  settleInterrupted,
  type StepCommit,
  type Suspension,
  type TurnOutcome,
  type UsageTotals,
} from "../runtime/index.ts";
import { capEvent, capMessage } from "./stored-size-limits.ts";
import type { TurnTrace } from "./turn-trace.ts";
import { migrate } from "./schema.ts";
import type { StoredEvent } from "../wire/index.ts";

/** What the state row holds; it is written only when one of these changes. */
interface StoredState {
  conversationId: string;
  activeAgent: string;
  /** Accepted transfers over the conversation's life. */
  handoffCount: number;
  /** The suspended step of the latest turn, while it waits for approvals. */
  suspension: Suspension | null;
  /** Decisions taken so far on the suspension's pending calls. */
  decisions: ApprovalDecision[];
  /** What handoffs have carried (typed handoff input). */
  context: Record<string, unknown>;
  /** Agents waiting for the conversation to come back (returning handoffs), the next to get it last. */
  callers: CallerFrame[];
  /** Each agent's own state, by name. */
  agentStates: Record<string, Record<string, unknown>>;
  /**
   * Bound into every conversation token's signature: a token passes only while it matches, so
   * deleting the conversation (or rotating it) revokes every token issued before. Absent on
   * conversations stored before tokens carried it, until the master key issues one.
   */
  grant?: string;
}

/**
 * The conversation's state. The latest turn and event id are read back from the turns and events
 * tables rather than written on every step: a step writes its messages and events, and the state
 * row only when the active agent, the counters, a suspension or the context change.
 */
export interface ConversationState extends StoredState {
  lastEventId: number;
  /** The number of the latest turn; 0 before the first message. */
  turn: number;
}

/**
 * Event ids skipped after a crash. Events of the step in flight were streamed but never stored;
 * the next ids start past any of them, so a reconnecting client cannot mistake new events for
 * ones it already has.
 */
const CRASH_ID_GAP = 100_000;

/** An events row stays well under SQLite's 2 MB row limit however much a step streamed. */
const EVENT_ROW_CHARS = 512 * 1024;

/** A stored turn: running, ended with its outcome's status, or rewound to run again. */
export type StoredTurnStatus = "running" | TurnOutcome["status"] | "rewound";

/** A conversation's rows up to a turn, and its state after that turn: what a fork starts from. */
export interface ForkSnapshot {
  activeAgent: string;
  handoffCount: number;
  context: Record<string, unknown>;
  callers: CallerFrame[];
  agentStates: Record<string, Record<string, unknown>>;
  messages: Array<{ turn: number; data: string }>;
  handoffs: Array<{ turn: number; data: string }>;
  compactions: Array<{ turn: number; replaces: number; summary: string; agent: string }>;
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

/** Traces kept per conversation: the latest turns'. */
export const DEFAULT_KEPT_TRACES = 50;

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

/** What a turn started from: the user's message and the state a rewind returns to. */
export interface TurnOpening {
  message: string;
  activeAgent: string;
  handoffCount: number;
  context: Record<string, unknown>;
  /** Absent on turns stored before returning handoffs. */
  callers?: CallerFrame[];
  /** Absent on turns stored before agents kept states. */
  agentStates?: Record<string, Record<string, unknown>>;
}

export interface StoredHandoff extends HandoffRecord {
  turn: number;
}

export interface TurnRecord {
  turn: number;
  status: StoredTurnStatus;
  error: string | null;
  rowsWritten: number;
  bytesWritten: number;
}

/**
 * The conversation's SQLite storage. History is appended one row per message and kept in memory
 * after the first read, so a turn writes only what it adds and reads the history once per start.
 * Every write counts its rows and bytes into the turn, for the storage figures.
 */
export class ConversationStore {
  readonly #storage: DurableObjectStorage;
  readonly #sql: SqlStorage;
  #state: ConversationState | null = null;
  #messages: Message[] | null = null;
  #written = { rows: 0, bytes: 0 };
  /** What the current turn spent so far; written with the turn's end. */
  #turnUsage: UsageTotals = NO_USAGE;
  #conversationUsage: UsageTotals | null = null;
  /** A turn begun but not yet written: its row goes in with the turn's first write. */
  #unwrittenTurn: { turn: number; startedAt: number; opening: TurnOpening | null } | null = null;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.#sql = storage.sql;
    migrate(this.#sql);
    this.#recoverInterruptedTurn();
  }

  state(): ConversationState | null {
    if (this.#state === null) {
      const row = this.#sql.exec<{ data: string }>(`SELECT data FROM state WHERE id = 1`).toArray()[0];
      if (row) {
        const {
          lastEventId: _stale,
          turn: _staleTurn,
          ...stored
        } = JSON.parse(row.data) as StoredState & { lastEventId?: number; turn?: number };
        const turn = this.#sql.exec<{ turn: number | null }>(`SELECT max(turn) AS turn FROM turns`).one().turn ?? 0;
        // Conversations stored before returning handoffs have no caller stack.
        this.#state = {
          ...stored,
          callers: stored.callers ?? [],
          agentStates: stored.agentStates ?? {},
          turn,
          lastEventId: this.#maxEventId(),
        };
      }
    }
    return this.#state;
  }

  messages(): readonly Message[] {
    if (this.#messages === null) {
      this.#messages = this.#sql
        .exec<{ data: string }>(`SELECT data FROM messages ORDER BY seq`)
        .toArray()
        .map((row) => JSON.parse(row.data) as Message);
    }
    return this.#messages;
  }

  handoffs(): StoredHandoff[] {
    return this.#sql
      .exec<{ turn: number; data: string }>(`SELECT turn, data FROM handoffs ORDER BY seq`)
      .toArray()
      .map((row) => ({ turn: row.turn, ...(JSON.parse(row.data) as HandoffRecord) }));
  }

  /** What the conversation has spent, its current turn included. */
  usage(): UsageTotals {
    if (this.#conversationUsage === null) {
      const row = this.#sql
        .exec<{ m: number | null; i: number | null; o: number | null; t: number | null }>(
          `SELECT sum(model_calls) AS m, sum(input_tokens) AS i, sum(output_tokens) AS o, sum(tool_calls) AS t FROM turns`,
        )
        .one();
      this.#conversationUsage = { modelCalls: row.m ?? 0, inputTokens: row.i ?? 0, outputTokens: row.o ?? 0, toolCalls: row.t ?? 0 };
    }
    return addUsage(this.#conversationUsage, this.#turnUsage);
  }

  compactions(): Array<Compaction & { turn: number; agent: string }> {
    return this.#sql
      .exec<{ turn: number; replaces: number; summary: string; agent: string }>(
        `SELECT turn, replaces, summary, agent FROM compactions ORDER BY seq`,
      )
      .toArray();
  }

  latestCompaction(): Compaction | undefined {
    const row = this.#sql
      .exec<{ replaces: number; summary: string }>(`SELECT replaces, summary FROM compactions ORDER BY seq DESC LIMIT 1`)
      .toArray()[0];
    return row && { replaces: row.replaces, summary: row.summary };
  }

  lastHandoff(): HandoffRecord | undefined {
    const row = this.#sql.exec<{ data: string }>(`SELECT data FROM handoffs ORDER BY seq DESC LIMIT 1`).toArray()[0];
    return row && (JSON.parse(row.data) as HandoffRecord);
  }

  turn(turn: number): TurnRecord | undefined {
    const row = this.#sql
      .exec<{ turn: number; status: string; error: string | null; rows_written: number; bytes_written: number }>(
        `SELECT turn, status, error, rows_written, bytes_written FROM turns WHERE turn = ?`,
        turn,
      )
      .toArray()[0];
    return (
      row && {
        turn: row.turn,
        status: row.status as StoredTurnStatus,
        error: row.error,
        rowsWritten: row.rows_written,
        bytesWritten: row.bytes_written,
      }
    );
  }

  /** Stores an empty conversation held by the entry agent, unless one exists. */
  create(conversationId: string, entryAgent: string, grant: string): ConversationState {
    const existing = this.state();
    if (existing) return existing;
    const state: ConversationState = {
      conversationId,
      activeAgent: entryAgent,
      handoffCount: 0,
      lastEventId: 0,
      turn: 0,
      suspension: null,
      decisions: [],
      context: {},
      callers: [],
      agentStates: {},
      grant,
    };
    this.#transaction(() => this.#writeState(state));
    this.#state = state;
    return state;
  }

  /**
   * Opens a new turn for a user message. Its row is written with the turn's first commit, not
   * here: a Durable Object holds its answers until its writes are durable, so a write now would
   * delay the stream's first byte by a storage flush while the model has not even been asked.
   */
  beginTurn(message?: string): ConversationState {
    const previous = this.#requireState();
    const next: ConversationState = { ...previous, turn: previous.turn + 1 };
    const opening =
      message === undefined
        ? null
        : {
            message,
            activeAgent: previous.activeAgent,
            handoffCount: previous.handoffCount,
            context: previous.context,
            callers: previous.callers,
            agentStates: previous.agentStates,
          };
    this.#unwrittenTurn = { turn: next.turn, startedAt: Date.now(), opening };
    this.#state = next;
    return next;
  }

  /**
   * Rewinds the latest turn to where it started: its messages, handoffs and compactions go, and the
   * active agent, the handoff count and the context return to what they were; a suspension and its
   * decisions go with it. The turn's row stays, marked `rewound` with what was removed (counts, not
   * content), and keeps what it spent. Null when the turn cannot be rewound (none, or stored before
   * turns recorded their opening).
   */
  rewindLastTurn(): TurnOpening | null {
    const state = this.#requireState();
    const row = this.#sql.exec<{ opening: string | null }>(`SELECT opening FROM turns WHERE turn = ?`, state.turn).toArray()[0];
    if (!row?.opening) return null;
    const opening = JSON.parse(row.opening) as TurnOpening;
    const count = (table: string) => this.#sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE turn = ?`, state.turn).one().n;
    const removed = { messages: count("messages"), handoffs: count("handoffs"), compactions: count("compactions") };
    const next: ConversationState = {
      ...state,
      activeAgent: opening.activeAgent,
      handoffCount: opening.handoffCount,
      context: opening.context,
      callers: opening.callers ?? [],
      agentStates: opening.agentStates ?? {},
      suspension: null,
      decisions: [],
    };
    this.#transaction(() => {
      for (const table of ["messages", "handoffs", "compactions"]) this.#exec(`DELETE FROM ${table} WHERE turn = ?`, state.turn);
      this.#exec(`UPDATE turns SET status = 'rewound', rewound = ? WHERE turn = ?`, JSON.stringify(removed), state.turn);
      this.#writeState(next);
    });
    this.#state = next;
    this.#messages = null;
    return opening;
  }

  /**
   * The conversation as it stood after `afterTurn`: its rows up to that turn, and the holder, the
   * handoff count and the context after it (from the next turn's opening, or the current state
   * after the last turn). Null when a later turn began before turns recorded their opening.
   */
  forkSnapshot(afterTurn: number): ForkSnapshot | null {
    const state = this.#requireState();
    const rows = <T>(query: string) => this.#sql.exec<T & Record<string, SqlStorageValue>>(query, afterTurn).toArray() as T[];
    const later = this.#sql
      .exec<{ opening: string | null }>(`SELECT opening FROM turns WHERE turn > ? ORDER BY turn LIMIT 1`, afterTurn)
      .toArray()[0];
    if (afterTurn < state.turn && !later?.opening) return null;
    const after = later?.opening ? (JSON.parse(later.opening) as TurnOpening) : state;
    return {
      activeAgent: after.activeAgent,
      handoffCount: after.handoffCount,
      context: after.context,
      callers: after.callers ?? [],
      agentStates: after.agentStates ?? {},
      messages: rows<{ turn: number; data: string }>(`SELECT turn, data FROM messages WHERE turn <= ? ORDER BY seq`),
      handoffs: rows<{ turn: number; data: string }>(`SELECT turn, data FROM handoffs WHERE turn <= ? ORDER BY seq`),
      compactions: rows<ForkSnapshot["compactions"][number]>(
        `SELECT turn, replaces, summary, agent FROM compactions WHERE turn <= ? ORDER BY seq`,
      ),
      turns: rows<ForkSnapshot["turns"][number]>(
        `SELECT turn, status, started_at, ended_at, error, model_calls, input_tokens, output_tokens, tool_calls, opening FROM turns WHERE turn <= ? ORDER BY turn`,
      ),
    };
  }

  /** Stores a new conversation from another's snapshot: its rows as they were, a state of its own, no events. */
  importFork(conversationId: string, grant: string, snapshot: ForkSnapshot): ConversationState {
    const { activeAgent, handoffCount, context, callers, agentStates } = snapshot;
    const state: ConversationState = {
      conversationId,
      activeAgent,
      handoffCount,
      context,
      callers,
      agentStates,
      suspension: null,
      decisions: [],
      grant,
      lastEventId: 0,
      turn: 0,
    };
    this.#transaction(() => {
      for (const m of snapshot.messages) this.#exec(`INSERT INTO messages (turn, data) VALUES (?, ?)`, m.turn, m.data);
      for (const h of snapshot.handoffs) this.#exec(`INSERT INTO handoffs (turn, data) VALUES (?, ?)`, h.turn, h.data);
      for (const c of snapshot.compactions) {
        this.#exec(`INSERT INTO compactions (turn, replaces, summary, agent) VALUES (?, ?, ?, ?)`, c.turn, c.replaces, c.summary, c.agent);
      }
      for (const t of snapshot.turns) {
        this.#exec(
          `INSERT INTO turns (turn, status, started_at, ended_at, error, model_calls, input_tokens, output_tokens, tool_calls, opening) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          t.turn,
          t.status,
          t.started_at,
          t.ended_at,
          t.error,
          t.model_calls,
          t.input_tokens,
          t.output_tokens,
          t.tool_calls,
          t.opening,
        );
      }
      this.#writeState(state);
    });
    this.#state = null;
    this.#messages = null;
    this.#conversationUsage = null;
    return this.state()!;
  }

  /** Records decisions on the suspension; the turn is marked running again when `resume` is set. */
  recordDecisions(decisions: readonly ApprovalDecision[], resume: boolean): ConversationState {
    const state = this.#requireState();
    const next: ConversationState = { ...state, decisions: [...state.decisions, ...decisions] };
    this.#transaction(() => {
      if (resume) this.#exec(`UPDATE turns SET status = 'running', ended_at = NULL WHERE turn = ?`, state.turn);
      this.#writeState(next);
    });
    this.#state = next;
    return next;
  }

  /** Commits one step and the events produced so far, in one transaction. */
  commitStep(commit: StepCommit, events: readonly StoredEvent[]): void {
    const state = this.#requireState();
    const messages = commit.messages.map(capMessage);
    const next: ConversationState = {
      ...applyCommit(state, commit),
      lastEventId: events.at(-1)?.id ?? state.lastEventId,
      // Decisions belong to the suspension they decide.
      ...(commit.suspension === undefined ? {} : { decisions: [] }),
    };
    const stateChanged =
      next.activeAgent !== state.activeAgent ||
      commit.handoff !== undefined ||
      commit.suspension !== undefined ||
      commit.context !== undefined ||
      commit.agentStates !== undefined ||
      commit.callers !== undefined;
    this.#transaction(() => {
      for (const message of messages) this.#exec(`INSERT INTO messages (turn, data) VALUES (?, ?)`, state.turn, JSON.stringify(message));
      if (commit.handoff) this.#exec(`INSERT INTO handoffs (turn, data) VALUES (?, ?)`, state.turn, JSON.stringify(commit.handoff));
      if (commit.compaction) {
        this.#exec(
          `INSERT INTO compactions (turn, replaces, summary, agent) VALUES (?, ?, ?, ?)`,
          state.turn,
          commit.compaction.replaces,
          commit.compaction.summary,
          next.activeAgent,
        );
      }
      this.#insertEvents(state.turn, events);
      if (stateChanged) this.#writeState(next);
    });
    this.#state = next;
    if (commit.usage) this.#turnUsage = addUsage(this.#turnUsage, commit.usage);
    this.messages();
    this.#messages!.push(...messages);
  }

  /**
   * Ends the turn's leg with the outcome the run reported, its remaining events and its trace (one
   * row per turn, rewritten by a later leg; only the latest `keepTraces` turns keep theirs, none when it is 0).
   */
  endTurn(outcome: TurnOutcome, events: readonly StoredEvent[], trace?: TurnTrace, keepTraces = DEFAULT_KEPT_TRACES): void {
    const state = this.#requireState();
    const next: ConversationState = { ...state, lastEventId: events.at(-1)?.id ?? state.lastEventId };
    this.#transaction(() => {
      this.#insertEvents(state.turn, events);
      if (trace && keepTraces > 0) {
        // The slot of a turn `keepTraces` turns back is taken over: one row written, none deleted.
        this.#exec(
          `INSERT INTO traces (slot, turn, data) VALUES (?, ?, ?) ON CONFLICT (slot) DO UPDATE SET turn = excluded.turn, data = excluded.data`,
          state.turn % keepTraces,
          state.turn,
          JSON.stringify(trace),
        );
      }
      // Counted before this last write, which is the turn's own bookkeeping.
      this.#exec(
        `UPDATE turns SET status = ?, ended_at = ?, error = ?, rows_written = rows_written + ?, bytes_written = bytes_written + ?,
           model_calls = model_calls + ?, input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, tool_calls = tool_calls + ? WHERE turn = ?`,
        outcome.status,
        Date.now(),
        outcome.status === "failed" ? outcome.code : null,
        this.#written.rows + 1,
        this.#written.bytes,
        this.#turnUsage.modelCalls,
        this.#turnUsage.inputTokens,
        this.#turnUsage.outputTokens,
        this.#turnUsage.toolCalls,
        state.turn,
      );
    });
    this.#state = next;
    this.#written = { rows: 0, bytes: 0 };
    if (this.#conversationUsage) this.#conversationUsage = addUsage(this.#conversationUsage, this.#turnUsage);
    this.#turnUsage = NO_USAGE;
  }

  /**
   * Reads one turn's stored events with an id above `afterId` (and below `beforeId`), a row per
   * call, so a replay holds one row in memory however large the turn; null after the last.
   */
  storedEvents(turn: number, afterId: number, beforeId = Number.POSITIVE_INFINITY): () => StoredEvent[] | null {
    type Row = { first_id: number; turn: number; data: string };
    let cursor: number | null = null;
    return () => {
      const row =
        cursor === null
          ? this.#sql
              .exec<Row>(`SELECT first_id, turn, data FROM events WHERE turn = ? AND last_id > ? ORDER BY first_id LIMIT 1`, turn, afterId)
              .toArray()[0]
          : this.#sql
              .exec<Row>(`SELECT first_id, turn, data FROM events WHERE first_id > ? ORDER BY first_id LIMIT 1`, cursor)
              .toArray()[0];
      if (!row || row.turn !== turn || row.first_id >= beforeId) return null;
      cursor = row.first_id;
      return (JSON.parse(row.data) as StoredEvent[]).filter((event) => event.id > afterId && event.id < beforeId);
    };
  }

  /** A turn's trace, while it is kept. */
  trace(turn: number): TurnTrace | undefined {
    const row = this.#sql.exec<{ data: string }>(`SELECT data FROM traces WHERE turn = ?`, turn).toArray()[0];
    return row && (JSON.parse(row.data) as TurnTrace);
  }

  /** Every turn, oldest first: its status, times, usage, and the handoffs it made. */
  turns(): TurnSummary[] {
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
    const handoffs = new Map<number, StoredHandoff[]>();
    for (const h of this.handoffs()) {
      const ofTurn = handoffs.get(h.turn);
      if (ofTurn) ofTurn.push(h);
      else handoffs.set(h.turn, [h]);
    }
    let holder: string | undefined;
    return this.#sql
      .exec<Row>(
        `SELECT turn, status, started_at, ended_at, error, opening, model_calls AS m, input_tokens AS i, output_tokens AS o, tool_calls AS t FROM turns ORDER BY turn`,
      )
      .toArray()
      .map((row) => {
        const made = (handoffs.get(row.turn) ?? []).map(({ turn: _turn, ...h }) => h);
        // Who held the conversation when the turn began (turns stored before openings were: who held it after the last one).
        const first = row.opening ? (JSON.parse(row.opening) as TurnOpening).activeAgent : (holder ?? made[0]?.from);
        const agents = [...(first ? [first] : []), ...made.map((h) => h.to)];
        holder = agents.at(-1);
        return {
          turn: row.turn,
          status: row.status as StoredTurnStatus,
          startedAt: row.started_at,
          endedAt: row.ended_at,
          durationMs: row.ended_at === null ? null : row.ended_at - row.started_at,
          error: row.error,
          agents,
          usage: { modelCalls: row.m, inputTokens: row.i, outputTokens: row.o, toolCalls: row.t },
          handoffs: made,
        };
      });
  }

  /** Sets the token grant (a new one revokes the tokens issued under the old). */
  setGrant(grant: string): ConversationState {
    const next: ConversationState = { ...this.#requireState(), grant };
    this.#transaction(() => this.#writeState(next));
    this.#state = next;
    return next;
  }

  async erase(): Promise<void> {
    await this.#storage.deleteAll();
    this.#state = null;
    this.#messages = null;
    this.#conversationUsage = null;
    this.#turnUsage = NO_USAGE;
    migrate(this.#sql);
  }

  /** Packs events several to a row, starting a new row before one would pass EVENT_ROW_CHARS. */
  #insertEvents(turn: number, events: readonly StoredEvent[]): void {
    let row: string[] = [];
    let size = 0;
    let first = 0;
    const flush = (last: number) => {
      if (row.length === 0) return;
      this.#exec(`INSERT INTO events (first_id, last_id, turn, data) VALUES (?, ?, ?, ?)`, first, last, turn, `[${row.join(",")}]`);
      row = [];
      size = 0;
    };
    for (const [i, event] of events.entries()) {
      const json = JSON.stringify(capEvent(event));
      if (size + json.length > EVENT_ROW_CHARS) flush(events[i - 1]!.id);
      if (row.length === 0) first = event.id;
      row.push(json);
      size += json.length + 1;
    }
    flush(events.at(-1)?.id ?? 0);
  }

  #writeState(state: ConversationState): void {
    const { lastEventId: _derived, turn: _derivedTurn, ...stored } = state;
    this.#exec(`INSERT OR REPLACE INTO state (id, data) VALUES (1, ?)`, JSON.stringify(stored satisfies StoredState));
  }

  #maxEventId(): number {
    return this.#sql.exec<{ id: number | null }>(`SELECT max(last_id) AS id FROM events`).one().id ?? 0;
  }

  /**
   * A turn still marked running belongs to an instance that died mid-run: it failed. Its stream
   * gets a terminal error event, past the ids that may have been streamed but not stored. If it
   * died while approved calls ran, their step is settled so the conversation is not left waiting
   * on decisions already taken: see settleInterrupted.
   */
  #recoverInterruptedTurn(): void {
    const running = this.#sql.exec<{ turn: number }>(`SELECT turn FROM turns WHERE status = 'running'`).toArray();
    if (running.length === 0) return;
    let id = this.#maxEventId() + CRASH_ID_GAP;
    const state = this.state();
    const settled = state?.suspension && state.decisions.length > 0 ? settleInterrupted(state.suspension, state.decisions) : null;
    const results: StoredEvent[] = (settled?.answered ?? []).map((m) => ({
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
    this.#storage.transactionSync(() => {
      this.#sql.exec(`UPDATE turns SET status = 'failed', ended_at = ?, error = 'interrupted' WHERE status = 'running'`, Date.now());
      for (const { turn } of running) this.#insertEvents(turn, [...(turn === state?.turn ? results : []), { ...event }]);
      if (state && settled) {
        for (const message of settled.complete ?? [])
          this.#sql.exec(`INSERT INTO messages (turn, data) VALUES (?, ?)`, state.turn, JSON.stringify(message));
        this.#writeState({ ...state, suspension: settled.suspension, decisions: [] });
      }
    });
    this.#written = { rows: 0, bytes: 0 };
    this.#state = null;
    this.#messages = null;
  }

  /** Runs writes atomically, with the row of a turn begun since; the cached state is restored if it fails. */
  #transaction(writes: () => void): void {
    const before = this.#state;
    const unwritten = this.#unwrittenTurn;
    try {
      this.#storage.transactionSync(() => {
        if (unwritten) {
          const opening = unwritten.opening && JSON.stringify(unwritten.opening);
          this.#exec(
            `INSERT INTO turns (turn, status, started_at, opening) VALUES (?, 'running', ?, ?)`,
            unwritten.turn,
            unwritten.startedAt,
            opening,
          );
        }
        writes();
      });
      this.#unwrittenTurn = null;
    } catch (error) {
      this.#state = before;
      throw error;
    }
  }

  #exec(query: string, ...bindings: Array<string | number | null>): void {
    const cursor = this.#sql.exec(query, ...bindings);
    this.#written.rows += cursor.rowsWritten;
    for (const value of bindings) this.#written.bytes += typeof value === "string" ? value.length : 8;
  }

  #requireState(): ConversationState {
    const state = this.state();
    if (!state) throw new Error("No turn has begun in this conversation.");
    return state;
  }
}
