/** The turn's state, carried from step to step, and the one function that advances it. */
import type { Agent } from "./agent.ts";
import type { Memory } from "./ports/memory-port.ts";
import type { FilePort } from "./ports/files-port.ts";
import type { Compaction } from "./compaction.ts";
import { type ChangeOfHands, repairedHolding } from "./handoff/change-hands.ts";
import type { ReturnFrame, HandoffRecord } from "./handoff/types.ts";
import type { Holding } from "./holding.ts";
import type { Limits } from "./limits.ts";
import type { Message } from "./messages.ts";
import type { TurnOutcome } from "./events.ts";
import type { RunItemsOptions, TurnItem } from "./run-options.ts";
import type { NestedItems, Slots } from "./step/nested-items.ts";
import type { TurnStore } from "./ports/store-port.ts";
import { TURN_START, type TurnProgress } from "./turn-progress.ts";
import { addUsage, NO_USAGE, type UsageTotals } from "./usage.ts";

export interface TurnState {
  /** The agent holding the conversation (`holding.activeAgent` names it). */
  readonly agent: Agent;
  /** The committed history. */
  readonly history: readonly Message[];
  /** What the conversation holds as the turn stands. */
  readonly holding: Holding;
  /** What the store holds: a commit carries `holding` while the two differ. */
  readonly storedHolding: Holding;
  readonly progress: TurnProgress;
  /** The conversation's latest handoff (its history filter applies while its target holds the conversation). */
  readonly lastHandoff: HandoffRecord | undefined;
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
  /** Runs a delegated agent's turn as items (passed in so tools need not import the loop). */
  readonly runItems: (options: RunItemsOptions) => AsyncGenerator<TurnItem, TurnOutcome>;
  /** What the step's tools hand it while they run (a delegated agent's events and steps). */
  readonly nested: NestedItems;
  /** The delegations running at once, bounded by the network's `maxParallelDelegations`. */
  readonly delegations: Slots;
  /** The calls that delegated this run, outermost first (empty for a conversation's own run). */
  readonly path: readonly string[];
  /**
   * What this run's delegated runs have spent so far (each step as it passes up), in all and by the delegating call: counted
   * toward its budgets, and toward its other delegations'.
   */
  readonly delegated: { usage: UsageTotals; byCall: Map<string, UsageTotals> };
  /** What a leg does at most once: the nudge after an announced-but-unmade handoff. */
  readonly once: { nudged: boolean };
  /** The conversation's files as this leg reads them: each read and encoded once for all its steps (`readOnceALeg`). */
  readonly files: FilePort | undefined;
  /** The user's memories recalled at the leg's start: given to each agent that reads memory, never stored in the history. */
  readonly memory: { recalled: readonly Memory[] };
}

/** What one step, a settled approval or the user's message changes; what is absent stays as it was. */
export interface TurnChange {
  /** Appended to the history. */
  messages?: readonly Message[];
  /**
   * A step was taken: the step index moves on. A model's step grows the agent's step count; a
   * router's (a transfer the router made, maybe refused) spends none of the agent's steps.
   */
  step?: "model" | "router";
  /** A change of hands, made by `changeHands` from this state's holding: the target holds the conversation from here. */
  handoff?: { change: ChangeOfHands; target: Agent } | undefined;
  /** Agents' states that tools changed (merged into the holding's). */
  agentStates?: Holding["agentStates"] | undefined;
  /** The context after a handoff that carried input. */
  context?: Holding["context"] | undefined;
  /** Added to the turn's and the conversation's usage. */
  spent?: UsageTotals;
  errorSteps?: number;
  compaction?: Compaction | undefined;
  calibration?: number | undefined;
  /** The change was committed with the holding it leaves: the store holds it now. */
  committed?: boolean;
}

/**
 * The state a leg starts from: the stored conversation held by `agent` (the entry agent when the
 * stored one is gone) with the caller frames that still name agents of the network, and the
 * progress of a resumed suspension.
 */
export function initialTurnState(options: RunItemsOptions, agent: Agent, callers: readonly ReturnFrame[]): TurnState {
  const { conversation, input } = options;
  const stored = conversation.holding;
  const holding = repairedHolding(stored, agent.name, [...callers]);
  return {
    agent,
    history: [...conversation.history],
    holding,
    storedHolding: stored,
    progress: input.kind === "resume" ? input.suspension.progress : TURN_START,
    lastHandoff: conversation.lastHandoff,
    conversationUsage: conversation.usage ?? NO_USAGE,
    compaction: conversation.compaction,
    calibration: 1,
  };
}

/** The holding a commit from `before` to `after` carries: `after`'s, when the store holds another. */
export function holdingChange(before: TurnState, after: TurnState): { holding?: Holding } {
  return after.holding === before.storedHolding ? {} : { holding: after.holding };
}

/** The only writer of the turn's state, and a pure one. A handoff gives the target a fresh step count. */
export function advance(state: TurnState, change: TurnChange): TurnState {
  const { handoff, spent, step } = change;
  const { progress } = state;
  const holding = nextHolding(state.holding, change);
  return {
    agent: handoff ? handoff.target : state.agent,
    history: change.messages?.length ? state.history.concat(change.messages) : state.history,
    holding,
    storedHolding: change.committed ? holding : state.storedHolding,
    progress: {
      handoffs: handoff ? progress.handoffs.concat(handoff.change.record) : progress.handoffs,
      agentSteps: handoff ? 0 : step === "model" ? progress.agentSteps + 1 : progress.agentSteps,
      errorSteps: change.errorSteps ?? progress.errorSteps,
      stepIndex: step ? progress.stepIndex + 1 : progress.stepIndex,
      usage: spent ? addUsage(progress.usage, spent) : progress.usage,
    },
    lastHandoff: handoff ? handoff.change.record : state.lastHandoff,
    conversationUsage: spent ? addUsage(state.conversationUsage, spent) : state.conversationUsage,
    compaction: change.compaction ?? state.compaction,
    calibration: change.calibration ?? state.calibration,
  };
}

/**
 * The holding after a change: the same object when the change leaves it as it was, so commits can
 * tell. Who holds it, the count and the caller stack come only from the change of hands.
 */
function nextHolding(holding: Holding, change: TurnChange): Holding {
  const { handoff, agentStates, context } = change;
  if (!handoff && !agentStates && !context) return holding;
  const base = handoff ? handoff.change.holding : holding;
  return {
    ...base,
    agentStates: agentStates ? { ...base.agentStates, ...agentStates } : base.agentStates,
    context: context ? { ...context } : base.context,
  };
}
