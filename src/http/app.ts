import { type Context, Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import { secureHeaders } from "hono/secure-headers";
import { ConfigError, readConfig, redactorFor } from "../config.ts";
import type { Env } from "../env.ts";
import { knownToolList } from "../mcp/tool-lists.ts";
import type { McpServerConfig } from "../runtime/ports/mcp-port.ts";
import { offeredTools } from "../runtime/tools/mcp-tools.ts";
import type { Network } from "../runtime/network.ts";
import type { AppEnv } from "./app-env.ts";
import { requireAccess } from "./auth.ts";
import { conversationRoutes } from "./conversation-routes.ts";
import { registerSignInRoutes } from "./dev-sign-in.ts";
import { errorResponse, HttpError, httpErrorResponse, shapeErrors } from "./errors.ts";
import { openApiDocument } from "./openapi.ts";
import { registerOperatorRoutes } from "./operator-routes.ts";
import { registerConversationCreate } from "./token-routes.ts";
import { registerMemoryRoutes } from "./memory-routes.ts";
import { notEnabledMessage, type Protocol } from "./protocols.ts";
import { PACKAGE_PROTOCOLS } from "./protocol-offers.ts";

export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The Worker's HTTP API and chat page. `networkFor` gives the network the conversations of an
 * environment run, so /v1/agents describes what they run.
 */
/** The chat API's routes whose bodies may carry files (data URLs, or an upload's bytes): their limit is the files' own. */
const CARRIES_FILES = /^\/v1\/conversations\/[^/]+\/(?:messages|chat|files)$/;

/**
 * Bodies are at most MAX_BODY_BYTES, but where files may come (the chat API's routes that take them, and the paths of the
 * protocols that carry them): an upload's body is at most FILE_MAX_BYTES, and a body with inline files (base64, a third
 * larger) may carry one file of that size beside its JSON. More goes by upload.
 */
function limitBodies(protocols: readonly Protocol[]): MiddlewareHandler<AppEnv> {
  const protocolFiles = new Set(protocols.filter((p) => p.carriesFiles).flatMap((p) => p.paths));
  return (c, next) => {
    const fileMax = readConfig(c.env).FILE_MAX_BYTES;
    const upload = c.req.method === "POST" && /^\/v1\/conversations\/[^/]+\/files$/.test(c.req.path);
    const carries = CARRIES_FILES.test(c.req.path) || protocolFiles.has(c.req.path);
    const maxSize = upload ? fileMax : carries ? MAX_BODY_BYTES + Math.ceil((fileMax * 4) / 3) : MAX_BODY_BYTES;
    const byUpload = maxSize > MAX_BODY_BYTES ? " Upload large files to POST /v1/conversations/:id/files and send their ids." : "";
    const said = upload ? `The file is over FILE_MAX_BYTES (${fileMax} bytes).` : `The body is over ${maxSize} bytes.${byUpload}`;
    return bodyLimit({ maxSize, onError: (c) => errorResponse(c, upload ? "file_too_large" : "payload_too_large", said) })(c, next);
  };
}

/** A request on a protocol's paths has its errors said in the protocol's shape, from its first middleware on. */
function protocolErrors(protocols: readonly Protocol[]): MiddlewareHandler<AppEnv> {
  const shaped = protocols.flatMap((protocol) => (protocol.errorBody ? protocol.paths.map((path) => ({ path, protocol })) : []));
  return async (c, next) => {
    // A Worker may mount the app under a prefix of its own.
    const on = shaped.find(({ path }) => c.req.path.endsWith(path));
    if (on) shapeErrors(c.req.raw, (error) => on.protocol.errorBody?.(error, on.path));
    await next();
  };
}

/** `protocols`: what the Worker serves beside its chat API (A2A, AG-UI); the others' paths say which option serves them. */
export function createApp(networkFor: (env: Env) => Network, protocols: readonly Protocol[] = []): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(securityHeaders());
  app.use("*", protocolErrors(protocols));
  // The methods a preflight may ask for are the ones the routes answer, read once they are all registered.
  app.use(
    "/v1/*",
    corsForAllowedOrigins(() => routeMethods(app)),
  );
  app.use("/v1/*", requireAccess());
  app.use("/v1/*", limitBodies(protocols));

  app.get("/v1/openapi.json", (c) => c.json(openApiDocument(protocols)));
  app.get("/v1/agents", (c) => c.json(describeAgents(networkFor(c.env))));
  registerSignInRoutes(app);
  registerOperatorRoutes(app);
  registerConversationCreate(app);
  registerMemoryRoutes(app);
  app.route("/v1/conversations/:id", conversationRoutes());
  for (const protocol of protocols) protocol.register(app, networkFor);
  answerProtocolsNotServed(app, new Set(protocols.map((p) => p.name)));

  answerOtherMethods(app);
  app.all("/v1/*", (c) => errorResponse(c, "not_found", `No route for ${c.req.method} ${c.req.path}.`));
  // Everything else is the chat page and its files.
  app.get("*", async (c) => (c.env.ASSETS ? withHeaders(c, await c.env.ASSETS.fetch(c.req.raw)) : c.notFound()));
  app.notFound((c) => errorResponse(c, "not_found", `No route for ${c.req.method} ${c.req.path}.`));
  app.onError((error, c) => {
    if (error instanceof HttpError) return httpErrorResponse(c, error);
    console.error(redactorFor(c.env ?? {}).text(`request failed: ${error.message}`));
    if (error instanceof ConfigError) return errorResponse(c, "invalid_configuration", error.message);
    return errorResponse(c, "internal_error", "The request failed inside the Worker.");
  });
  return app;
}

