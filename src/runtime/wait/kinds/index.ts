/**
 * Every kind of request to the user, and the one lookup the machinery reads them through (`kindOf`). A new kind is a file
 * beside these (its request, its ask, its descriptor), a line in each list below, and its card on the page.
 */
import * as z from "zod";
import { exactly } from "../../schema/exactly.ts";
import { type ApprovalRequest, approval } from "./approval.ts";
import { type Choice, type ChoiceRequest, askedChoice, choice } from "./choice.ts";
import { type ClientToolRequest, clientTool } from "./client-tool.ts";
import { type ElicitationRequest, elicitation } from "./elicitation.ts";
import { askedQuestion, type Question, type QuestionRequest, question } from "./question.ts";
import type { RequestKind } from "./request-kind.ts";

/** One thing a suspended turn waits for from the user. */
export type UserRequest = ApprovalRequest | QuestionRequest | ClientToolRequest | ElicitationRequest | ChoiceRequest;
/** The kinds of request: `approval`, `question`, `client-tool`, `elicitation`, `choice`. */
export type UserRequestKind = UserRequest["kind"];

const KINDS: { [K in UserRequestKind]: RequestKind<Extract<UserRequest, { kind: K }>> } = {
  approval,
  question,
  "client-tool": clientTool,
  elicitation,
  choice,
};

/** Every kind's name, for readers that check one (a stored request's schema). */
export const REQUEST_KINDS = Object.keys(KINDS) as UserRequestKind[];

let builtRequestSchema: z.ZodType<UserRequest> | undefined;

/** A request of any kind as a wait stores it: each kind's own schema, built on first use. */
export function userRequestSchema(): z.ZodType<UserRequest> {
  builtRequestSchema ??= exactly<UserRequest>()(z.union(Object.values(KINDS).map((kind) => kind.requestSchema())));
  return builtRequestSchema;
}

/** The descriptor of a request's kind. */
export function kindOf<R extends UserRequest>(request: R): RequestKind<R> {
  return KINDS[request.kind] as RequestKind<never> as RequestKind<R>;
}

/** The descriptor of a kind, by its name. */
export function kindNamed(kind: UserRequestKind): RequestKind<never> {
  return KINDS[kind] as RequestKind<never>;
}

/** Every kind's descriptor, in the order above. */
export function requestKinds(): Array<RequestKind<never>> {
  return Object.values(KINDS) as Array<RequestKind<never>>;
}

/** What a tool asks with `ctx.ask`: a question (an answer fitting a schema) or a choice (one of some options). */
export type Ask = Question | Choice;

/** What `ctx.ask` returns for `A`: a question's answer as its schema reads it, a choice's option (or the user's words). */
export type AnswerTo<A> = A extends Question<infer Schema> ? z.infer<Schema> : A extends Choice ? string : never;

/** The request an ask makes, and how its answer is read when the call runs again. */
export function askedBy(ask: Ask): {
  ask: ReturnType<typeof askedQuestion>["ask"] | ReturnType<typeof askedChoice>["ask"];
  read(answer: unknown): unknown;
} {
  return "options" in ask ? askedChoice(ask) : askedQuestion(ask);
}

export type { ApprovalRequest, ChoiceRequest, ClientToolRequest, ElicitationRequest, QuestionRequest, Question, Choice };
