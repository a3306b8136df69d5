/** The store port: what the loop hands its host to keep after each step. */
import type { CallsInFlight } from "../calls-in-flight.ts";
import type { Compaction } from "../compaction.ts";
import type { HandoffRecord } from "../handoff/types.ts";
import type { Holding } from "../holding.ts";
import type { Message } from "../messages.ts";
import type { Suspension } from "../wait/suspension.ts";
import type { ConversationSnapshot } from "../conversation-snapshot.ts";
import type { UsageTotals } from "../usage.ts";

/** What one step adds to the conversation, committed as a whole or not at all. */
export interface StepCommit {
  messages: Message[];
  /** What the conversation holds after this step, when the step changed it (absent: unchanged). */
  holding?: Holding;
  /** The change of hands this step made. */
  handoff?: HandoffRecord;
  /** A suspension to store (the step waits for approvals), or null to clear the stored one. */
  suspension?: Suspension | null;
  /** What this step spent: its model calls (summaries included), tokens and tool calls. */
  usage?: Partial<UsageTotals>;
  /** A new compaction of the history (what the model is sent; the stored history is unchanged). */
  compaction?: Compaction;
}

/** Store ports may be synchronous so the Durable Object's SQLite fits without awaiting. */
export interface TurnStore {
  commitStep(commit: StepCommit): void | Promise<void>;
  /**
   * The calls of a step about to start, before the first of them does; the step's commit follows
   * once they are answered. A store that outlives a crash keeps them, to answer each as interrupted
   * if no commit came (see `settleCallsInFlight`); one that cannot crash alone may leave it out.
   */
  recordCalls?(calls: CallsInFlight): void | Promise<void>;
  /**
   * A step of a delegated agent's run (its own history, apart from the conversation's), under the calls that delegated it
   * (`path`). A store without it keeps only the delegation's result, as the tool's answer.
   */
  commitDelegation?(path: readonly string[], agent: string, commit: StepCommit, asked: number): void | Promise<void>;
  /** A delegated run of this turn as its steps left it (a store without it cannot resume a delegated run that waits for the user). */
  readDelegation?(path: readonly string[]): StoredDelegation | undefined;
}

/**
 * A delegated run as stored: its conversation (holder, history), the wait it ended in, and how many of the delegating call's
 * asks its decisions have taken so far (the call runs again from its start: those come back first).
 */
export interface StoredDelegation {
  conversation: ConversationSnapshot;
  suspension: Suspension | null;
  asked: number;
}

/** What a store keeps that commits change: the holding, and the suspended step while it waits. */
export interface CommittedState {
  holding: Holding;
  suspension: Suspension | null;
}

/** Applies one commit: every store uses it (the Durable Object's and the tests'), so they cannot disagree. */
export function applyCommit<S extends CommittedState>(state: S, commit: StepCommit): S {
  if (commit.holding === undefined && commit.suspension === undefined) return state;
  return {
    ...state,
    holding: commit.holding ?? state.holding,
    suspension: commit.suspension === undefined ? state.suspension : commit.suspension,
  };
}
