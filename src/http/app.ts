import { type Context, Hono } from "hono";
import { z } from "zod";
import type { Env } from "../env.ts";
import type { Network } from "../runtime/index.ts";
import { SSE_HEADERS, type SessionError } from "../session/index.ts";
import { errorResponse } from "./errors.ts";
import { ApprovalsBody, ConversationId, EventCursor, MessageBody } from "./schemas.ts";
import { sessionClient } from "./session-client.ts";

type AppEnv = { Bindings: Env };

/** The Worker's HTTP API. The network is passed in so /v1/agents describes what the sessions run. */
export function createApp(network: Network): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/v1/agents", (c) =>
    c.json({
      entry: network.entry.name,
      agents: [...network.agents.values()].map((agent) => {
        const toolset = network.toolset(agent.name);
        return {
          name: agent.name,
          description: agent.description,
          model: agent.model ?? null,
          tools: [...toolset.tools.keys()],
          handoffs: [...toolset.transfers.values()],
          transferTools: [...toolset.transfers.keys()],
        };
      }),
    }),
  );

  app.post("/v1/conversations/:id/messages", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const body = await readJson(c, MessageBody);
    if (body instanceof Response) return body;
    const result = await sessionClient(c.env, id).sendMessage(body.message);
    return result.ok ? sse(result.value) : sessionError(c, result.error);
  });

  app.post("/v1/conversations/:id/approvals", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const body = await readJson(c, ApprovalsBody);
    if (body instanceof Response) return body;
    const result = await sessionClient(c.env, id).decide(body.decisions);
    if (!result.ok) return sessionError(c, result.error);
    return result.value.kind === "stream" ? sse(result.value.stream) : c.json({ status: "awaiting_approval", pending: result.value.pending }, 202);
  });

  app.get("/v1/conversations/:id/events", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const cursor = EventCursor.safeParse(c.req.header("last-event-id") ?? c.req.query("after") ?? 0);
    if (!cursor.success) return errorResponse(c, "invalid_request", "Last-Event-ID (or ?after=) must be a non-negative integer event id.");
    const result = await sessionClient(c.env, id).events(cursor.data);
    return result.ok ? sse(result.value) : sessionError(c, result.error);
  });

  app.get("/v1/conversations/:id", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const result = await sessionClient(c.env, id).view();
    return result.ok ? c.json(result.value) : sessionError(c, result.error);
  });

  app.delete("/v1/conversations/:id", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const result = await sessionClient(c.env, id).erase();
    return result.ok ? c.body(null, 204) : sessionError(c, result.error);
  });

  for (const path of ["/v1/agents", "/v1/conversations/:id", "/v1/conversations/:id/messages", "/v1/conversations/:id/approvals", "/v1/conversations/:id/events"]) {
    app.all(path, (c) => errorResponse(c, "method_not_allowed", `${c.req.method} is not allowed on ${new URL(c.req.url).pathname}.`));
  }
  app.notFound((c) => errorResponse(c, "not_found", `No route for ${c.req.method} ${new URL(c.req.url).pathname}.`));
  app.onError((error, c) => {
    console.error("request failed:", error.message);
    return errorResponse(c, "internal_error", "The request failed inside the Worker.");
  });
  return app;
}

function sse(stream: ReadableStream<Uint8Array>): Response {
  return new Response(stream, { headers: SSE_HEADERS });
}

function conversationId(c: Context): string | Response {
  const id = c.req.param("id") ?? "";
  return ConversationId.safeParse(id).success
    ? id
    : errorResponse(c, "invalid_conversation_id", "Conversation ids are 1-128 characters of A-Z, a-z, 0-9, _ and -.");
}

function sessionError(c: Context, error: SessionError): Response {
  return errorResponse(c, error.code, error.message, error.details);
}

/** Parses a JSON body against a schema; a Response is the error to send back. */
async function readJson<T>(c: Context, schema: z.ZodType<T>): Promise<T | Response> {
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
