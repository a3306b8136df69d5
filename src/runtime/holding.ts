/**
 * What a conversation holds between turns. The one declaration of
 * these fields: stores keep it in their own form and hand it back whole, so a field added here
 * reaches every store, fork and rewind through this type and its reader.
 */

/** When a returning handoff gives the conversation back: after the target's answer, or when it calls its return tool. */
export type ReturnMode = "on-answer" | "on-call";

/** An agent waiting for the conversation to come back to it: the caller stack holds one per returning handoff. */
export interface ReturnFrame {
  /** The agent that handed off and gets the conversation back. */
  caller: string;
  /** The agent it handed off to, which gives it back. */
  callee: string;
  mode: ReturnMode;
  /** The transfer call that opened the frame. */
  toolCallId: string;
}

/** Who holds the conversation, and what travels with it from turn to turn. */
export interface Holding {
  /** The agent (or person) holding the conversation; an unknown name falls back to the entry agent. */
  activeAgent: string;
  /** Accepted handoffs over the conversation's life. */
  handoffCount: number;
  /** Agents waiting for the conversation to come back (returning handoffs), the next to get it last. */
  callers: ReturnFrame[];
  /** Each agent's own state, by name (agents that never changed theirs are absent; see `AgentConfig.state`). */
  agentStates: Record<string, Record<string, unknown>>;
  /** What handoffs have carried (typed handoff input). */
  context: Record<string, unknown>;
}

/** A new conversation's holding: the agent has it, nothing has happened yet. */
export function newHolding(activeAgent: string): Holding {
  return { activeAgent, handoffCount: 0, callers: [], agentStates: {}, context: {} };
}

/** @deprecated Renamed `ReturnFrame` (docs/layout.md, "Words"); this alias goes in the next minor version. */
export type CallerFrame = ReturnFrame;
