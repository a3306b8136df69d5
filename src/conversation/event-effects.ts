/**
 * What follows from the events a write stored, whoever wrote them (a request's leg, the alarm's, a person at the desk or
 * their deadline): a leg's end titles a new conversation, tells the protocols where its turn stands (A2A pushes it to the
 * clients that asked), sets the deadline of calls left waiting and tells the app, and puts a conversation a person now
 * holds on the desk (with their deadline); a person's answer and a person's hand back tell the protocols, the desk and
 * the app. A leg's end plans the read of a quiet conversation for its owner's memory; compaction and a hand-back read it
 * at once. Like the alarm and the inbox (CommitEffects), nothing calls these by hand: they follow from the storage's
 * writes.
 */
import type { DoneEvent, OperatorMessageEvent, TurnStatus } from "../runtime/events.ts";
import type { Network } from "../runtime/network.ts";
import { errorMessage } from "../runtime/errors.ts";
import type { InboxLink } from "./inbox-link.ts";
import type { ConversationMemory } from "./conversation-memory.ts";
import type { PersonHold } from "./person-hold.ts";
import { type Notifier, notifiedRequest } from "./schedule/notifier.ts";
import type { ProtocolParts, TurnEnding } from "./protocol-parts.ts";
import { actor } from "./storage/activity-log.ts";
import type { ConversationStore } from "./storage/conversation-store.ts";
import type { Written } from "./storage/sql-writer.ts";
import type { StoredEvent } from "../wire/sse.ts";

export interface EventEffectsSetup {
  store: ConversationStore;
  network: Network;
  inbox: InboxLink;
  notifier: Notifier;
  /** The protocols' parts, told where a turn stands. */
  protocols: ProtocolParts;
  hold: PersonHold;
  log: (message: string) => void;
  waitUntil: (promise: Promise<unknown>) => void;
  /** Its owner's memory: read at the conversation's checkpoints (compaction, a hand-back), planned for when it goes quiet. */
  memory: ConversationMemory;
}

/** Where a leg's end leaves its turn for the protocols; a leg that ends with a person holding the conversation, nowhere yet. */
const OUTCOME: Partial<Record<TurnStatus, TurnEnding>> = {
  completed: "completed",
  awaiting_approval: "waiting",
  awaiting_input: "waiting",
  cancelled: "cancelled",
};

export class EventEffects {
  readonly #setup: EventEffectsSetup;
  /** What the effects still do off the write's path (the desk, the app's webhook): `settled` waits for it. */
  readonly #pending = new Set<Promise<void>>();
  /** The leg being written resumed a turn that waited for its user. */
  #resumed = false;

  constructor(setup: EventEffectsSetup) {
    this.#setup = setup;
    setup.store.onWritten((written) => this.#written(written));
  }

  /** Resolves once what the events so far call for is done: a leg's stream ends after it, so its reader sees the desk as it is. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all(this.#pending);
  }

  #written({ events }: Written): void {
    for (const event of events) {
      // What follows a write never undoes it, nor fails its writer: a failure here is logged.
      try {
        this.#follow(event);
      } catch (error) {
        this.#setup.log(`what follows a ${event.type} event failed: ${errorMessage(error)}`);
      }
    }
  }

  #follow(event: StoredEvent): void {
    if (event.type === "run-start") this.#resumed = event.resumed === true;
    else if (event.type === "done") this.#legEnded(event);
    // A failed leg ends with its error event, not `done`.
    else if (event.type === "error") this.#setup.protocols.turnMoved("failed");
    else if (event.type === "operator-message") this.#personAnswered(event);
    else if (event.type === "handoff" && event.kind === "hand-back" && this.#setup.network.get(event.from)?.human) this.#personHandedBack();
    else if (event.type === "compaction") this.#setup.waitUntil(this.#setup.memory.read("compaction"));
  }

  /** A leg ended: the title, the protocols told, calls left waiting given their deadline (and the app told), a person's desk. */
  #legEnded(done: DoneEvent): void {
    const { store, inbox, notifier, memory, protocols } = this.#setup;
    inbox.titleAfterLeg();
    memory.legEnded();
    const outcome = OUTCOME[done.status];
    if (outcome) protocols.turnMoved(outcome);
    if (done.status === "awaiting_approval" || done.status === "awaiting_input") {
      const state = store.state()!;
      store.schedule.planExpiry({ requests: state.suspension?.pending ?? [], decisions: state.decisions });
      const pending = state.suspension?.pending.map(notifiedRequest);
      this.#later("the app could not be told", notifier.notify("request_waiting", { pending }));
      const user = store.legFor;
      const card = { conversationId: state.conversationId, person: done.agent, status: "asking" as const, ...(user ? { user } : {}) };
      this.#later("the desk could not be told", this.#setup.hold.toDesk(card));
      return;
    }
    // The user answered what the turn waited for (or its deadline did): its card goes, before a person's (handed over now) comes.
    const left = this.#resumed ? this.#setup.hold.leaveDesk(store.state()!.conversationId) : Promise.resolve();
    if (done.status === "awaiting_human") this.#toPerson(done, left);
    else this.#later("the desk could not be told", left);
  }

  /** A leg ends with a person holding it: on the desk, waiting (with the person's deadline) when this leg handed it over. */
  #toPerson(done: DoneEvent, after: Promise<void>): void {
    const { store, network, hold } = this.#setup;
    const { conversationId } = store.state()!;
    const person = done.agent;
    const handover = done.handoffs.find((h) => h.kind === "transfer" && h.to === person);
    const within = network.get(person)?.answerWithinMs;
    const answerBy = handover && within !== undefined ? Date.now() + within : undefined;
    if (handover && answerBy !== undefined)
      store.schedule.add({ kind: "person-timeout", dueAt: answerBy, person, handedBy: handover.from });
    // Who waits: the signed-in user whose message (or decision) this leg answered. A message while a person holds it keeps its status.
    const user = store.legFor;
    const card = {
      conversationId,
      person,
      ...(handover ? { status: "waiting" as const, answerBy: answerBy ?? null } : {}),
      ...(user ? { user } : {}),
    };
    this.#later(
      "the desk could not be told",
      after.then(() => hold.toDesk(card)),
    );
  }

  /** A person answered the user: the turn is done for the protocols, the desk says held, the app is told. */
  #personAnswered(event: OperatorMessageEvent): void {
    const { store, notifier, hold, protocols } = this.#setup;
    const who = actor(event.by, event.operator);
    const person = event.agent;
    protocols.turnMoved("completed");
    const told = async () => {
      await hold.toDesk({ conversationId: store.state()!.conversationId, person, status: "held", ...(who ? { operator: who } : {}) });
      await notifier.notify("person_answered", { person, ...(who ? { operator: who } : {}) });
    };
    this.#later("the desk could not be told", told());
  }

  /** A person gave the conversation back: the turn is done for the protocols, and it leaves the desk. */
  #personHandedBack(): void {
    this.#setup.protocols.turnMoved("completed");
    this.#setup.waitUntil(this.#setup.memory.read("hand-back"));
    this.#later("the desk could not be told", this.#setup.hold.leaveDesk(this.#setup.store.state()!.conversationId));
  }

  #later(what: string, work: Promise<void>): void {
    const done = work.catch((error: unknown) => this.#setup.log(`${what}: ${errorMessage(error)}`));
    this.#pending.add(done);
    this.#setup.waitUntil(done.finally(() => this.#pending.delete(done)));
  }
}
