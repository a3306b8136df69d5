/**
 * What a conversation holds between turns, and what a turn starts from. The one declaration of
 * these fields: stores keep it in their own form and hand it back whole, so a field added here
 * reaches every store, fork and rewind through this type and its reader.
 */
import type { Compaction } from "./compaction.ts";
import type { CallerFrame, HandoffRecord } from "./handoff/types.ts";
import type { Message } from "./messages.ts";
import type { UsageTotals } from "./usage.ts";

/** Who holds the conversation, and what travels with it from turn to turn. */
export interface Holding {
  /** The agent (or person) holding the conversation; an unknown name falls back to the entry agent. */
  activeAgent: string;
  /** Accepted handoffs over the conversation's life. */
  handoffCount: number;
  /** Agents waiting for the conversation to come back (returning handoffs), the next to get it last. */
  callers: CallerFrame[];
  /** Each agent's own state, by name (agents that never changed theirs are absent; see `AgentConfig.state`). */
  agentStates: Record<string, Record<string, unknown>>;
  /** What handoffs have carried (typed handoff input). */
  context: Record<string, unknown>;
}

/** A new conversation's holding: the agent has it, nothing has happened yet. */
export function newHolding(activeAgent: string): Holding {
  return { activeAgent, handoffCount: 0, callers: [], agentStates: {}, context: {} };
}

/** A stored conversation as a turn starts from it: what it holds, its history, and what stores derive from their rows. */
export interface ConversationSnapshot {
  holding: Holding;
  /** The committed history. */
  history: readonly Message[];
  /** The latest change of hands: the history filter of the transfer that brought the holder still applies. */
  lastHandoff?: HandoffRecord | undefined;
  /** What the conversation has spent before this leg, for its budgets. */
  usage?: UsageTotals | undefined;
  /** The latest compaction of the stored history. */
  compaction?: Compaction | undefined;
}

/** A conversation with no history, held by `activeAgent`. */
export function newConversation(activeAgent: string): ConversationSnapshot {
  return { holding: newHolding(activeAgent), history: [] };
}
