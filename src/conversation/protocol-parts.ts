/**
 * A protocol's part in each conversation (`Protocol.conversation`): rows of its own, the operations its routes ask of
 * them (the object's `protocolCall`), and what it sends out as a turn moves, queued in the outbox (delivered by the
 * alarm, signed, retried). The conversation runs every part the same way and names none of them.
 */
import type { Redactor } from "../runtime/redact.ts";
import { type ConversationResult, fail } from "./results.ts";
import type { ConversationStore } from "./storage/conversation-store.ts";
import type { Destination } from "./storage/outbox.ts";
import type { PartRows } from "./storage/protocol-rows.ts";

/** How a turn stands for those a protocol tells: done, waiting for its user, failed or cancelled. */
export type TurnEnding = "completed" | "waiting" | "failed" | "cancelled";

/** A turn reached an outcome (a person's answer or hand-back completes it too). */
export interface TurnMove {
  turn: number;
  outcome: TurnEnding;
  /** Who holds the conversation now. */
  holder: string;
}

/** What a part is given of the conversation it is called in. */
export interface PartContext {
  /** Its own rows in this conversation. */
  rows: PartRows;
  conversationId: string;
  /** The latest turn (0 before the first). */
  turn: number;
}

/** A message a part sends: its body (redacted before it is stored) and where it goes. */
export interface Outgoing {
  body: Record<string, unknown>;
  to: Destination;
}

/** What a protocol brings to each conversation; `createHandoffWorker` gives the object the parts of its protocols. */
export interface ConversationPart {
  /** The protocol's name: its rows are kept under it, and its routes call it by it. */
  readonly name: string;
  /** An operation its routes ask of its rows: `op` comes from the Worker, so the part parses it. */
  call?(op: unknown, at: PartContext): ConversationResult<unknown>;
  /** A turn moved: the messages to send (none, mostly). */
  turnMoved?(move: TurnMove, at: PartContext): readonly Outgoing[];
}

export class ProtocolParts {
  readonly #parts: ReadonlyMap<string, ConversationPart>;
  readonly #store: ConversationStore;
  readonly #redactor: Redactor;

  constructor(parts: readonly ConversationPart[], store: ConversationStore, redactor: Redactor) {
    this.#parts = new Map(parts.map((part) => [part.name, part]));
    this.#store = store;
    this.#redactor = redactor;
  }

  /** A protocol's operation, for a requester the object admitted already. */
  call(protocol: string, op: unknown): ConversationResult<unknown> {
    const part = this.#parts.get(protocol);
    const state = this.#store.state();
    if (!part?.call || !state)
      return fail(
        "invalid_configuration",
        `This conversation object keeps nothing for the protocol '${protocol}': createHandoffWorker gives it the parts of its protocols.`,
      );
    return part.call(op, this.#context(protocol, state));
  }

  /** Each part's messages for a turn that moved, into the outbox (redacted). */
  turnMoved(outcome: TurnEnding): void {
    const state = this.#store.state();
    if (!state) return;
    const move: TurnMove = { turn: state.turn, outcome, holder: state.holding.activeAgent };
    for (const part of this.#parts.values()) {
      for (const { body, to } of part.turnMoved?.(move, this.#context(part.name, state)) ?? [])
        this.#store.outbox.add(crypto.randomUUID(), JSON.stringify(this.#redactor.value(body)), Date.now(), to);
    }
  }

  #context(protocol: string, { conversationId, turn }: { conversationId: string; turn: number }): PartContext {
    return { rows: this.#store.protocolRows.of(protocol), conversationId, turn };
  }
}
