import { actor } from "./storage/activity-log.ts";
import { changeHands } from "../runtime/handoff/change-hands.ts";
import { runHandoffHook } from "../runtime/handoff/hook.ts";
import { errorMessage } from "../runtime/errors.ts";
import type { Network } from "../runtime/network.ts";
import type { HandBackRecord, OperatorIdentity } from "../runtime/handoff/types.ts";
import type { Redactor } from "../runtime/redact.ts";
import type { StepCommit } from "../runtime/ports/store-port.ts";
import type { ConversationState, ConversationStore } from "./storage/conversation-store.ts";
import { type DeskPut, deskOf } from "../desk/operator-desk.ts";
import { shownTitle } from "./conversation-titles.ts";
import type { StoredEvent } from "../wire/sse.ts";
import { TurnBroadcast } from "./turns/turn-broadcast.ts";

/**
 * The network's `onHandoff` after a person's hand-back: the hand-back is committed, so a throw is
 * logged (redacted), and neither undoes it nor fails whoever handed back.
 */
export async function personHandBackHook(network: Network, record: HandBackRecord, redactor: Redactor): Promise<void> {
  await runHandoffHook(network, record, "person-hand-back").catch((error: unknown) => console.error(redactor.text(errorMessage(error))));
}

/** What a conversation says of itself on the desk; the preview, title and times are taken as it stands. */
export type DeskCard = Pick<DeskPut, "conversationId" | "person" | "status" | "operator" | "user" | "answerBy">;

/**
 * A conversation while a person holds it: what the person says and how they hand it back, stored
 * as the conversation's own rows and events; the fan-out of those events to the user's follow
 * streams; and the conversation's row on the operator desk. The Durable Object checks who may act.
 */
export class PersonHold {
  readonly #store: ConversationStore;
  readonly #redactor: Redactor;
  readonly #env: unknown;
  #broadcast: TurnBroadcast | null = null;

  readonly #tap: (event: StoredEvent) => void;
  readonly #network: Network;

  /** `tap`: told each event as it is stored (the open WebSockets); `network`: whose `onHandoff` a hand-back runs. */
  constructor(store: ConversationStore, redactor: Redactor, env: unknown, tap: (event: StoredEvent) => void, network: Network) {
    this.#store = store;
    this.#redactor = redactor;
    this.#env = env;
    this.#tap = tap;
    this.#network = network;
  }

  /** What followers of the conversation read while a person holds it; its events reach the open sockets too. */
  followers(): TurnBroadcast {
    this.#broadcast ??= new TurnBroadcast(this.#tap);
    return this.#broadcast;
  }

  /** The person's message to the user: their assistant message, an `operator-message` event, and the desk says `held`. */
  async say(state: ConversationState, person: string, text: string, operator?: string, by?: OperatorIdentity): Promise<number> {
    const event = this.#redactor.value({
      id: state.lastEventId + 1,
      type: "operator-message" as const,
      agent: person,
      text,
      ...(operator ? { operator } : {}),
      ...(by ? { by } : {}),
    });
    this.#store.commitStep({ messages: [{ role: "assistant", agent: person, content: event.text }] }, [event]);
    const who = actor(by, operator);
    this.#store.activity.record({ kind: "answered", ...(who ? { by: who } : {}), agent: person });
    // A person answered: their deadline is met. A2A clients, the desk and the app hear of it from the stored event (EventEffects).
    this.#store.schedule.removeKind("person-timeout");
    this.followers().publish(event);
    return event.id;
  }

  /**
   * The person hands the conversation back to `to`, with a note the agent finds in the history; it
   * leaves the desk, and the network's `onHandoff` is told, whichever way the hand-back came.
   */
  async handBack(state: ConversationState, person: string, to: string, note: string, by?: OperatorIdentity): Promise<void> {
    const record: HandBackRecord = { kind: "hand-back", from: person, to, ...(note ? { note } : {}), ...(by ? { by } : {}) };
    const changed = changeHands(state.holding, { record, by: "person" });
    const events = changed.events.map((event, i) => this.#redactor.value<StoredEvent>({ id: state.lastEventId + 1 + i, ...event }));
    const commit: StepCommit = this.#redactor.value({ messages: changed.messages, holding: changed.holding, handoff: record });
    this.#store.commitStep(commit, events);
    this.#store.activity.record({ kind: "handed-back", ...(by ? { by } : {}), agent: person, to });
    this.#store.schedule.removeKind("person-timeout");
    for (const event of events) this.followers().publish(event);
    // A2A clients and the desk hear of it from the stored hand-back (EventEffects); the followers' streams end here.
    this.#closeFollowers();
    await personHandBackHook(this.#network, record, this.#redactor);
  }

  /** The conversation is erased: followers' streams end, and it leaves the desk. */
  async end(conversationId: string): Promise<void> {
    this.#closeFollowers();
    await this.leaveDesk(conversationId);
  }

  /** The conversation leaves the operator desk. */
  async leaveDesk(conversationId: string): Promise<void> {
    await deskOf(this.#env)?.remove(conversationId);
  }

  #closeFollowers(): void {
    this.#broadcast?.close();
    this.#broadcast = null;
  }

  /**
   * Puts the conversation on the operator desk, or updates its card there with the user's latest
   * message and the conversation's title; a status given replaces the one it has (`waiting` when it
   * is new), `operator` says who holds it now, `user` who waits, `answerBy` the person's deadline.
   */
  async toDesk(card: DeskCard): Promise<void> {
    const desk = deskOf(this.#env);
    if (!desk) return;
    const messages = this.#store.messages();
    const preview = messages.findLast((m) => m.role === "user")?.content ?? "";
    const now = Date.now();
    await desk.put(
      this.#redactor.value({
        ...card,
        since: now,
        updatedAt: now,
        preview,
        title: shownTitle(this.#store.state()?.title, messages),
      }),
    );
  }
}
