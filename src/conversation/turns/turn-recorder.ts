import type { CallsInFlight } from "../../runtime/calls-in-flight.ts";
import type { RunEvent, TurnOutcome } from "../../runtime/events.ts";
import type { HandoffRecord } from "../../runtime/handoff/types.ts";
import { NestedRedaction, type Redactor, StreamingRedaction } from "../../runtime/redact.ts";
import type { TurnItem } from "../../runtime/run-options.ts";
import type { StepCommit } from "../../runtime/ports/store-port.ts";
import type { StoredEvent } from "../../wire/sse.ts";
import type { ConversationStore } from "../storage/conversation-store.ts";
import type { TurnBroadcast } from "./turn-broadcast.ts";
import type { TraceBuilder, TurnTrace } from "../../traces/turn-trace.ts";

/** The trace a recorder feeds: its builder, and which turn of which conversation. */
export interface TraceTarget {
  builder: TraceBuilder;
  conversationId: string;
  turn: number;
  /** Turns whose trace the conversation keeps. */
  keep: number;
}

/** What a client is told when storage fails a turn: the cause is for the operator's log, not the client. */
export const NOT_STORED = "The turn could not be stored.";

/**
 * Records one leg of a turn as the run's items arrive, in one direction: each event is redacted,
 * numbered and published; each commit is stored with the events that came before it and the events
 * it announces, in one transaction (a crash keeps both or neither), and those are published once it
 * is stored; a step's calls are written ahead with a copy of the events so far; the outcome the run
 * reports ends the turn, and the leg's `done` or `error` is published once that end is stored. Text
 * deltas (a delegated run's too, a stream per run) go through a streaming redaction, so a secret
 * split across deltas is caught too; what it holds back is sent before the next item of another kind.
 * Each event also goes to the turn's trace, with the time it arrived.
 */
export class TurnRecorder {
  readonly #store: ConversationStore;
  readonly #redactor: Redactor;
  readonly #broadcast: TurnBroadcast;
  readonly #text: StreamingRedaction;
  /** Delegated runs' text, a stream per run. */
  readonly #nested: NestedRedaction;
  #nextId: number;
  #pending: StoredEvent[] = [];
  /** The leg's last event (`done` or `error`): readers get it once the leg's end is stored, so it never says more than storage holds. */
  #last: StoredEvent | null = null;
  #ended = false;
  readonly #trace: TraceTarget;
  /** The changes of hands this leg made (a resumed leg's trace also holds the earlier legs'). */
  readonly handoffs: HandoffRecord[] = [];

  constructor(store: ConversationStore, redactor: Redactor, broadcast: TurnBroadcast, firstId: number, trace: TraceTarget) {
    this.#store = store;
    this.#redactor = redactor;
    this.#broadcast = broadcast;
    this.#text = new StreamingRedaction(redactor);
    this.#nested = new NestedRedaction(redactor);
    this.#nextId = firstId;
    this.#trace = trace;
  }

