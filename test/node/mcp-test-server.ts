/**
 * Real MCP servers for the tests, built with the official MCP server package and served from Node
 * over loopback, so the Worker's MCP client (in workerd or under wrangler dev) talks to them over
 * HTTP as it would in production. Each path is a server of its own:
 *
 * - /stateful/<name>/mcp  Streamable HTTP with sessions (`Mcp-Session-Id`); POST /__mcp/restart
 *                         forgets every session, as a restarted server would.
 * - /secured/<name>/mcp   stateless Streamable HTTP that wants `Authorization: Bearer <MCP_TEST_TOKEN>`.
 * - /legacy/<name>/sse    the older HTTP+SSE transport only (GET the stream, POST to the endpoint it names).
 *
 * `<name>` is any name a test picks, so its counts in GET /__mcp/stats (by `/<kind>/<name>`) are its own.
 *
 * Every server has the demo's tracking tools and test tools: `fail_always` (isError), `slow_echo`
 * (waits), `report` (structured content), `picture` (an image and a resource link), `grow` (adds a
 * tool, and the server says its list changed), `whoami` (echoes the credentials it was sent). GET /__mcp/stats tells what each path was asked.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createMcpHandler,
  inputRequired,
  inputResponse,
  type JSONRPCMessage,
  McpServer,
  type Transport,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import * as z from "zod";
import { trackingMcpServer } from "../../src/agents/tracking-mcp.ts";

export const MCP_TEST_TOKEN = "mcp-bearer 5f2c9a7e-secret";

/** The Authorization header of the request being served: `whoami` answers with it, as a careless server might. */
let currentAuthorization = "";

interface Stats {
  initialize: number;
  toolsList: number;
  toolsCall: number;
  authorization: string[];
  /** Each tools/call's `_meta`, as the client sent it. */
  callMeta: unknown[];
  /** Each tools/call's tool, and the user's responses and `requestState` it came back with (null for none). */
  calls: Array<{ tool: string; inputResponses: unknown; requestState: unknown }>;
}

/** Slots offered by `offer_slot`, on every server: each offer is new. */
let offers = 0;

/** The demo's tracking tools and the test tools, on a fresh server. */
function testServer(): McpServer {
  const server = trackingMcpServer();
  server.registerTool("fail_always", { description: "Always fails.", inputSchema: z.object({}) }, async () => ({
    content: [{ type: "text", text: "the warehouse system is down" }],
    isError: true,
  }));
  server.registerTool(
    "slow_echo",
    { description: "Echoes after a delay.", inputSchema: z.object({ text: z.string(), ms: z.number().int().min(0).max(30_000) }) },
    async ({ text, ms }) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { content: [{ type: "text", text }] };
    },
  );
  server.registerTool(
    "report",
    {
      description: "A structured report.",
      inputSchema: z.object({ region: z.enum(["north", "south"]) }),
      outputSchema: z.object({ region: z.string(), parcels: z.number(), late: z.number() }),
    },
    async ({ region }) => {
      const report = { region, parcels: 12, late: 1 };
      return { content: [{ type: "text", text: JSON.stringify(report) }], structuredContent: report };
    },
  );
  server.registerTool("picture", { description: "A photo of the parcel.", inputSchema: z.object({}) }, async () => ({
    content: [
      { type: "text", text: "Here is the parcel." },
      { type: "image", data: Buffer.from("0123456789ab").toString("base64"), mimeType: "image/png" },
      { type: "resource_link", uri: "https://tracking.example/parcels/A1001", name: "parcel A1001" },
    ],
  }));
  server.registerTool("whoami", { description: "Says which credentials the call came with.", inputSchema: z.object({}) }, async () => ({
    content: [{ type: "text", text: `You called with: ${currentAuthorization || "no credentials"}` }],
  }));
  // URL-mode elicitation: the user signs in on the carrier's page, then the call comes again.
  server.registerTool(
    "verify_identity",
    { description: "Asks the user to verify their identity on the carrier's site.", inputSchema: z.object({ url: z.string().optional() }) },
    async ({ url }, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, "verify");
      if (answer.kind === "missing")
        return inputRequired({
          inputRequests: {
            verify: inputRequired.elicitUrl({
              message: "Verify your identity with the carrier.",
              url: url ?? "https://verify.carrier.example/start?case=42",
            }),
          },
          requestState: "state-verify-42",
        });
      const said = answer.kind === "elicit" ? answer.action : "nothing";
      return { content: [{ type: "text", text: `verification: ${said}, state ${String(ctx.mcpReq.requestState?.() ?? "none")}` }] };
    },
  );
  // A server that keeps nothing between calls: each call without an answer makes a new offer, with a requestState of its own.
  server.registerTool(
    "offer_slot",
    { description: "Offers a delivery slot, a new one each time it is asked.", inputSchema: z.object({}) },
    async (_args, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, "slot");
      if (answer.kind === "missing") {
        offers++;
        return inputRequired({
          inputRequests: {
            slot: inputRequired.elicit({ message: `Take delivery slot ${offers}?`, requestedSchema: z.object({ take: z.boolean() }) }),
          },
          requestState: `slot-${offers}`,
        });
      }
      const took = answer.kind === "elicit" && answer.action === "accept" ? "took" : "did not take";
      return { content: [{ type: "text", text: `The user ${took} ${String(ctx.mcpReq.requestState?.() ?? "no slot")}.` }] };
    },
  );
  let grown = false;
  server.registerTool("grow", { description: "Adds the tool fresh_tool to this server.", inputSchema: z.object({}) }, async () => {
    if (grown) return { content: [{ type: "text", text: "already grown" }] };
    grown = true;
    // Registering after connecting makes the server send notifications/tools/list_changed.
    server.registerTool(
      "fresh_tool",
      { description: "A tool added while the client was connected.", inputSchema: z.object({}) },
      async () => ({
        content: [{ type: "text", text: "fresh" }],
      }),
    );
    return { content: [{ type: "text", text: "grown" }] };
  });
  return server;
}

