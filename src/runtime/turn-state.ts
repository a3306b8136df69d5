/** The turn's state, carried from step to step, and the one function that advances it. */
import type { Agent } from "./agent.ts";
import type { Compaction } from "./compaction.ts";
import type { CallerFrame, HandoffRecord } from "./handoff/types.ts";
import type { Limits } from "./limits.ts";
import type { Message } from "./messages.ts";
import type { RunEvent } from "./events.ts";
import type { RunItemsOptions, RunTurnOptions } from "./run-options.ts";
import type { TurnStore } from "./store-port.ts";
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
  /** Agents waiting for the conversation to come back, the next to get it last. */
  readonly callers: readonly CallerFrame[];
  /** Each agent's own state, by name (agents that never changed theirs are absent). */
  readonly agentStates: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
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
  /** Where commits go: the store port of `runTurn`, or none for `runTurnItems`, which yields them. */
  readonly store: TurnStore | undefined;
  /** Runs a nested turn, for delegation (passed in so tools need not import the loop). */
  readonly runTurn: (options: RunTurnOptions) => AsyncGenerator<RunEvent, unknown>;
}

/** What one step, a settled approval or the user's message changes; what is absent stays as it was. */
export interface TurnChange {
  /** Appended to the history. */
  messages?: readonly Message[];
  /** A model call was made: the step index moves on and the agent's step count grows. */
  modelCalled?: boolean;
  handoff?: { record: HandoffRecord; target: Agent } | undefined;
  /** The caller stack after a returning handoff opened a frame or a return closed one. */
  callers?: readonly CallerFrame[] | undefined;
  /** Agents' states that tools changed. */
  agentStates?: Readonly<Record<string, Readonly<Record<string, unknown>>>> | undefined;
  context?: Readonly<Record<string, unknown>> | undefined;
  /** Added to the turn's and the conversation's usage. */
  spent?: UsageTotals;
  errorSteps?: number;
  compaction?: Compaction | undefined;
  calibration?: number | undefined;
}

export function initialTurnState(options: RunItemsOptions, agent: Agent, callers: readonly CallerFrame[]): TurnState {
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
    callers,
    agentStates: { ...options.agentStates },
    context: { ...options.context },
    turnUsage: resumed?.turnUsage ?? NO_USAGE,
    conversationUsage: options.usage ?? NO_USAGE,
    compaction: options.compaction,
    calibration: 1,
  };
}

/** The only writer of the turn's state, and a pure one. A handoff gives the target a fresh step count. */
export function advance(state: TurnState, change: TurnChange): TurnState {
  const { handoff, spent, modelCalled } = change;
  return {
    agent: handoff ? handoff.target : state.agent,
    history: change.messages?.length ? state.history.concat(change.messages) : state.history,
    handoffs: handoff ? state.handoffs.concat(handoff.record) : state.handoffs,
    handoffCount: handoff ? state.handoffCount + 1 : state.handoffCount,
    agentSteps: handoff ? 0 : modelCalled ? state.agentSteps + 1 : state.agentSteps,
    errorSteps: change.errorSteps ?? state.errorSteps,
    stepIndex: modelCalled ? state.stepIndex + 1 : state.stepIndex,
    lastHandoff: handoff ? handoff.record : state.lastHandoff,
    callers: change.callers ?? state.callers,
    agentStates: change.agentStates ? { ...state.agentStates, ...change.agentStates } : state.agentStates,
    context: change.context ?? state.context,
    turnUsage: spent ? addUsage(state.turnUsage, spent) : state.turnUsage,
    conversationUsage: spent ? addUsage(state.conversationUsage, spent) : state.conversationUsage,
    compaction: change.compaction ?? state.compaction,
    calibration: change.calibration ?? state.calibration,
  };
}