function securityHeaders(): MiddlewareHandler {
  const secure = secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'self'"],
      connectSrc: ["'self'"],
      // blob: the thumbnails of files, read with the page's credential.
      imgSrc: ["'self'", "data:", "blob:"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
    },
    referrerPolicy: "no-referrer",
    strictTransportSecurity: "max-age=31536000; includeSubDomains",
  });
  // A route's own policy wins (a file read back is served in a sandbox with no sources at all).
  return async (c, next) => {
    let own: string | null = null;
    await secure(c, async () => {
      await next();
      own = c.res.headers.get("content-security-policy");
    });
    if (own) c.res.headers.set("content-security-policy", own);
  };
}

/**
 * CORS for the origins ALLOWED_ORIGINS lists, none by default; `methods`: what the API's routes
 * answer. Built once per environment, as the configuration is read: not again for every request.
 */
function corsForAllowedOrigins(methods: () => string[]) {
  const built = new WeakMap<object, MiddlewareHandler>();
  return (c: Context<AppEnv>, next: () => Promise<void>) => {
    let handler = built.get(c.env);
    if (!handler) {
      const allowed = readConfig(c.env).ALLOWED_ORIGINS;
      handler = cors({
        origin: (origin) => (allowed.includes(origin) ? origin : null),
        allowHeaders: ["authorization", "content-type", "last-event-id", "traceparent"],
        allowMethods: methods(),
        exposeHeaders: ["retry-after", "x-page-start", "x-page-total", "x-page-previous"],
        maxAge: 600,
      });
      built.set(c.env, handler);
    }
    return handler(c, next);
  };
}

/** GET /v1/agents: each agent's tools, the handoffs it may make, and the transfer tools the model sees for them. */
function describeAgents(network: Network) {
  return {
    entry: network.entry.name,
    agents: [...network.agents.values()].map((agent) => {
      const toolset = network.toolset(agent.name);
      return {
        name: agent.name,
        description: agent.description,
        // What a user might ask it: the chat page offers some as prompts in an empty conversation.
        examples: agent.examples.slice(0, 3),
        model: agent.model ?? null,
        tools: [...toolset.tools.keys()],
        mcpServers: agent.mcpServers.map((server) => describeMcpServer(server, new Set(toolset.specs.map((s) => s.name)))),
        human: agent.human,
        // A person hands back through the operator API, to any agent: they have no transfer tools.
        handoffs: agent.human ? [] : [...toolset.transfers.keys()],
        transferTools: agent.human ? [] : toolset.specs.map((s) => s.name).filter((name) => !toolset.tools.has(name)),
      };
    }),
  };
}

/** A server's tools as this Worker last listed them (`<server>_<tool>` as the model sees them), or that it has not yet. */
function describeMcpServer(server: McpServerConfig, taken: Set<string>) {
  const known = knownToolList(server);
  if (!known) return { name: server.name, url: server.url, status: "not yet listed", tools: [] };
  const tools = offeredTools(server, known.tools, taken).map(({ info, name }) => ({
    name,
    serverName: info.name,
    description: info.description ?? "",
  }));
  return { name: server.name, url: server.url, status: "listed", listedAt: new Date(known.listedAt).toISOString(), tools };
}

/** The API's own routes (under /v1/), not the middleware that matches every method. */
function apiRoutes(app: Hono<AppEnv>) {
  return app.routes.filter((r) => r.method !== "ALL" && r.path.startsWith("/v1/"));
}

/** Every method a route of the API answers (GET, POST, PATCH, DELETE…), from the routes themselves. */
function routeMethods(app: Hono<AppEnv>): string[] {
  return [...new Set(apiRoutes(app).map((r) => r.method))].sort();
}

/** 405 for every path the API serves with another method: the paths come from the routes themselves. */
function answerOtherMethods(app: Hono<AppEnv>): void {
  for (const path of new Set(apiRoutes(app).map((r) => r.path)))
    app.all(path, (c) => errorResponse(c, "method_not_allowed", `${c.req.method} is not allowed on ${c.req.path}.`));
}

/** 404 `protocol_not_enabled` on the paths of the protocols the package offers that the Worker was not given, naming the option. */
function answerProtocolsNotServed(app: Hono<AppEnv>, served: ReadonlySet<string>): void {
  for (const offer of PACKAGE_PROTOCOLS) {
    if (served.has(offer.name)) continue;
    for (const path of offer.paths)
      app.all(path, (c) => errorResponse(c, "protocol_not_enabled", notEnabledMessage(offer, c.req.method, c.req.path)));
  }
}

/** Asset responses are immutable; copy them so the security headers can be set on them. */
function withHeaders(c: Context, res: Response): Response {
  if (res.status === 404) return errorResponse(c, "not_found", `No route for ${c.req.method} ${c.req.path}.`);
  return new Response(res.body, res);
}
