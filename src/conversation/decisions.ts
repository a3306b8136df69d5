/**
 * Decisions on a suspended step's requests, checked before anything is stored: each names a
 * request that still waits, is the kind of answer its request takes (a yes or no; an answer that
 * fits the request's schema), and comes from someone who may answer it. A decision that fails
 * leaves every request waiting as it was.
 */
import { schemaProblems } from "../runtime/json-schema.ts";
import { type Decision, isAnswer, undecided, type UserRequest } from "../runtime/wait/requests.ts";
import { type Suspension } from "../runtime/wait/suspension.ts";
import type { Message } from "../runtime/messages.ts";
import { fail, ok, type ConversationResult } from "./results.ts";

/** What waits for decisions: the turn's suspended step, or a background run's requests, with the decisions made so far. */
export interface Waiting {
  suspension: Pick<Suspension, "pending" | "results"> | null;
  decisions: readonly Decision[];
}

/** Checks decisions against what waits: each must name a request that still waits, and answer it as its kind takes. */
export function checkDecisions(
  state: Waiting | null,
  history: readonly Message[],
  decisions: readonly Decision[],
  by: { operator?: boolean | undefined } = {},
): ConversationResult<{ complete: boolean }> {
  const suspension = state?.suspension;
  for (const decision of decisions) {
    const { toolCallId } = decision;
    const decided =
      state?.decisions.some((d) => d.toolCallId === toolCallId) ||
      suspension?.results.some((r) => r?.toolCallId === toolCallId) ||
      history.some((m) => m.role === "tool" && m.toolCallId === toolCallId);
    if (decided) return fail("request_already_decided", `Tool call '${toolCallId}' was already decided.`, { toolCallId });
    const request = suspension?.pending.find((p) => p.toolCallId === toolCallId);
    if (!request) {
      return suspension
        ? fail("request_not_found", `No pending request '${toolCallId}'.`, {
            toolCallId,
            pending: suspension.pending.map((p) => p.toolCallId),
          })
        : fail("no_pending_request", "Nothing in this conversation is waiting for an approval or an answer.");
    }
    if (by.operator && !operatorMayAnswer(request))
      return fail("answer_not_allowed", `Only the conversation's owner may answer '${toolCallId}': it does not let an operator answer.`, {
        toolCallId,
      });
    const problem = answerProblem(request, decision);
    if (problem)
      return fail("invalid_answer", `The answer to '${toolCallId}' (${request.kind}) ${problem}`, { toolCallId, kind: request.kind });
  }
  // Complete when no request of the step waits once these are added to the stored decisions.
  return ok({ complete: undecided({ suspension: suspension!, decisions: [...state!.decisions, ...decisions] }).length === 0 });
}

/** An operator answers approvals (as the desk always has) and the asks that say an operator may. */
function operatorMayAnswer(request: UserRequest): boolean {
  return request.kind === "approval" || (request.kind === "question" && request.operator === true);
}

/** What is wrong with a decision for its request's kind, or undefined. A decline (`approved: false`) fits every kind. */
export function answerProblem(request: UserRequest, decision: Decision): string | undefined {
  if (!isAnswer(decision)) {
    if (!decision.approved || request.kind === "approval") return undefined;
    if (request.kind === "elicitation" && request.mode === "url") return undefined;
    return 'takes an answer: send { "toolCallId", "answer" } (or "approved": false to decline).';
  }
  if (request.kind === "approval") return 'is an approval: send "approved": true or false, not an answer.';
  if (request.kind === "elicitation" && request.mode === "url")
    return 'asks the user to open a URL: send "approved": true once they have, or false to decline.';
  if (request.kind === "elicitation" && (typeof decision.answer !== "object" || decision.answer === null || Array.isArray(decision.answer)))
    return "must be an object with the form's fields.";
  const problems = request.schema && schemaProblems(request.schema, decision.answer, "answer");
  return problems ? `does not fit its schema: ${problems}` : undefined;
}

/**
 * `decisions` less those that repeat one already stored with the same answer: useChat sends the
 * whole assistant message back, so a response it sent before (or one made elsewhere, which
 * /ui-messages shows decided) comes again with the new one. All repeats: kept, to be refused.
 */
export function withoutRepeats(state: Waiting | null, decisions: Decision[]): Decision[] {
  const said = (d: Decision) => (isAnswer(d) ? JSON.stringify(d.answer) : d.approved);
  const stored = new Map(state?.decisions.map((d) => [d.toolCallId, said(d)]));
  const fresh = decisions.filter((d) => stored.get(d.toolCallId) !== said(d));
  return fresh.length > 0 ? fresh : decisions;
}
