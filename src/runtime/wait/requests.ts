/**
 * What a run waits for from the user: the requests (each kind described in kinds/), the decisions that answer them, and
 * what is read of a wait wherever it is kept.
 */
import type { ApprovalDecision, Decision } from "./decisions.ts";
import { kindNamed, kindOf, type UserRequest, type UserRequestKind } from "./kinds/index.ts";
import { declineMessage } from "./kinds/request-kind.ts";

export type { JsonSchema, RequestBase } from "./kinds/request-kind.ts";
export {
  type ApprovalRequest,
  type ChoiceRequest,
  type ClientToolRequest,
  type ElicitationRequest,
  kindOf,
  type QuestionRequest,
  REQUEST_KINDS,
  type UserRequest,
  type UserRequestKind,
} from "./kinds/index.ts";
export {
  type AnswerDecision,
  APPROVAL_EXPIRED,
  type ApprovalDecision,
  type Decision,
  DecisionSchema,
  type ElicitationAnswer,
  isAnswer,
  REQUEST_CANCELLED,
  REQUEST_EXPIRED,
} from "./decisions.ts";

/** What the model is told when a request of `kind` is declined, or expires. */
export function denialMessage(decision: ApprovalDecision, kind: UserRequestKind = "approval"): string {
  return declineMessage(kindNamed(kind).declined, decision);
}

/** What a run waiting on `requests` says it waits for: approvals only (as it always has), or any other input. */
export function waitingStatus(requests: readonly UserRequest[]): "awaiting_approval" | "awaiting_input" {
  return requests.every((request) => kindOf(request).waits === "approval") ? "awaiting_approval" : "awaiting_input";
}

/** The suspended step's requests that still wait for a decision (one decided waits only for the others). */
export function undecided(state: {
  suspension: { pending: readonly UserRequest[] } | null;
  decisions: readonly Decision[];
}): UserRequest[] {
  const decided = new Set(state.decisions.map((d) => d.toolCallId));
  return (state.suspension?.pending ?? []).filter((p) => !decided.has(p.toolCallId));
}

/** A request as clients see it: without the answers its call ran with before (what the tool asked earlier stays inside the turn). */
export function publicRequest(request: UserRequest): UserRequest {
  if (request.earlier === undefined && request.recorded === undefined) return request;
  const { earlier: _kept, recorded: _remembered, ...shown } = request;
  return shown as UserRequest;
}

/** A delegated run's request as the run that delegated it asks it: the run's own call, under the path of delegating calls. */
export function forwardedRequest(request: UserRequest, path: readonly string[]): UserRequest {
  return { ...request, delegated: request.delegated ?? { path: [...path], toolCallId: request.toolCallId } };
}
