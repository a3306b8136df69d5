import { type Context, Hono } from "hono";
import { z } from "zod";
import type { Env } from "../env.ts";
import type { Network } from "../runtime/index.ts";
import { type ConversationView, SSE_HEADERS, type SessionError, type SessionResult } from "../session/index.ts";
import { errorResponse } from "./errors.ts";
import { ConversationId, MessageBody } from "./schemas.ts";

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
    const id = c.req.param("id");
    if (!ConversationId.safeParse(id).success) return badId(c);
    const body = await readJson(c, MessageBody);
    if (body instanceof Response) return body;
    const result: SessionResult<ReadableStream<Uint8Array>> = await c.env.CONVERSATIONS.getByName(id).sendMessage(id, body.message);
    if (!result.ok) return sessionError(c, result.error);
    return new Response(result.value, { headers: SSE_HEADERS });
  });

  app.get("/v1/conversations/:id", async (c) => {
    const id = c.req.param("id");
    if (!ConversationId.safeParse(id).success) return badId(c);
    const result: SessionResult<ConversationView> = await c.env.CONVERSATIONS.getByName(id).getView(id);
    return result.ok ? c.json(result.value) : sessionError(c, result.error);
  });

  app.notFound((c) => errorResponse(c, "not_found", `No route for ${c.req.method} ${new URL(c.req.url).pathname}.`));
  app.onError((error, c) => {
    console.error("request failed", error.message);
    return errorResponse(c, "internal_error", "The request failed inside the Worker.");
  });
  return app;
}

function badId(c: Context): Response {
  return errorResponse(c, "invalid_conversation_id", "Conversation ids are 1-128 characters of A-Z, a-z, 0-9, _ and -.");
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
