import type { Context } from "hono";
import * as z from "zod";
import type { SessionError } from "../session/index.ts";
import { headersFor, type StreamFormat } from "../wire/index.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponse } from "./errors.ts";
import { CONVERSATION_ID_RULE, ConversationId } from "./schemas.ts";

/** An error lists at most this many problems, and says how many more there were. */
const MAX_PROBLEMS = 10;
/** No error message is longer than this, whatever the body held. */
const MAX_ERROR_CHARS = 2000;

/** Parses a JSON body against a schema; a Response is the error to send back. */
export async function readJson<T>(c: Context, schema: z.ZodType<T>): Promise<T | Response> {
  if (!/^application\/json\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
    return errorResponse(c, "unsupported_media_type", "Send the body as JSON with Content-Type: application/json.");
  }
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    return errorResponse(c, "bad_json", "The request body is not valid JSON.");
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return errorResponse(c, "invalid_request", describeProblems(parsed.error));
  return parsed.data;
}

/** The first problems of a body, bounded in number and length, and a count of the rest. */
export function describeProblems(error: z.ZodError): string {
  const { issues } = error;
  const listed = z.prettifyError(new z.ZodError(issues.slice(0, MAX_PROBLEMS)));
  const more = issues.length > MAX_PROBLEMS ? `\n…and ${issues.length - MAX_PROBLEMS} more problems.` : "";
  const text = `${listed}${more}`;
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}… (cut: fix the problems above first)` : text;
}

export function conversationId(c: Context): string | Response {
  const id = c.req.param("id") ?? "";
  return ConversationId.safeParse(id).success
    ? id
    : errorResponse(c, "invalid_conversation_id", CONVERSATION_ID_RULE);
}

export function streamResponse(stream: ReadableStream<Uint8Array>, format: StreamFormat = "sse"): Response {
  return new Response(stream, { headers: headersFor(format) });
}

/** A Durable Object's refusal as the HTTP error for its code. */
export function sessionError(c: Context, error: SessionError): Response {
  const res = errorResponse(c, error.code, error.message, error.details);
  if (error.code === "token_revoked") res.headers.set("www-authenticate", 'Bearer realm="handoff-runtime", error="invalid_token"');
  return res;
}

/** New turns per client (by address), through the Workers rate-limiting binding when it is bound. */
export async function limitClient(c: Context<AppEnv>): Promise<Response | null> {
  if (!c.env.CLIENT_LIMITER) return null;
  const key = c.req.header("cf-connecting-ip") ?? "local";
  const { success } = await c.env.CLIENT_LIMITER.limit({ key });
  return success ? null : errorResponse(c, "rate_limited", "Too many new turns from this client; try again in a minute.", { retryAfter: 60 });
}
