/** The stored conversation a turn starts from: what it holds, its history, and what stores derive from their rows. */
import type { Compaction } from "./compaction.ts";
import type { HandoffRecord } from "./handoff/types.ts";
import { type Holding, newHolding } from "./holding.ts";
import type { Message } from "./messages.ts";
import type { UsageTotals } from "./usage.ts";

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
