/**
 * The pure checks of decisions, before anything is stored: which run's wait each one goes to (one lookup over every run
 * that waits), whether it answers a request that still waits, in the kind of answer the request takes, from someone who may
 * answer it. A batch that fails any check is refused whole: every request waits as it did.
 */
import { schemaProblems } from "../schema/json-schema.ts";
import { type Decision, isAnswer, kindOf, undecided, type UserRequest } from "./requests.ts";

/** One run's wait, as the checks see it: its requests, the decisions on them so far, and the calls it has answered. */
export interface Wait<Run = unknown> {
  /** Which run waits (the host's key: the turn, or a background run's id). */
  run: Run;
  requests: readonly UserRequest[];
  decisions: readonly Decision[];
  /** Whether the run has answered this call already (a result in its suspended step or its history). */
  answered(toolCallId: string): boolean;
}

/** Why a batch of decisions is refused: a stable code, what to fix, and the call it concerns. */
export interface DecisionRefusal {
  code: "no_pending_request" | "request_not_found" | "request_already_decided" | "answer_not_allowed" | "invalid_answer";
  message: string;
  details?: Record<string, string | string[]>;
}

/** A run's share of a batch: the decisions that go to its wait, and whether none of its requests waits once they are stored. */
export interface RoutedDecisions<W> {
  wait: W;
  decisions: Decision[];
  complete: boolean;
}

/**
 * Routes each decision to the run that waits for its call: the first of `waits` (the turn's first, then background runs'
 * in the order they started) with an undecided request of that id. Call ids are unique within a run, not across runs: a
 * second decision on the same id in one batch goes to the next run that waits for it. Refused whole when one fails.
 */
export function routeDecisions<W extends Wait>(
  waits: readonly W[],
  decisions: readonly Decision[],
  by: { operator?: boolean | undefined } = {},
): { ok: true; value: RoutedDecisions<W>[] } | { ok: false; error: DecisionRefusal } {
  const routed = new Map<W, Decision[]>();
  for (const decision of decisions) {
    const { toolCallId } = decision;
    const taken = (w: W) => (routed.get(w) ?? []).some((d) => d.toolCallId === toolCallId);
    const wait = waits.find(
      (w) => !taken(w) && undecided({ suspension: { pending: w.requests }, decisions: w.decisions }).some(isFor(toolCallId)),
    );
    if (!wait) return { ok: false, error: notWaiting(waits, toolCallId) };
    const request = wait.requests.find(isFor(toolCallId))!;
    if (by.operator && !operatorMayAnswer(request))
      return refusal(
        "answer_not_allowed",
        `Only the conversation's owner may answer '${toolCallId}': it does not let an operator answer.`,
        {
          toolCallId,
        },
      );
    const problem = answerProblem(request, decision);
    if (problem)
      return refusal("invalid_answer", `The answer to '${toolCallId}' (${request.kind}) ${problem}`, { toolCallId, kind: request.kind });
    routed.set(wait, [...(routed.get(wait) ?? []), decision]);
  }
  const value = [...routed].map(([wait, mine]) => ({
    wait,
    decisions: mine,
    complete: undecided({ suspension: { pending: wait.requests }, decisions: [...wait.decisions, ...mine] }).length === 0,
  }));
  return { ok: true, value };
}

const isFor = (toolCallId: string) => (request: UserRequest) => request.toolCallId === toolCallId;

function refusal(code: DecisionRefusal["code"], message: string, details: NonNullable<DecisionRefusal["details"]>) {
  return { ok: false as const, error: { code, message, details } };
}

/** Why no run takes a decision on this call: decided before, not a request of any run's, or nothing waits at all. */
function notWaiting(waits: readonly Wait[], toolCallId: string): DecisionRefusal {
  if (waits.some((w) => w.decisions.some((d) => d.toolCallId === toolCallId) || w.answered(toolCallId)))
    return { code: "request_already_decided", message: `Tool call '${toolCallId}' was already decided.`, details: { toolCallId } };
  const pending = waits.flatMap((w) => undecided({ suspension: { pending: w.requests }, decisions: w.decisions }).map((r) => r.toolCallId));
  if (pending.length === 0)
    return { code: "no_pending_request", message: "Nothing in this conversation is waiting for an approval or an answer." };
  return { code: "request_not_found", message: `No pending request '${toolCallId}'.`, details: { toolCallId, pending } };
}

/** Who may answer a request beside its owner: an operator, where its kind lets one (approvals, asks that say so). */
function operatorMayAnswer(request: UserRequest): boolean {
  return kindOf(request).operatorMay(request);
}

/** What is wrong with a decision for its request's kind, or undefined. A decline (`approved: false`) fits every kind. */
export function answerProblem(request: UserRequest, decision: Decision): string | undefined {
  const kind = kindOf(request);
  const takes = kind.answeredWith(request);
  if (!isAnswer(decision)) {
    if (!decision.approved || takes === "yes-no") return undefined;
    return 'takes an answer: send { "toolCallId", "answer" } (or "approved": false to decline).';
  }
  const own = kind.answerProblem?.(request, decision.answer);
  if (own) return own;
  if (takes === "yes-no") return 'takes a yes or no: send "approved": true or false, not an answer.';
  const schema = kind.answerSchema(request);
  const problems = schema && schemaProblems(schema, decision.answer, "answer");
  return problems ? `does not fit its schema: ${problems}` : undefined;
}

/**
 * `decisions` less those that repeat one already stored with the same answer, in any run's wait: useChat sends the whole
 * assistant message back, so a response it sent before (or one made elsewhere, which /ui-messages shows decided) comes
 * again with the new one. All repeats: kept, to be refused.
 */
export function withoutRepeats(waits: readonly Wait[], decisions: Decision[]): Decision[] {
  const said = (d: Decision) => (isAnswer(d) ? JSON.stringify(d.answer) : d.approved);
  const stored = waits.flatMap((w) => w.decisions);
  const fresh = decisions.filter((d) => !stored.some((s) => s.toolCallId === d.toolCallId && said(s) === said(d)));
  return fresh.length > 0 ? fresh : decisions;
}
