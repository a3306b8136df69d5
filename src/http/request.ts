import type { Context } from "hono";
import * as z from "zod";
import { SSE_HEADERS, type SessionError } from "../session/index.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponse } from "./errors.ts";
import { ConversationId } from "./schemas.ts";

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
  if (!parsed.success) return errorResponse(c, "invalid_request", z.prettifyError(parsed.error));
  return parsed.data;
}

export function conversationId(c: Context): string | Response {
  const id = c.req.param("id") ?? "";
  return ConversationId.safeParse(id).success
    ? id
    : errorResponse(c, "invalid_conversation_id", "Conversation ids are 1-128 characters of A-Z, a-z, 0-9, _ and -.");
}

export function sse(stream: ReadableStream<Uint8Array>): Response {
  return new Response(stream, { headers: SSE_HEADERS });
}

/** A Durable Object's refusal as the HTTP error for its code. */
export function sessionError(c: Context, error: SessionError): Response {
  return errorResponse(c, error.code, error.message, error.details);
}

/** New turns per client (by address), through the Workers rate-limiting binding when it is bound. */
export async function limitClient(c: Context<AppEnv>): Promise<Response | null> {
  if (!c.env.CLIENT_LIMITER) return null;
  const key = c.req.header("cf-connecting-ip") ?? "local";
  const { success } = await c.env.CLIENT_LIMITER.limit({ key });
  return success ? null : errorResponse(c, "rate_limited", "Too many new turns from this client; try again in a minute.", { retryAfter: 60 });
}
