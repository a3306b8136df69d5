import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { secureHeaders } from "hono/secure-headers";
import { ConfigError, readConfig, redactorFor } from "../config.ts";
import type { Network } from "../runtime/index.ts";
import { requireAccess } from "./auth.ts";
import type { AppEnv } from "./app-env.ts";
import { errorResponse } from "./errors.ts";
import { openApiDocument } from "./openapi.ts";
import { conversationId, limitClient, readJson, sessionError, streamResponse } from "./request.ts";
import { ApprovalsBody, EventCursor, MessageBody } from "./schemas.ts";
import { sessionClient } from "./session-client.ts";
import { registerUIChatRoutes } from "./ui-chat-routes.ts";
import { registerTokenRoutes } from "./token-routes.ts";

export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The Worker's HTTP API and chat page. The network is passed in so /v1/agents describes what the
 * sessions run. Still one long registration: a conversations sub-app with one id middleware, and
 * 405s derived from the routes, belong to the restructuring issue (issue 14).
 */
export function createApp(network: Network): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.use(
    secureHeaders({
      contentSecurityPolicy: { defaultSrc: ["'self'"], connectSrc: ["'self'"], imgSrc: ["'self'", "data:"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'self'"] },
      referrerPolicy: "no-referrer",
      strictTransportSecurity: "max-age=31536000; includeSubDomains",
    }),
  );
  app.use("/v1/*", (c, next) => {
    const allowed = readConfig(c.env).ALLOWED_ORIGINS;
    return cors({
      origin: (origin) => (allowed.includes(origin) ? origin : null),
      allowHeaders: ["authorization", "content-type", "last-event-id"],
      allowMethods: ["GET", "POST", "DELETE"],
      maxAge: 600,
    })(c, next);
  });
  app.use("/v1/*", requireAccess());
  app.use("/v1/*", bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => errorResponse(c, "payload_too_large", `The body is over ${MAX_BODY_BYTES} bytes.`) }));

  app.get("/v1/openapi.json", (c) => c.json(openApiDocument()));

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
          handoffs: [...toolset.transfers.keys()],
          transferTools: toolset.specs.map((s) => s.name).filter((name) => !toolset.tools.has(name)),
        };
      }),
    }),
  );

  registerTokenRoutes(app);

  app.post("/v1/conversations/:id/messages", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const body = await readJson(c, MessageBody);
    if (body instanceof Response) return body;
    const max = readConfig(c.env).MAX_MESSAGE_CHARS;
    if (body.message.length > max) return errorResponse(c, "message_too_long", `The message is ${body.message.length} characters; the limit is ${max}.`);
    const limited = await limitClient(c);
    if (limited) return limited;
    const result = await sessionClient(c.env, id, c.get("access")).sendMessage(body.message, "sse");
    return result.ok ? streamResponse(result.value) : sessionError(c, result.error);
  });

  app.post("/v1/conversations/:id/approvals", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const body = await readJson(c, ApprovalsBody);
    if (body instanceof Response) return body;
    const result = await sessionClient(c.env, id, c.get("access")).decide(body.decisions, "sse");
    if (!result.ok) return sessionError(c, result.error);
    return result.value.kind === "stream" ? streamResponse(result.value.stream) : c.json({ status: "awaiting_approval", pending: result.value.pending }, 202);
  });

  // 204 when there is nothing to send and nothing running: the SSE rule that stops EventSource reconnecting.
  app.get("/v1/conversations/:id/events", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const cursor = EventCursor.safeParse(c.req.header("last-event-id") ?? c.req.query("after") ?? "0");
    if (!cursor.success) return errorResponse(c, "invalid_request", "Last-Event-ID (or ?after=) must be an event id in decimal digits, such as 42.");
    const result = await sessionClient(c.env, id, c.get("access")).events(cursor.data, "sse");
    if (!result.ok) return sessionError(c, result.error);
    return result.value.kind === "stream" ? streamResponse(result.value.stream) : c.body(null, 204);
  });

  app.get("/v1/conversations/:id", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const result = await sessionClient(c.env, id, c.get("access")).view();
    return result.ok ? c.json(result.value) : sessionError(c, result.error);
  });

  app.delete("/v1/conversations/:id", async (c) => {
    const id = conversationId(c);
    if (id instanceof Response) return id;
    const result = await sessionClient(c.env, id, c.get("access")).erase();
    return result.ok ? c.body(null, 204) : sessionError(c, result.error);
  });

  registerUIChatRoutes(app);

  const routes = ["/v1/conversations/:id/tokens", "/v1/conversations/:id/chat", "/v1/conversations/:id/chat/stream", "/v1/openapi.json", "/v1/agents", "/v1/conversations", "/v1/conversations/:id", "/v1/conversations/:id/messages", "/v1/conversations/:id/approvals", "/v1/conversations/:id/events"];
  for (const path of routes) {
    app.all(path, (c) => errorResponse(c, "method_not_allowed", `${c.req.method} is not allowed on ${c.req.path}.`));
  }
  app.all("/v1/*", (c) => errorResponse(c, "not_found", `No route for ${c.req.method} ${c.req.path}.`));
  // Everything else is the chat page and its files.
  app.get("*", async (c) => (c.env.ASSETS ? withHeaders(c, await c.env.ASSETS.fetch(c.req.raw)) : c.notFound()));

  app.notFound((c) => errorResponse(c, "not_found", `No route for ${c.req.method} ${c.req.path}.`));
  app.onError((error, c) => {
    console.error(redactorFor(c.env ?? {}).text(`request failed: ${error.message}`));
    if (error instanceof ConfigError) return errorResponse(c, "invalid_configuration", error.message);
    return errorResponse(c, "internal_error", "The request failed inside the Worker.");
  });
  return app;
}

/** Asset responses are immutable; copy them so the security headers can be set on them. */
function withHeaders(c: Context, res: Response): Response {
  if (res.status === 404) return errorResponse(c, "not_found", `No route for ${c.req.method} ${c.req.path}.`);
  return new Response(res.body, res);
}