function toRequest(req: IncomingMessage, body: string, origin: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
  return new Request(new URL(req.url ?? "/", origin), { method: req.method, headers, ...(body && req.method !== "GET" ? { body } : {}) });
}

async function send(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  res.on("close", () => void reader.cancel().catch(() => {}));
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) res.write(chunk.value);
  res.end();
}

/** The older HTTP+SSE transport, server side: the SSE stream names the endpoint messages are POSTed to. */
class LegacySseTransport implements Transport {
  readonly sessionId = randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];
  readonly #res: ServerResponse;
  readonly #base: string;

  constructor(res: ServerResponse, base: string) {
    this.#res = res;
    this.#base = base;
  }
  async start(): Promise<void> {
    this.#res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    this.#res.write(`event: endpoint\ndata: ${this.#base}/messages?sessionId=${this.sessionId}\n\n`);
  }
  async send(message: JSONRPCMessage): Promise<void> {
    this.#res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }
  async close(): Promise<void> {
    this.#res.end();
    this.onclose?.();
  }
}

export interface McpTestServer {
  url: string;
  close(): Promise<void>;
}

export async function startMcpTestServer(): Promise<McpTestServer> {
  const stats = new Map<string, Stats>();
  const statsOf = (path: string) => {
    let entry = stats.get(path);
    if (!entry) stats.set(path, (entry = { initialize: 0, toolsList: 0, toolsCall: 0, authorization: [], callMeta: [], calls: [] }));
    return entry;
  };
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const legacy = new Map<string, LegacySseTransport>();
  const secured = createMcpHandler(() => testServer());
  let origin = "";

  async function stateful(request: Request): Promise<Response> {
    const id = request.headers.get("mcp-session-id");
    const existing = id ? sessions.get(id) : undefined;
    if (existing) return existing.handleRequest(request);
    if (id) return Response.json({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }, { status: 404 });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, transport),
    });
    await testServer().connect(transport);
    return transport.handleRequest(request);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const path = new URL(req.url ?? "/", origin).pathname;
    if (path === "/__mcp/stats") return void res.end(JSON.stringify(Object.fromEntries(stats)));
    if (path === "/__mcp/restart") {
      for (const transport of sessions.values()) await transport.close().catch(() => {});
      sessions.clear();
      return void res.end("{}");
    }
    const base = path.replace(/\/(mcp|sse|messages)$/, "");
    const kind = path.split("/")[1];
    const entry = statsOf(base);
    entry.authorization.push(req.headers.authorization ?? "");
    currentAuthorization = req.headers.authorization ?? "";
    type Sent = { method?: string; params?: { _meta?: unknown; name?: string; inputResponses?: unknown; requestState?: unknown } };
    for (const message of body ? ([JSON.parse(body)].flat() as Sent[]) : []) {
      if (message.method === "initialize") entry.initialize++;
      if (message.method === "tools/list") entry.toolsList++;
      if (message.method === "tools/call") {
        entry.toolsCall++;
        entry.callMeta.push(message.params?._meta ?? null);
        const { name = "", inputResponses = null, requestState = null } = message.params ?? {};
        entry.calls.push({ tool: name, inputResponses, requestState });
      }
    }
    if (kind === "stateful" && path.endsWith("/mcp")) return send(res, await stateful(toRequest(req, body, origin)));
    if (kind === "secured" && path.endsWith("/mcp")) {
      if (req.headers.authorization !== `Bearer ${MCP_TEST_TOKEN}`) return send(res, new Response("unauthorized", { status: 401 }));
      return send(res, await secured.fetch(toRequest(req, body, origin)));
    }
    if (kind === "legacy" && path.endsWith("/sse") && req.method === "GET") {
      const transport = new LegacySseTransport(res, base);
      legacy.set(transport.sessionId, transport);
      res.on("close", () => legacy.delete(transport.sessionId));
      await testServer().connect(transport);
      return;
    }
    if (kind === "legacy" && path.endsWith("/messages")) {
      const transport = legacy.get(new URL(req.url ?? "/", origin).searchParams.get("sessionId") ?? "");
      if (!transport) return send(res, new Response("unknown session", { status: 404 }));
      transport.onmessage?.(JSON.parse(body) as JSONRPCMessage);
      return send(res, new Response(null, { status: 202 }));
    }
    // A server of the older transport refuses Streamable HTTP's POST.
    if (kind === "legacy") return send(res, new Response("method not allowed", { status: 405 }));
    return send(res, new Response("not found", { status: 404 }));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  origin = `http://127.0.0.1:${address.port}`;
  return {
    url: origin,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
