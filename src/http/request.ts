import type { Context, MiddlewareHandler } from "hono";
import * as z from "zod";
import type { ConversationErrorCode, ConversationResult } from "../conversation/index.ts";
import { headersFor, type StreamFormat, turnBody, type TurnStream } from "../wire/index.ts";
import type { ConversationEnv } from "./app-env.ts";
import { HttpError } from "./errors.ts";
import { conversationIdOf } from "./schemas.ts";
import { originOf, conversationClient } from "./conversation-client.ts";

/** An error lists at most this many problems, and says how many more there were. */
const MAX_PROBLEMS = 10;
/** No error message is longer than this, whatever the body held. */
const MAX_ERROR_CHARS = 2000;

/** Parses a JSON body against a schema, or throws the HttpError that says what to fix. */
export async function readJson<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  if (!/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
    throw new HttpError("unsupported_media_type", "Send the body as JSON with Content-Type: application/json.");
  }
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new HttpError("bad_json", "The request body is not valid JSON.");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new HttpError("invalid_request", describeProblems(parsed.error));
  return parsed.data;
}

/** The query string against a schema, or the HttpError that says what to fix. */
export function readQuery<T>(c: Context, schema: z.ZodType<T>): T {
  const parsed = schema.safeParse(c.req.query());
  if (!parsed.success) throw new HttpError("invalid_request", describeProblems(parsed.error));
  return parsed.data;
}

/** A JSON body that may be left out: undefined when there is none. */
export async function readOptionalJson<T>(c: Context, schema: z.ZodType<T>): Promise<T | undefined> {
  return c.req.header("content-length") !== "0" && c.req.raw.body ? readJson(c, schema) : undefined;
}

/** The first problems of a body, bounded in number and length, and a count of the rest. */
export function describeProblems(error: z.ZodError): string {
  const { issues } = error;
  const listed = z.prettifyError(new z.ZodError(issues.slice(0, MAX_PROBLEMS)));
  const more = issues.length > MAX_PROBLEMS ? `\n…and ${issues.length - MAX_PROBLEMS} more problems.` : "";
  const text = `${listed}${more}`;
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}… (cut: fix the problems above first)` : text;
}

/** Validates `:id` once for every conversation route, and gives the routes the conversation's client. */
export function conversationScope(): MiddlewareHandler<ConversationEnv> {
  return async (c, next) => {
    const id = conversationIdOf(c.req.param("id"));
    c.set("conversationId", id);
    c.set("client", conversationClient(c.env, id, c.get("access"), originOf(c.req)));
    await next();
  };
}

/** What the HTTP API adds to a conversation's refusal: the next step, in its own routes and headers (the conversation names none). */
const NEXT_STEP: Partial<Record<ConversationErrorCode, string>> = {
  // Every requester can create one; only the API key's first message also creates it, so that is not offered to all.
  conversation_not_found: "Create it with POST /v1/conversations.",
  request_pending: "Decide or answer them with POST /v1/conversations/:id/decisions.",
  event_id_unknown: "Reconnect without Last-Event-ID.",
};

/** The value of a Durable Object's answer, or its refusal thrown as the HTTP error of the same code. */
export async function expectOk<T>(result: Promise<ConversationResult<T>>): Promise<T> {
  const answer = await result;
  if (answer.ok) return answer.value;
  const { code, message, details } = answer.error;
  const next = NEXT_STEP[code];
  throw new HttpError(code, next ? `${message} ${next}` : message, details);
}

/** A turn's stream in `format`; the AI SDK's names the files a tool saves by their URLs on `conversationId`'s file route. */
export function streamResponse(turn: TurnStream, format: StreamFormat = "sse", conversationId?: string): Response {
  return new Response(turnBody(turn, format, conversationId), { headers: headersFor(format) });
}
