import type { HandoffRecord } from "./events.ts";
import type { UsageTotals } from "./budgets.ts";
import type { AssistantMessage, Message, ToolMessage } from "./messages.ts";

/** A tool call waiting for a person's decision. */
export interface PendingApproval {
  toolCallId: string;
  name: string;
  args: unknown;
  /** The agent whose tool it is: it runs with that agent's tool even after a transfer. */
  agent: string;
}

export interface ApprovalDecision {
  toolCallId: string;
  approved: boolean;
  reason?: string;
}

/**
 * A turn suspended after a step with approval-gated calls. The step's assistant message and
 * results stay here, not in the history, until every call is answered: the stored history
 * never holds a tool call without its result. A transfer of that step is already applied.
 */
export interface Suspension {
  stepIndex: number;
  assistant: AssistantMessage;
  /** In call order; null where a decision is awaited. */
  results: Array<ToolMessage | null>;
  pending: PendingApproval[];
  /** Accepted transfers of this turn so far: the per-turn budget carries over into the resume. */
  turnHandoffs: HandoffRecord[];
  /** Model calls made by the agent now active, in this turn. */
  agentSteps: number;
  errorSteps: number;
  /** What the turn spent before it was suspended. */
  turnUsage?: UsageTotals;
  /** Messages that follow the step's results once it is complete (the append prompt mode's system message). */
  trailing?: Message[];
}

export function denialMessage(decision: ApprovalDecision): string {
  const reason = decision.reason?.trim();
  return `A person declined this call${reason ? `: ${reason}` : "."}`;
}
