/** What the user says to a request: a yes or no, or an answer; and the reasons the host declines with. */
import * as z from "zod";

/** A yes or no on a request: approves or declines a call; declines a request of any other kind (its reason is shown to the model). */
export interface ApprovalDecision {
  toolCallId: string;
  approved: boolean;
  reason?: string;
}

/** The user's answer to a question or a choice, a client tool's output, or an elicitation form's content (accepted). */
export interface AnswerDecision {
  toolCallId: string;
  answer: unknown;
}

/** A decision on one request: a yes or no, or an answer. */
export type Decision = ApprovalDecision | AnswerDecision;

/**
 * One decision: a yes or no (`approved`, with a reason), or an `answer` (a question's, a client tool's output, a form's content).
 * Built when the first decision arrives, not at an isolate's start.
 */
export const DecisionSchema: z.ZodType<Decision> = z.lazy(() =>
  z.union(
    [
      z.strictObject({
        toolCallId: z.string().min(1).max(256),
        approved: z.boolean({ error: "`approved` must be true or false." }),
        reason: z.string().max(2000).optional(),
      }),
      z.strictObject({
        toolCallId: z.string().min(1).max(256),
        answer: z.custom<unknown>((value) => value !== undefined, "`answer` is the answer, as JSON."),
      }),
    ],
    { error: 'Each decision is { "toolCallId", "approved": true|false, "reason"? } or { "toolCallId", "answer" }.' },
  ),
);

export function isAnswer(decision: Decision): decision is AnswerDecision {
  return "answer" in decision;
}

/** An elicitation's outcome, as MCP has them: what goes back to the server. */
export type ElicitationAnswer = { action: "accept"; content?: Record<string, unknown> } | { action: "decline" } | { action: "cancel" };

/** The reason a cancelled request carries (AG-UI's `cancelled`, MCP's cancel). */
export const REQUEST_CANCELLED = "cancelled";

/** The reason of a decision the host made because no one decided before the request's deadline (`expiresAt`). */
export const REQUEST_EXPIRED = "expired";
/** @deprecated Renamed `REQUEST_EXPIRED` (every kind of request expires); this alias goes in the next minor version. */
export const APPROVAL_EXPIRED = REQUEST_EXPIRED;
