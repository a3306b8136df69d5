/**
 * A run's step suspended on its requests: what it holds until every call is answered, and how it is
 * settled when the leg that ran its answered calls was cut off.
 */
import type { AssistantMessage, Message, ToolMessage } from "../messages.ts";
import type { TurnProgress } from "../turn-progress.ts";
import { type Decision, isAnswer, kindOf, type UserRequest } from "./requests.ts";

/**
 * A turn suspended after a step with calls that wait for the user. The step's assistant message and
 * results stay here, not in the history, until every call is answered: the stored history
 * never holds a tool call without its result. A transfer of that step is already applied.
 */
export interface Suspension {
  assistant: AssistantMessage;
  /** In call order; null where a decision is awaited. */
  results: Array<ToolMessage | null>;
  pending: UserRequest[];
  /** The turn as it stands after the suspended step: the resumed leg carries on from it (its limits included). */
  progress: TurnProgress;
  /** Messages that follow the step's results once it is complete (the append prompt mode's system message). */
  trailing: Message[];
}

/** The answer of an approved call whose run was cut off before its result was stored. */
export const INTERRUPTED_CALL =
  "This call was interrupted before its result was recorded (the conversation's process restarted): it may or may not have taken effect. Check before trying it again.";

/**
 * How a decision answers its request without running anything (a decline, a client tool's output), by its kind. Null: the
 * call runs (an approved call), or runs again with its ask's answer (a question's, a choice's, any elicitation's outcome).
 */
export function answerWithoutRunning(
  request: UserRequest,
  decision: Decision,
): { content: string; result: unknown; isError: boolean } | null {
  const settled = kindOf(request).settle(request, decision);
  if (settled.kind !== "answered") return null;
  const { kind: _answered, ...answer } = settled;
  return answer;
}

/**
 * The record a tool message keeps of an approval's decision (other kinds keep none: their result says it). A delegated
 * run's approval is its inner call's, kept in that run's history: the delegating call's message keeps none.
 */
export function approvalRecord(request: UserRequest, decision: Decision): ToolMessage["approval"] {
  // An approval takes a yes or no only (the checks refuse an answer to one).
  if (request.kind !== "approval" || request.delegated || isAnswer(decision)) return undefined;
  const reason = decision.reason?.trim();
  return { approved: decision.approved, ...(reason ? { reason } : {}), ...(request.message ? { message: request.message } : {}) };
}

/**
 * Settles a suspension whose resumed leg died while answered calls ran. Each decided call is
 * answered (what needs no run as usual; a call that ran with INTERRUPTED_CALL, as an error), and
 * calls still undecided keep waiting. Once every call has an answer the step is complete: its
 * messages go to the history and the suspension is gone.
 */
export function settleInterrupted(
  suspension: Suspension,
  decisions: readonly Decision[],
): { answered: ToolMessage[]; complete: Message[] | null; suspension: Suspension | null } {
  const answered: ToolMessage[] = [];
  const results = suspension.results.map((result, i): ToolMessage | null => {
    if (result) return result;
    const call = suspension.assistant.toolCalls![i]!;
    const decision = decisions.find((d) => d.toolCallId === call.id);
    const request = suspension.pending.find((p) => p.toolCallId === call.id);
    if (!decision || !request) return null;
    const outcome = answerWithoutRunning(request, decision) ?? { content: INTERRUPTED_CALL, isError: true };
    const approval = approvalRecord(request, decision);
    const message: ToolMessage = {
      role: "tool",
      toolCallId: call.id,
      name: call.name,
      content: outcome.content,
      isError: outcome.isError,
      ...(approval ? { approval } : {}),
    };
    answered.push(message);
    return message;
  });
  const pending = suspension.pending.filter((p) => !decisions.some((d) => d.toolCallId === p.toolCallId));
  if (pending.length > 0) return { answered, complete: null, suspension: { ...suspension, results, pending } };
  return { answered, complete: [suspension.assistant, ...(results as ToolMessage[]), ...suspension.trailing], suspension: null };
}
