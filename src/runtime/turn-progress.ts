import type { HandoffRecord } from "./handoff/types.ts";
import { NO_USAGE, type UsageTotals } from "./usage.ts";

/** How far a turn has got: what its per-turn limits and the resumed leg of a suspension go on from. */
export interface TurnProgress {
  /** Accepted handoffs of this turn, in order. */
  handoffs: HandoffRecord[];
  /** Model calls made by the agent holding the conversation, in this turn (a handoff starts the count again). */
  agentSteps: number;
  /** Steps in a row whose counted tool calls all failed. */
  errorSteps: number;
  /** The index of the next step. */
  stepIndex: number;
  /** What the turn has spent. */
  usage: UsageTotals;
}

/** A turn that has not begun. */
export const TURN_START: TurnProgress = { handoffs: [], agentSteps: 0, errorSteps: 0, stepIndex: 0, usage: NO_USAGE };
