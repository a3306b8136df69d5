/** The handoff's plain data: its options, what `isEnabled` sees, and the record of one taken. */
import type * as z from "zod";
import type { Message } from "../messages.ts";

/** What a handoff's `isEnabled` sees of the conversation. */
export interface HandoffState {
  activeAgent: string;
  /** Accepted handoffs over the conversation's life. */
  handoffCount: number;
  /** Accepted handoffs in this turn, in order (the same records a suspension keeps). */
  turnHandoffs: readonly HandoffRecord[];
  context: Readonly<Record<string, unknown>>;
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
}

/** A handoff the runtime took: stored with the conversation and streamed as the `handoff` event. */
export interface HandoffRecord {
  from: string;
  to: string;
  toolCallId: string;
  reason?: string;
  /** The typed handoff input, when the handoff has an inputSchema. */
  input?: Record<string, unknown>;
  stepIndex: number;
}

/** What the network's `onHandoff` hook is told. */
export interface HandoffInfo {
  from: string;
  to: string;
  reason?: string;
  input?: Record<string, unknown>;
}
