/** A tool's question (`ctx.ask`): the call stops, and runs again from its start with the answer, which fits its schema. */
import * as z from "zod";
import { answerSchema, type JsonSchema } from "../../schema/json-schema.ts";
import { durationMs, type Duration } from "../../duration.ts";
import { isAnswer } from "../decisions.ts";
import { exactly } from "../../schema/exactly.ts";
import { declinedWithout, type RequestBase, type RequestKind, requestBaseShape, schemaField } from "./request-kind.ts";

/** A tool asked the user (`ctx.ask`): the answer must fit `schema`, and is what `ctx.ask` returns when the call runs again. */
export interface QuestionRequest extends RequestBase {
  kind: "question";
  message: string;
  schema: JsonSchema;
  /** An operator at the desk may answer it too (the owner always may). */
  operator?: boolean;
}

/** What a tool asks with `ctx.ask`: the answer must fit `schema` (a date, a number, free text…). */
export interface Question<Schema extends z.ZodType = z.ZodType> {
  message: string;
  schema: Schema;
  /** An operator at the desk may answer it too (the conversation's owner always may). */
  operator?: boolean;
  /** How long it waits before it expires (over the tool's, agent's and network's `approvalExpiresIn`). */
  expiresIn?: Duration;
}

/** The request a question asks, and how its answer is read back: parsed by the question's own schema. */
export function askedQuestion(question: Question) {
  return {
    ask: {
      kind: "question" as const,
      message: question.message,
      schema: answerSchema(question.schema),
      ...(question.operator ? { operator: true } : {}),
      ...(question.expiresIn === undefined ? {} : { expiresInMs: durationMs(question.expiresIn, "ctx.ask's expiresIn") }),
    },
    read: (answer: unknown) => question.schema.parse(answer),
  };
}

const shown = () => ({ message: z.string(), schema: schemaField(), operator: z.boolean().optional() });

export const question: RequestKind<QuestionRequest> = {
  kind: "question",
  waits: "input",
  answeredWith: () => "answer",
  answerSchema: (request) => request.schema,
  operatorMay: (request) => request.operator === true,
  settle: (_request, decision) =>
    isAnswer(decision) ? { kind: "runs-again", asked: decision.answer } : declinedWithout(question.declined, decision),
  declined: { byUser: "The user declined to answer", expired: "The user did not answer before the deadline: the request expired." },
  said: (request) => request.message,
  interruptReason: "input_required",
  shownSchemas: () => [shown()],
  requestSchema: () => exactly<QuestionRequest>()(z.object({ ...requestBaseShape(), kind: z.literal("question"), ...shown() })),
};
