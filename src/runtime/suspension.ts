import type { HandoffRecord } from "./handoff/types.ts";
import type { AssistantMessage, Message, ToolMessage } from "./messages.ts";
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

/** A tool call waiting for a person's decision. */
export interface PendingApproval {
  toolCallId: string;
  name: string;
  args: unknown;
  /** The agent whose tool it is: it runs with that agent's tool even after a transfer. */
  agent: string;
  /** When it is declined with reason `expired` if no one has decided it (ISO 8601); absent: it waits as long as it takes. */
  expiresAt?: string;
}

/** A person's decision on one call that waits for approval; a denial's reason is shown to the model. */
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
  assistant: AssistantMessage;
  /** In call order; null where a decision is awaited. */
  results: Array<ToolMessage | null>;
  pending: PendingApproval[];
  /** The turn as it stands after the suspended step: the resumed leg carries on from it (its limits included). */
  progress: TurnProgress;
  /** Messages that follow the step's results once it is complete (the append prompt mode's system message). */
  trailing: Message[];
}

/** The reason of a decision the host made because no one decided before the call's deadline (`expiresAt`). */
export const APPROVAL_EXPIRED = "expired";

/** What the model is told when a person declines a call. */
export function denialMessage(decision: ApprovalDecision): string {
  if (decision.reason === APPROVAL_EXPIRED) return "No one approved this call before its deadline: it expired and did not run.";
  const reason = decision.reason?.trim();
  return `A person declined this call${reason ? `: ${reason}` : "."}`;
}

/** The answer of an approved call whose run was cut off before its result was stored. */
export const INTERRUPTED_CALL =
  "This call was interrupted before its result was recorded (the conversation's process restarted): it may or may not have taken effect. Check before trying it again.";

/**
 * Settles a suspension whose resumed leg died while approved calls ran. Each decided call is
 * answered (a denial as usual; an approved call with INTERRUPTED_CALL, as an error), and calls
 * still undecided keep waiting. Once every call has an answer the step is complete: its messages
 * go to the history and the suspension is gone.
 */
export function settleInterrupted(
  suspension: Suspension,
  decisions: readonly ApprovalDecision[],
): { answered: ToolMessage[]; complete: Message[] | null; suspension: Suspension | null } {
  const answered: ToolMessage[] = [];
  const results = suspension.results.map((result, i): ToolMessage | null => {
    if (result) return result;
    const call = suspension.assistant.toolCalls![i]!;
    const decision = decisions.find((d) => d.toolCallId === call.id);
    if (!decision) return null;
    const content = decision.approved ? INTERRUPTED_CALL : denialMessage(decision);
    const approval = { approved: decision.approved, ...(decision.reason?.trim() ? { reason: decision.reason.trim() } : {}) };
    const message: ToolMessage = { role: "tool", toolCallId: call.id, name: call.name, content, isError: true, approval };
    answered.push(message);
    return message;
  });
  const pending = suspension.pending.filter((p) => !decisions.some((d) => d.toolCallId === p.toolCallId));
  if (pending.length > 0) return { answered, complete: null, suspension: { ...suspension, results, pending } };
  return { answered, complete: [suspension.assistant, ...(results as ToolMessage[]), ...suspension.trailing], suspension: null };
}

/** The suspended step's calls that still wait for a decision (one decided waits only for the others). */
export function undecided(state: { suspension: Suspension | null; decisions: readonly ApprovalDecision[] }): PendingApproval[] {
  const decided = new Set(state.decisions.map((d) => d.toolCallId));
  return (state.suspension?.pending ?? []).filter((p) => !decided.has(p.toolCallId));
}
