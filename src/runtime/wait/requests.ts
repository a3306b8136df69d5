/**
 * What a run waits for from the user: the requests (an approval, a tool's question, a client tool, an MCP
 * server's elicitation), the decisions that answer them, and what the model is told of a decline.
 */
import * as z from "zod";
import type { JsonSchema } from "../json-schema.ts";
export type { JsonSchema } from "../json-schema.ts";

/** What every request to the user names: the call that waits, whose it is, and until when. */
export interface RequestBase {
  toolCallId: string;
  name: string;
  args: unknown;
  /** The agent whose tool it is: it runs with that agent's tool even after a transfer. */
  agent: string;
  /** When it is declined with reason `expired` if no one has answered it (ISO 8601); absent: it waits as long as it takes. */
  expiresAt?: string;
  /**
   * A delegated agent asks (`Agent.asTool`): `path` is the delegating calls (outermost first; `toolCallId` above is the first,
   * the call the conversation's step waits on), `toolCallId` the delegated run's own call. `name`, `args` and `agent` are that
   * call's. The decision resumes the delegated run, then the delegating one.
   */
  delegated?: { path: string[]; toolCallId: string };
  /** Answers to the call's earlier asks, in order: the call runs again from its start with them (kept out of what clients see). */
  earlier?: unknown[];
  /** What the call remembered before it stopped (`ctx.remember`), given back in order when it runs again (kept out of what clients see). */
  recorded?: unknown[];
}

/** A tool call waiting for a yes or no before it runs. */
export interface ApprovalRequest extends RequestBase {
  kind: "approval";
  /** What the call asks, in words for the user: the tool's `approvalMessage` for these arguments. */
  message?: string;
}

/** A tool asked the user (`ctx.ask`): the answer must fit `schema`, and is what `ctx.ask` returns when the call runs again. */
export interface QuestionRequest extends RequestBase {
  kind: "question";
  message: string;
  schema: JsonSchema;
  /** An operator at the desk may answer it too (the owner always may). */
  operator?: boolean;
}

/** A tool with no `execute`: the user's client runs it, and its output (fitting `schema`, when the tool declares one) is the result. */
export interface ClientToolRequest extends RequestBase {
  kind: "client-tool";
  schema?: JsonSchema;
}

/** An MCP server's elicitation: a form whose content fits `schema`, or a URL (https only) the user opens. */
export type ElicitationRequest = RequestBase & {
  kind: "elicitation";
  /** The MCP server that asks (its configured name). */
  server: string;
  message: string;
} & ({ mode: "form"; schema: JsonSchema } | { mode: "url"; url: string; host: string; elicitationId?: string });

/** One thing a suspended turn waits for from the user. */
export type UserRequest = ApprovalRequest | QuestionRequest | ClientToolRequest | ElicitationRequest;
/** The kinds of request: `approval`, `question`, `client-tool`, `elicitation`. */
export type UserRequestKind = UserRequest["kind"];
/** Every kind of request, for readers that check one (a stored request's schema). */
export const REQUEST_KINDS = ["approval", "question", "client-tool", "elicitation"] as const satisfies readonly UserRequestKind[];

/** @deprecated A request of any kind is a `UserRequest`; an approval is an `ApprovalRequest`. */
export type PendingApproval = UserRequest;

/** A yes or no on a request: approves or declines a call; declines a request of any other kind (its reason is shown to the model). */
export interface ApprovalDecision {
  toolCallId: string;
  approved: boolean;
  reason?: string;
}

/** The user's answer to a question, a client tool's output, or an elicitation form's content (accepted). */
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

/** An elicitation's outcome, as MCP has them: what goes back to the server. */
export type ElicitationAnswer = { action: "accept"; content?: Record<string, unknown> } | { action: "decline" } | { action: "cancel" };

/** The reason a cancelled request carries (AG-UI's `cancelled`, MCP's cancel). */
export const REQUEST_CANCELLED = "cancelled";

export function isAnswer(decision: Decision): decision is AnswerDecision {
  return "answer" in decision;
}

/** The reason of a decision the host made because no one decided before the request's deadline (`expiresAt`). */
export const REQUEST_EXPIRED = "expired";
/** @deprecated Renamed `REQUEST_EXPIRED` (every kind of request expires); this alias goes in the next minor version. */
export const APPROVAL_EXPIRED = REQUEST_EXPIRED;

/** What the model is told when a request is declined, or expires, by its kind. */
export function denialMessage(decision: ApprovalDecision, kind: UserRequestKind = "approval"): string {
  if (decision.reason === REQUEST_EXPIRED)
    return kind === "approval"
      ? "No one approved this call before its deadline: it expired and did not run."
      : "The user did not answer before the deadline: the request expired.";
  const reason = decision.reason?.trim();
  const said = reason ? `: ${reason}` : ".";
  if (kind === "question") return `The user declined to answer${said}`;
  if (kind === "client-tool") return `The user declined to run this on their side${said}`;
  return `A person declined this call${said}`;
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
