/** The handoff's plain data: its options, what `isEnabled` sees, and the record of one taken. */
import type * as z from "zod";
import type { Holding, ReturnMode } from "../holding.ts";

export type { ReturnFrame, ReturnMode } from "../holding.ts";
import type { Message } from "../messages.ts";

/** What a handoff's `isEnabled` sees of the conversation. */
export interface HandoffState extends Pick<Holding, "activeAgent" | "handoffCount" | "context"> {
  /** Accepted handoffs in this turn, in order (the same records a suspension keeps). */
  turnHandoffs: readonly HandoffRecord[];
}

/** Options of one handoff edge: `handoff(target, options)`. */
export interface HandoffOptions {
  /**
   * Typed input the model must give with the handoff (for example `{ orderId }`). It is validated
   * like a tool's arguments, recorded on the handoff, and merged into the context the target reads.
   */
  inputSchema?: z.ZodObject;
  /** Hides the handoff for a turn when false (or when the function returns false). */
  isEnabled?: boolean | ((state: HandoffState) => boolean);
  /** Trims what the target sees after this handoff; what is stored does not change. */
  historyFilter?: (messages: readonly Message[]) => Message[];
  /**
   * The target gives the conversation back to the agent that handed off: once it has given its
   * final answer of a turn (`on-answer`), or when it calls `return_to_<caller>` with a summary
   * (`on-call`), however many turns that takes. Returns follow a stack: A → B → C returns to B, then A.
   */
  returns?: ReturnMode;
}

/** What every change of hands records: who had the conversation, and who has it now. */
export interface HandoffBase {
  from: string;
  to: string;
}

/** A transfer the model (or a router, `router`) asked for: the target holds the conversation from the next step. */
export interface TransferRecord extends HandoffBase {
  kind: "transfer";
  toolCallId: string;
  /** Why, as the model gave it (or the router's reason). */
  reason?: string;
  /** The handoff's typed input (`inputSchema`), merged into the context the target reads. */
  input?: Record<string, unknown>;
  stepIndex: number;
  /** A router's transfer: the router's name and its confidence. */
  router?: { name: string; confidence: number };
}

/**
 * The conversation went back to the agent that handed it over with a returning handoff. On call:
 * the target called `return_to_<caller>` (`toolCallId`), its summary is the `reason`. On answer: it
 * gave its final answer, which makes no call of its own; `openedBy` is the transfer that opened the frame.
 */
export type ReturnRecord = OnCallReturnRecord | OnAnswerReturnRecord;

/** A return the target made by calling `return_to_<caller>` with a summary (the `reason`). */
export interface OnCallReturnRecord extends HandoffBase {
  kind: "return";
  stepIndex: number;
  mode: "on-call";
  toolCallId: string;
  reason: string;
}

/** A return made by the target's final answer of a turn; `openedBy`: the transfer that opened the frame. */
export interface OnAnswerReturnRecord extends HandoffBase {
  kind: "return";
  stepIndex: number;
  mode: "on-answer";
  openedBy: string;
}

/** Who acted as a person: a signed-in operator's id and display name, from their sign-in token. */
export interface OperatorIdentity {
  id: string;
  name?: string;
}

/** A person or a remote agent that held the conversation gave it back to an agent, with a note the agent reads. */
export interface HandBackRecord extends HandoffBase {
  kind: "hand-back";
  note?: string;
  /** The signed-in operator who gave it back. */
  by?: OperatorIdentity;
}

/** A change of hands: stored with the conversation and streamed as the `handoff` event. */
export type HandoffRecord = TransferRecord | ReturnRecord | HandBackRecord;

/** The kinds of change of hands, as the counters table names them (`HANDOFF_RULES` says what each counts). */
export type HandoffKind = "transfer" | "return" | "person-hand-back" | "remote-hand-back";

/** What the network's `onHandoff` hook is told: every change of hands, with its kind (docs/handoffs.md, "What each kind counts"). */
export interface HandoffInfo {
  kind: HandoffKind;
  from: string;
  to: string;
  /** A transfer's reason, an on-call return's summary, a hand-back's note. */
  reason?: string;
  input?: Record<string, unknown>;
}
