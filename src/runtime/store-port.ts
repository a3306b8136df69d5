/** The store port: what the loop hands its host to keep after each step. */
import type { Compaction } from "./compaction.ts";
import type { CallerFrame, HandoffRecord } from "./handoff/types.ts";
import type { Message } from "./messages.ts";
import type { Suspension } from "./suspension.ts";
import type { UsageTotals } from "./usage.ts";

/** What one step adds to the conversation, committed as a whole or not at all. */
export interface StepCommit {
  messages: Message[];
  activeAgent: string;
  handoff?: HandoffRecord;
  /** The caller stack after this step. */
  callers?: CallerFrame[];
  /** Agents' states this step's tools changed, by agent name. */
  agentStates?: Record<string, Record<string, unknown>>;
  /** A suspension to store (the step waits for approvals), or null to clear the stored one. */
  suspension?: Suspension | null;
  /** The conversation's context after a handoff that carried input. */
  context?: Record<string, unknown>;
  /** What this step spent: its model calls (summaries included), tokens and tool calls. */
  usage?: Partial<UsageTotals>;
  /** A new compaction of the history (what the model is sent; the stored history is unchanged). */
  compaction?: Compaction;
}

/** Store ports may be synchronous so the Durable Object's SQLite fits without awaiting. */
export interface TurnStore {
  commitStep(commit: StepCommit): void | Promise<void>;
}

/** The part of a conversation's stored state that commits change. */
export interface CommittedState {
  activeAgent: string;
  /** Accepted handoffs over the conversation's life. */
  handoffCount: number;
  /** The suspended step, while it waits for approvals. */
  suspension: Suspension | null;
  /** What handoffs have carried (typed handoff input). */
  context: Record<string, unknown>;
  /** Agents waiting for the conversation to come back, the next to get it last. */
  callers: CallerFrame[];
  /** Each agent's own state, by name. */
  agentStates: Record<string, Record<string, unknown>>;
}

/** Applies one commit to the stored state: every store uses it (the Durable Object's and the tests'), so they cannot disagree. */
export function applyCommit<S extends CommittedState>(state: S, commit: StepCommit): S {
  return {
    ...state,
    activeAgent: commit.activeAgent,
    handoffCount: state.handoffCount + (commit.handoff ? 1 : 0),
    ...(commit.suspension === undefined ? {} : { suspension: commit.suspension }),
    ...(commit.context ? { context: commit.context } : {}),
    ...(commit.callers ? { callers: commit.callers } : {}),
    ...(commit.agentStates ? { agentStates: { ...state.agentStates, ...commit.agentStates } } : {}),
  };
}
