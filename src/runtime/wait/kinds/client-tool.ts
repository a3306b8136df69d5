/** A client tool: a tool with no `execute`, which the user's client runs; its output is the call's result. */
import * as z from "zod";
import type { JsonSchema } from "../../schema/json-schema.ts";
import { isAnswer } from "../decisions.ts";
import { exactly } from "../../schema/exactly.ts";
import { declinedWithout, type RequestBase, type RequestKind, requestBaseShape, schemaField } from "./request-kind.ts";

/** A tool with no `execute`: the user's client runs it, and its output (fitting `schema`, when the tool declares one) is the result. */
export interface ClientToolRequest extends RequestBase {
  kind: "client-tool";
  schema?: JsonSchema;
}

const shown = () => ({ schema: schemaField().optional() });

export const clientTool: RequestKind<ClientToolRequest> = {
  kind: "client-tool",
  waits: "input",
  answeredWith: () => "tool-output",
  answerSchema: (request) => request.schema,
  operatorMay: () => false,
  settle: (_request, decision) => {
    if (!isAnswer(decision)) return declinedWithout(clientTool.declined, decision);
    const content = typeof decision.answer === "string" ? decision.answer : JSON.stringify(decision.answer ?? null);
    return { kind: "answered", content, result: decision.answer ?? null, isError: false };
  },
  declined: {
    byUser: "The user declined to run this on their side",
    expired: "The user did not answer before the deadline: the request expired.",
  },
  said: (request) => `${request.agent} asks to run ${request.name}: approve or deny.`,
  interruptReason: "elicitation",
  shownSchemas: () => [shown()],
  requestSchema: () => exactly<ClientToolRequest>()(z.object({ ...requestBaseShape(), kind: z.literal("client-tool"), ...shown() })),
};
