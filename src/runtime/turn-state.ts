/** The turn's state, carried from step to step, and the one function that advances it. */
import type { Agent } from "./agent.ts";
import type { Compaction } from "./compaction.ts";
import type { HandoffRecord } from "./handoff/types.ts";
import type { Limits } from "./limits.ts";
import type { Message } from "./messages.ts";
import type { RunEvent } from "./events.ts";
import type { RunItemsOptions, RunTurnOptions } from "./run-options.ts";
import { addUsage, NO_USAGE, type UsageTotals } from "./usage.ts";

export interface TurnState {
  /** The agent holding the conversation. */
  readonly agent: Agent;
  /** The committed history. */
  readonly history: readonly Message[];
  /** Accepted handoffs of this turn. */
  readonly handoffs: readonly HandoffRecord[];
  /** Accepted handoffs over the conversation's life. */
  readonly handoffCount: number;
  /** Model calls made by the agent holding the conversation, in this turn. */
  readonly agentSteps: number;
  /** Steps in a row whose counted tool calls all failed. */
  readonly errorSteps: number;
  /** The index of the next step. */
  readonly stepIndex: number;
  /** The conversation's latest handoff (its history filter applies while its target holds the conversation). */
  readonly lastHandoff: HandoffRecord | undefined;
  readonly context: Readonly<Record<string, unknown>>;
  readonly turnUsage: UsageTotals;
  readonly conversationUsage: UsageTotals;
  readonly compaction: Compaction | undefined;
  /** Reported input tokens over estimated ones, from the last call: corrects the estimator. */
  readonly calibration: number;
}

/** What a turn's run needs besides its state: the host's options, the limits, the signal. */
export interface RunContext {
  readonly options: RunItemsOptions;
  readonly limits: Limits;
  readonly signal: AbortSignal;
  /** Runs a nested turn, for delegation (passed in so tools need not import the loop). */
  readonly runTurn: (options: RunTurnOptions) => AsyncGenerator<RunEvent, unknown>;
}

/** What one step, a settled approval or the user's message changes. */
export interface TurnChange {
  /** Appended to the history. */
  messages?: readonly Message[];
  /** A model call was made: the step index moves on and the agent's step count grows. */
  modelCalled?: boolean;
  handoff?: { record: HandoffRecord; target: Agent };
  context?: Readonly<Record<string, unknown>>;
  /** Added to the turn's and the conversation's usage. */
  spent?: UsageTotals;
  errorSteps?: number;
  compaction?: Compaction;
  calibration?: number;
}

export function initialTurnState(options: RunItemsOptions, agent: Agent): TurnState {
  const resumed = options.input.kind === "resume" ? options.input.suspension : undefined;
  return {
    agent,
    history: [...options.history],
    handoffs: [...(resumed?.turnHandoffs ?? [])],
    handoffCount: options.handoffCount,
    agentSteps: resumed?.agentSteps ?? 0,
    errorSteps: resumed?.errorSteps ?? 0,
    stepIndex: resumed ? resumed.stepIndex + 1 : 0,
    lastHandoff: options.lastHandoff,
    context: { ...options.context },
    turnUsage: resumed?.turnUsage ?? NO_USAGE,
    conversationUsage: options.usage ?? NO_USAGE,
    compaction: options.compaction,
    calibration: 1,
  };
}

/** The only writer of the turn's state, and a pure one. A handoff gives the target a fresh step count. */
export function advance(state: TurnState, change: TurnChange): TurnState {
  const handoff = change.handoff;
  return {
    ...state,
    history: change.messages?.length ? [...state.history, ...change.messages] : state.history,
    stepIndex: change.modelCalled ? state.stepIndex + 1 : state.stepIndex,
    agentSteps: handoff ? 0 : change.modelCalled ? state.agentSteps + 1 : state.agentSteps,
    ...(handoff
      ? {
          agent: handoff.target,
          handoffs: [...state.handoffs, handoff.record],
          handoffCount: state.handoffCount + 1,
          lastHandoff: handoff.record,
        }
      : {}),
    context: change.context ?? state.context,
    turnUsage: change.spent ? addUsage(state.turnUsage, change.spent) : state.turnUsage,
    conversationUsage: change.spent ? addUsage(state.conversationUsage, change.spent) : state.conversationUsage,
    errorSteps: change.errorSteps ?? state.errorSteps,
    compaction: change.compaction ?? state.compaction,
    calibration: change.calibration ?? state.calibration,
  };
}
