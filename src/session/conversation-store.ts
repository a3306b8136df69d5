import type { HandoffRecord, Message, StepCommit } from "../runtime/index.ts";
import { migrate } from "./schema.ts";
import type { StoredEvent } from "./sse.ts";

export interface ConversationState {
  conversationId: string;
  activeAgent: string;
  /** Accepted transfers over the conversation's life. */
  handoffCount: number;
  lastEventId: number;
  /** The number of the latest turn; 0 before the first message. */
  turn: number;
}

export type TurnOutcome = "completed" | "failed" | "awaiting_approval";

export interface StoredHandoff extends HandoffRecord {
  turn: number;
}

/** Stored values above this are cut before they are written, far below the 2 MB row limit. */
export const MAX_STORED_CONTENT = 256 * 1024;

/**
 * The conversation's SQLite storage. History is appended one row per message and kept in memory
 * after the first read, so a turn writes only what it adds and reads the history once per start.
 */
export class ConversationStore {
  readonly #storage: DurableObjectStorage;
  readonly #sql: SqlStorage;
  #state: ConversationState | null = null;
  #messages: Message[] | null = null;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.#sql = storage.sql;
    migrate(this.#sql);
    // A turn still marked running belongs to an instance that died mid-run: it failed.
    this.#sql.exec(
      `UPDATE turns SET status = 'failed', ended_at = ?, error = 'interrupted' WHERE status = 'running'`,
      Date.now(),
    );
  }

  state(): ConversationState | null {
    if (this.#state === null) {
      const row = this.#sql.exec<{ data: string }>(`SELECT data FROM state WHERE id = 1`).toArray()[0];
      this.#state = row ? (JSON.parse(row.data) as ConversationState) : null;
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

  beginTurn(initial: Omit<ConversationState, "turn" | "lastEventId" | "handoffCount">): ConversationState {
    const previous = this.state();
    const next: ConversationState = previous
      ? { ...previous, turn: previous.turn + 1 }
      : { ...initial, handoffCount: 0, lastEventId: 0, turn: 1 };
    this.#storage.transactionSync(() => {
      this.#sql.exec(`INSERT INTO turns (turn, status, started_at) VALUES (?, 'running', ?)`, next.turn, Date.now());
      this.#writeState(next);
    });
    return next;
  }

  /** Commits one step and the events produced so far, in one transaction. */
  commitStep(commit: StepCommit, events: readonly StoredEvent[]): void {
    const state = this.#requireState();
    const messages = commit.messages.map(capMessage);
    const next: ConversationState = {
      ...state,
      activeAgent: commit.activeAgent,
      handoffCount: state.handoffCount + (commit.handoff ? 1 : 0),
      lastEventId: events.at(-1)?.id ?? state.lastEventId,
    };
    this.#storage.transactionSync(() => {
      for (const message of messages) {
        this.#sql.exec(`INSERT INTO messages (turn, data) VALUES (?, ?)`, state.turn, JSON.stringify(message));
      }
      if (commit.handoff) {
        this.#sql.exec(`INSERT INTO handoffs (turn, data) VALUES (?, ?)`, state.turn, JSON.stringify(commit.handoff));
      }
      this.#insertEvents(state.turn, events);
      this.#writeState(next);
    });
    this.messages();
    this.#messages!.push(...messages);
  }

  /** Ends the turn: its remaining events and its outcome. */
  endTurn(outcome: TurnOutcome, events: readonly StoredEvent[], error?: string): void {
    const state = this.#requireState();
    const next: ConversationState = { ...state, lastEventId: events.at(-1)?.id ?? state.lastEventId };
    this.#storage.transactionSync(() => {
      this.#insertEvents(state.turn, events);
      this.#sql.exec(
        `UPDATE turns SET status = ?, ended_at = ?, error = ? WHERE turn = ?`,
        outcome,
        Date.now(),
        error ?? null,
        state.turn,
      );
      this.#writeState(next);
    });
  }

  /** The events of one turn with an id above `afterId`, in order. */
  eventsAfter(turn: number, afterId: number): StoredEvent[] {
    return this.#sql
      .exec<{ data: string }>(`SELECT data FROM events WHERE turn = ? AND last_id > ? ORDER BY first_id`, turn, afterId)
      .toArray()
      .flatMap((row) => JSON.parse(row.data) as StoredEvent[])
      .filter((event) => event.id > afterId);
  }

  turnStatus(turn: number): string | undefined {
    return this.#sql.exec<{ status: string }>(`SELECT status FROM turns WHERE turn = ?`, turn).toArray()[0]?.status;
  }

  async erase(): Promise<void> {
    await this.#storage.deleteAll();
    this.#state = null;
    this.#messages = null;
    migrate(this.#sql);
  }

  #insertEvents(turn: number, events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    this.#sql.exec(
      `INSERT INTO events (first_id, last_id, turn, data) VALUES (?, ?, ?, ?)`,
      events[0]!.id,
      events.at(-1)!.id,
      turn,
      JSON.stringify(events),
    );
  }

  #writeState(state: ConversationState): void {
    this.#sql.exec(`INSERT OR REPLACE INTO state (id, data) VALUES (1, ?)`, JSON.stringify(state));
    this.#state = state;
  }

  #requireState(): ConversationState {
    const state = this.state();
    if (!state) throw new Error("No turn has begun in this conversation.");
    return state;
  }
}

/** Cuts an oversized message's content with a visible marker, so a huge tool output never fails a commit. */
function capMessage(message: Message): Message {
  if (typeof message.content !== "string" || message.content.length <= MAX_STORED_CONTENT) return message;
  const cut = message.content.length - MAX_STORED_CONTENT;
  return { ...message, content: `${message.content.slice(0, MAX_STORED_CONTENT)}\n[truncated: ${cut} more characters]` };
}