  /** Throws only when storing a commit fails; the run is told with `throw()` and ends with an error event. */
  record(item: TurnItem): void {
    if (item.type === "text-delta") {
      const delta = this.#text.push(item.delta);
      if (delta) this.#publish({ type: "text-delta", delta });
      return;
    }
    this.#flushText();
    if (item.type === "delegated") {
      for (const event of this.#nested.take(item)) this.#publish(event);
      return;
    }
    // Delegated runs' held text goes before a step is stored (their steps' events come after it) and before the leg's end.
    for (const event of this.#nested.flush()) this.#publish(event);
    if (item.type === "commit") this.#commit(item.commit, item.events);
    else if (item.type === "delegation-commit") this.#commitDelegation(item);
    else if (item.type === "calls") this.#recordCalls(item.calls);
    else this.#publish(this.#redactor.value(item));
  }

  /** Ends the leg: stores what is left and the trace, and returns the trace. */
  end(outcome: TurnOutcome): TurnTrace {
    this.#flushText();
    for (const event of this.#nested.flush()) this.#publish(event);
    const { builder, turn, keep } = this.#trace;
    const trace = builder.finish(turn, outcome, Date.now());
    this.#store.endTurn(outcome, this.#pending, trace, keep);
    this.#pending = [];
    if (this.#last) this.#send(this.#last);
    this.#log(trace, outcome);
    return trace;
  }

  /** One JSON line per turn leg and per handoff, for Workers Logs: ids, names and counts, no content. */
  #log(trace: TurnTrace, outcome: TurnOutcome): void {
    const { conversationId, turn } = this.#trace;
    const root = trace.spans.find((s) => s.kind === "turn")!;
    // An agent's tenure can span several agent spans (a resumed leg starts a new one): each holder once in a row.
    const agents = trace.spans
      .filter((s) => s.kind === "agent")
      .map((s) => s.name)
      .filter((name, i, names) => name !== names[i - 1]);
    for (const { kind, from, to } of this.handoffs) {
      console.log(this.#redactor.text(JSON.stringify({ event: "handoff", conversationId, turn, kind, from, to })));
    }
    const line = { event: "turn", conversationId, turn, status: outcome.status, agents, durationMs: (root.end ?? root.start) - root.start };
    console.log(this.#redactor.text(JSON.stringify(line)));
  }

  /**
   * Storage failed outside a commit: the stream ends with an error, and the turn is marked failed if it still can be. Once the
   * leg's end is stored (its last event sent), what failed came after it, and the turn stays as it ended.
   */
  fail(): void {
    if (this.#ended) return;
    this.#broadcast.publish({ id: this.#nextId++, type: "error", code: "internal_error", message: NOT_STORED });
    try {
      this.#store.endTurn({ status: "failed", code: "internal_error" }, []);
    } catch {
      // The store marks a turn left running as failed on the object's next start.
    }
  }

  /** The step, the events before it and the events it announces, in one transaction; those are published once it is stored. */
  #commit(commit: StepCommit, announced: readonly RunEvent[]): void {
    const events = this.#redactor.value(announced).map((event, i): StoredEvent => ({ id: this.#nextId + i, ...event }));
    this.#store.commitStep(this.#redactor.value(commit), [...this.#pending, ...events]);
    this.#nextId += events.length;
    this.#pending = [];
    for (const event of events) {
      this.#note(event);
      this.#send(event);
    }
  }

  /** A delegated agent's step in its own history, the events before it and its nested events, in one transaction; then published. */
  #commitDelegation(item: Extract<TurnItem, { type: "delegation-commit" }>): void {
    const events = this.#redactor.value(item.events).map((event, i): StoredEvent => ({ id: this.#nextId + i, ...event }));
    this.#store.commitDelegation(item.path, item.agent, this.#redactor.value(item.commit), [...this.#pending, ...events], item.asked);
    this.#nextId += events.length;
    this.#pending = [];
    for (const event of events) {
      this.#note(event);
      this.#send(event);
    }
  }

  /** The calls of a step, written ahead of its tools with a copy of the events so far (their `tool-call` events among them). */
  #recordCalls(calls: CallsInFlight): void {
    this.#store.recordCalls(this.#redactor.value(calls), this.#pending);
  }

  /** An event not stored yet: numbered and published, stored with the next write. */
  #publish(event: RunEvent): void {
    const stored: StoredEvent = { id: this.#nextId++, ...event };
    this.#pending.push(stored);
    this.#note(stored);
    if (stored.type === "done" || stored.type === "error") this.#last = stored;
    else this.#send(stored);
  }

  /** A numbered event goes to the trace and the leg's handoffs. */
  #note(stored: StoredEvent): void {
    this.#trace.builder.record(stored, Date.now());
    if (stored.type === "handoff") {
      const { id: _id, type: _type, ...record } = stored;
      this.handoffs.push(record);
    }
  }

  /** An event goes to the leg's readers. */
  #send(stored: StoredEvent): void {
    this.#ended ||= stored.type === "done" || stored.type === "error";
    this.#broadcast.publish(stored);
  }

  #flushText(): void {
    const held = this.#text.flush();
    if (held) this.#publish({ type: "text-delta", delta: held });
  }
}
