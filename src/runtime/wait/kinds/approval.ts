/** An approval: a call that waits for a yes or no before it runs. */
import * as z from "zod";
import { isAnswer } from "../decisions.ts";
import { exactly } from "../../schema/exactly.ts";
import { declinedWithout, type RequestBase, type RequestKind, requestBaseShape } from "./request-kind.ts";

/** A tool call waiting for a yes or no before it runs. */
export interface ApprovalRequest extends RequestBase {
  kind: "approval";
  /** What the call asks, in words for the user: the tool's `approvalMessage` for these arguments. */
  message?: string;
}

const shown = () => ({ message: z.string().optional() });

export const approval: RequestKind<ApprovalRequest> = {
  kind: "approval",
  waits: "approval",
  answeredWith: () => "yes-no",
  answerSchema: () => undefined,
  answerProblem: () => 'is an approval: send "approved": true or false, not an answer.',
  // The desk has always decided approvals.
  operatorMay: () => true,
  settle: (_request, decision) =>
    !isAnswer(decision) && decision.approved ? { kind: "runs" } : declinedWithout(approval.declined, decision),
  declined: {
    byUser: "A person declined this call",
    expired: "No one approved this call before its deadline: it expired and did not run.",
  },
  said: (request) => `${request.agent} asks to run ${request.name}: approve or deny.`,
  interruptReason: "tool_approval",
  shownSchemas: () => [shown()],
  requestSchema: () => exactly<ApprovalRequest>()(z.object({ ...requestBaseShape(), kind: z.literal("approval"), ...shown() })),
};
