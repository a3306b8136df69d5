/**
 * An MCP server's elicitation, passed on by a tool (`ctx.elicit`): a form whose content fits its schema, or an https URL the
 * user opens. The call runs again whatever the user does: the server is told they accepted, declined or cancelled.
 */
import * as z from "zod";
import type { JsonSchema } from "../../schema/json-schema.ts";
import { type ElicitationAnswer, isAnswer, REQUEST_CANCELLED, REQUEST_EXPIRED } from "../decisions.ts";
import { exactly } from "../../schema/exactly.ts";
import { type RequestBase, type RequestKind, requestBaseShape, schemaField } from "./request-kind.ts";

/** An MCP server's elicitation: a form whose content fits `schema`, or a URL (https only) the user opens. */
export type ElicitationRequest = RequestBase & {
  kind: "elicitation";
  /** The MCP server that asks (its configured name). */
  server: string;
  message: string;
} & ({ mode: "form"; schema: JsonSchema } | { mode: "url"; url: string; host: string; elicitationId?: string });

/** An MCP server's elicitation, as a tool passes it on with `ctx.elicit`: a form, or an https URL to open. */
export type Elicitation =
  | { server: string; message: string; mode: "form"; schema: JsonSchema }
  | { server: string; message: string; mode: "url"; url: string; elicitationId?: string };

/** What the call's `ctx.elicit` returns, as MCP has it: accepted (with a form's content), declined, or cancelled (or expired). */
function outcome(decision: Parameters<RequestKind["settle"]>[1]): ElicitationAnswer {
  if (isAnswer(decision)) return { action: "accept", content: decision.answer as Record<string, unknown> };
  if (decision.approved) return { action: "accept" };
  const cancelled = decision.reason === REQUEST_CANCELLED || decision.reason === REQUEST_EXPIRED;
  return { action: cancelled ? "cancel" : "decline" };
}

/** Its two shapes: a form, or a URL to open. */
function shown() {
  const base = { server: z.string(), message: z.string() };
  return {
    form: { ...base, mode: z.literal("form"), schema: schemaField() },
    url: { ...base, mode: z.literal("url"), url: z.string(), host: z.string(), elicitationId: z.string().optional() },
  };
}

export const elicitation: RequestKind<ElicitationRequest> = {
  kind: "elicitation",
  waits: "input",
  answeredWith: (request) => (request.mode === "url" ? "yes-no" : "answer"),
  answerSchema: (request) => (request.mode === "form" ? request.schema : undefined),
  answerProblem: (request, answer) => {
    if (request.mode === "url") return 'asks the user to open a URL: send "approved": true once they have, or false to decline.';
    return typeof answer !== "object" || answer === null || Array.isArray(answer) ? "must be an object with the form's fields." : undefined;
  },
  operatorMay: () => false,
  settle: (_request, decision) => ({ kind: "runs-again", asked: outcome(decision) }),
  declined: { byUser: "The user declined", expired: "The user did not answer before the deadline: the request expired." },
  said: (request) => (request.mode === "url" ? `${request.message} (opens ${request.host})` : request.message),
  interruptReason: "elicitation",
  shownSchemas: () => Object.values(shown()),
  requestSchema: () => {
    const { form, url } = shown();
    const kind = { ...requestBaseShape(), kind: z.literal("elicitation") };
    return exactly<ElicitationRequest>()(z.union([z.object({ ...kind, ...form }), z.object({ ...kind, ...url })]));
  },
};
