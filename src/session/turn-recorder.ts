import { type Redactor, type RunEvent, type StepCommit, StreamingRedaction, type TurnItem, type TurnOutcome } from "../runtime/index.ts";
import type { StoredEvent } from "../wire/index.ts";
import type { ConversationStore } from "./conversation-store.ts";
import type { TurnBroadcast } from "./turn-broadcast.ts";

/**
 * Records one leg of a turn as the run's items arrive, in one direction: each event is redacted,
 * numbered and published; each commit is stored with the events that came before it; the outcome
 * the run reports ends the turn. Text deltas go through a streaming redaction, so a secret split
 * across deltas is caught too; what it holds back is sent before the next item of another kind.
 */
export class TurnRecorder {
  readonly #store: ConversationStore;
  readonly #redactor: Redactor;
  readonly #broadcast: TurnBroadcast;
  readonly #text: StreamingRedaction;
  #nextId: number;
  #pending: StoredEvent[] = [];
  #ended = false;

  constructor(store: ConversationStore, redactor: Redactor, broadcast: TurnBroadcast, firstId: number) {
    this.#store = store;
    this.#redactor = redactor;
    this.#broadcast = broadcast;
    this.#text = new StreamingRedaction(redactor);
    this.#nextId = firstId;
  }

  /** Throws only when storing a commit fails; the run is told with `throw()` and ends with an error event. */
  record(item: TurnItem): void {
    if (item.type === "text-delta") {
      const delta = this.#text.push(item.delta);
      if (delta) this.#publish({ type: "text-delta", delta });
      return;
    }
    this.#flushText();
    if (item.type === "commit") this.#commit(item.commit);
    else this.#publish(this.#redactor.value(item));
  }

  end(outcome: TurnOutcome): void {
    this.#flushText();
    this.#store.endTurn(outcome, this.#pending);
    this.#pending = [];
  }

  /** Storage failed outside a commit: the stream ends with an error, and the turn is marked failed if it still can be. */
  fail(): void {
    if (!this.#ended)
      this.#broadcast.publish({ id: this.#nextId++, type: "error", code: "internal_error", message: "The turn could not be stored." });
    try {
      this.#store.endTurn({ status: "failed", code: "internal_error" }, []);
    } catch {
      // The store marks a turn left running as failed on the object's next start.
    }
  }

  #commit(commit: StepCommit): void {
    this.#store.commitStep(this.#redactor.value(commit), this.#pending);
    this.#pending = [];
  }

  #publish(event: RunEvent): void {
    const stored: StoredEvent = { id: this.#nextId++, ...event };
    this.#ended ||= stored.type === "done" || stored.type === "error";
    this.#pending.push(stored);
    this.#broadcast.publish(stored);
  }

  #flushText(): void {
    const held = this.#text.flush();
    if (held) this.#publish({ type: "text-delta", delta: held });
  }
}
