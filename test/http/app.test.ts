/**
 * What `createApp` puts together, asked of an app built for each test: the middleware and where
 * it applies, the body limit, the 405s and not-founds derived from the routes, the page's
 * fallback, the error handler, and GET /v1/agents. The Worker builds its app once per isolate, so
 * the workerd tests can see these only as that one build made them; here each test builds its own
 * (under Node, with no Durable Object bound: the routes that need one answer that it is missing).
 */
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { z } from "zod";
import { createApp, MAX_BODY_BYTES } from "../../src/http/app.ts";
import { a2a, agUi, createHandoffWorker, type Protocol } from "../../src/cloudflare/index.ts";
import { openApiDocument } from "../../src/http/openapi.ts";
import { McpConnections } from "../../src/mcp/mcp-connections.ts";
import { Agent, Network, tool } from "../../src/runtime/index.ts";

/** The protocols the repository's Worker serves, whose parts its document has. */
const PROTOCOLS = [a2a(), agUi()];

const lookup = tool({
  name: "lookup_order",
  description: "Look an order up.",
  parameters: z.object({ id: z.string() }),
  execute: () => ({}),
});
/** Named as the MCP server's `whoami` would be, so the server's tool must be named apart from it. */
const ownWhoami = tool({ name: "lab_whoami", description: "Says who.", parameters: z.object({}), execute: () => ({}) });

function network(mcpUrl = "http://127.0.0.1:9/unlisted/mcp"): Network {
  const desk = new Agent({ name: "desk", description: "A person.", instructions: "", human: true });
  const lab = new Agent({
    name: "lab",
    description: "Uses a tool server.",
    instructions: "You test.",
    model: "lab-model",
    tools: [ownWhoami],
    mcpServers: [{ name: "lab", url: mcpUrl, denyTools: ["slow_echo"] }],
  });
  const billing = new Agent({ name: "billing", description: "Bills.", instructions: "You bill.", tools: [lookup], handoffs: [desk] });
  const triage = new Agent({ name: "triage", description: "Routes.", instructions: "You route.", handoffs: [billing, lab, desk] });
  billing.addHandoff(triage);
  return new Network(triage, { defaultModel: "default-model" });
}

const open = { ALLOW_ANONYMOUS: "true" };
const CSP =
  "default-src 'self'; connect-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

function request(path: string, init: RequestInit = {}, env: object = open, net = network()): Promise<Response> {
  return Promise.resolve(createApp(() => net, [a2a(), agUi()]).request(`https://chat.test${path}`, init, env));
}

async function errorOf(res: Response): Promise<{ status: number; code: string; message: string }> {
  const { error } = (await res.json()) as { error: { code: string; message: string } };
  return { status: res.status, code: error.code, message: error.message };
}

/** The page's files, as Workers Static Assets answers: the page at /, its script, 404 for anything else. */
const FILES: Record<string, [string, string]> = {
  "/": ["<!doctype html><title>chat</title>", "text/html"],
  "/app.js": ["console.log('chat')", "text/javascript"],
};
const assets = {
  fetch: async (req: Request) => {
    const file = FILES[new URL(req.url).pathname];
    return file ? new Response(file[0], { headers: { "content-type": file[1] } }) : new Response("not here", { status: 404 });
  },
};

afterEach(() => vi.restoreAllMocks());

describe("the app's middleware", () => {
  it("sets the security headers on every kind of answer: JSON, an error, a 405, a page", async () => {
    const answers = [
      await request("/v1/agents"),
      await request("/v1/nope"),
      await request("/v1/agents", { method: "DELETE" }),
      await request("/", {}, { ...open, ASSETS: assets }),
    ];
    for (const res of answers) {
      expect(res.headers.get("content-security-policy")).toBe(CSP);
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  it("answers a preflight from an allowed origin with the methods the routes answer, the API's headers and a max age", async () => {
    const env = { ...open, ALLOWED_ORIGINS: "https://app.example" };
    const preflight = (origin: string, path = "/v1/agents") =>
      request(path, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } }, env);
    const allowed = await preflight("https://app.example");
    expect(allowed.status).toBe(204);
    expect(Object.fromEntries([...allowed.headers].filter(([name]) => name.startsWith("access-control-")))).toEqual({
      "access-control-allow-origin": "https://app.example",
      "access-control-allow-methods": "DELETE,GET,PATCH,POST",
      "access-control-allow-headers": "authorization,content-type,last-event-id,traceparent",
      "access-control-expose-headers": "retry-after,x-page-start,x-page-total,x-page-previous",
      "access-control-max-age": "600",
    });
    expect((await preflight("https://evil.example")).headers.get("access-control-allow-origin")).toBeNull();
    // The page is not the API: no CORS there.
    expect((await preflight("https://app.example", "/")).headers.get("access-control-allow-origin")).toBeNull();
    const answer = await request("/v1/agents", { headers: { origin: "https://app.example" } }, env);
    expect(answer.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(answer.headers.get("access-control-expose-headers")).toBe("retry-after,x-page-start,x-page-total,x-page-previous");
  });

  it("asks for access on the API and not on the page", async () => {
    const closed = { ASSETS: assets };
    expect(await errorOf(await request("/v1/agents", {}, closed))).toMatchObject({ status: 503, code: "auth_not_configured" });
    const page = await request("/", {}, closed);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>chat</title>");
  });

  it("refuses a body over MAX_BODY_BYTES on the API, and takes one of exactly that size to the route", async () => {
    const post = (bytes: number) =>
      request("/v1/conversations/c1/retry", {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(bytes) },
        body: `{"message":"${"a".repeat(bytes - 14)}"}`,
      });
    expect(await errorOf(await post(MAX_BODY_BYTES + 1))).toEqual({
      status: 413,
      code: "payload_too_large",
      message: `The body is over ${MAX_BODY_BYTES} bytes.`,
    });
    // Past the limit, the route itself answers: this app binds no conversations.
    expect(await errorOf(await post(MAX_BODY_BYTES))).toMatchObject({ status: 500, code: "invalid_configuration" });
  });

  it("takes a file's worth more where files may come: inline (base64) on a message, the file itself on an upload", async () => {
    const env = { ...open, FILE_MAX_BYTES: "3000" };
    const inline = MAX_BODY_BYTES + 4000;
    const message = (bytes: number) =>
      request(
        "/v1/conversations/c1/messages",
        { method: "POST", headers: { "content-type": "application/json", "content-length": String(bytes) }, body: "x".repeat(bytes) },
        env,
      );
    expect(await errorOf(await message(inline + 1))).toEqual({
      status: 413,
      code: "payload_too_large",
      message: `The body is over ${inline} bytes. Upload large files to POST /v1/conversations/:id/files and send their ids.`,
    });
    // Within it, the route answers (this app binds no conversations).
    expect(await errorOf(await message(inline))).toMatchObject({ status: 500, code: "invalid_configuration" });
    const upload = (bytes: number) =>
      request(
        "/v1/conversations/c1/files",
        { method: "POST", headers: { "content-type": "image/png", "content-length": String(bytes) }, body: new Uint8Array(bytes) },
        env,
      );
    expect(await errorOf(await upload(3001))).toEqual({
      status: 413,
      code: "file_too_large",
      message: "The file is over FILE_MAX_BYTES (3000 bytes).",
    });
    expect(await errorOf(await upload(3000))).toMatchObject({ status: 500, code: "invalid_configuration" });
  });
});

describe("the app's routes", () => {
  it("mounts each part of the API: none of their routes is a not-found", async () => {
    const env = { ...open, API_KEY: "k-0123456789abcdef" };
    const key = { authorization: "Bearer k-0123456789abcdef" };
    const probes: Array<[string, RequestInit]> = [
      ["/v1/openapi.json", {}],
      ["/v1/me", {}],
      ["/v1/operator/conversations", { headers: key }],
      ["/v1/conversations", { method: "POST", headers: key }],
      ["/v1/conversations/c1/turns", { headers: key }],
      ["/.well-known/agent-card.json", {}],
      ["/v1/a2a", { method: "POST", headers: key }],
    ];
    for (const [path, init] of probes) {
      const res = await request(path, init, env);
      const body = (await res.json()) as { error?: { code: string } };
      // Answered by the part's own handler: neither missing nor failing before it (the key is compared as in workerd).
      expect(body.error?.code, path).not.toBe("not_found");
      expect(body.error?.code, path).not.toBe("internal_error");
    }
  });

  it("serves only the protocols it is given: another protocol's paths answer 404 protocol_not_enabled naming the option", async () => {
    const agUiOnly = createApp(() => network(), [agUi()]);
    const ask = (path: string, init: RequestInit = {}) => Promise.resolve(agUiOnly.request(`https://chat.test${path}`, init, open));
    const post = { method: "POST", headers: { "content-type": "application/json" }, body: "{}" };
    for (const [path, init] of [
      ["/v1/a2a", post],
      ["/.well-known/agent-card.json", {}],
    ] as const) {
      const refused = await errorOf(await ask(path, init));
      expect(refused, path).toMatchObject({ status: 404, code: "protocol_not_enabled" });
      expect(refused.message).toContain('`protocols: [a2a()]` (import { a2a } from "handoff-runtime/cloudflare")');
    }
    // AG-UI is served: its own check refuses the empty body.
    expect(await errorOf(await ask("/v1/ag-ui", post))).toMatchObject({ status: 400, code: "invalid_request" });
    const none = createApp(() => network());
    const refused = await errorOf(await Promise.resolve(none.request("https://chat.test/v1/ag-ui", post, open)));
    expect(refused).toMatchObject({ status: 404, code: "protocol_not_enabled" });
    expect(refused.message).toContain("`protocols: [agUi()]`");
    // The OpenAPI document lists what the Worker serves.
    const { paths } = (await (await ask("/v1/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(paths)).toContain("/v1/ag-ui");
    expect(Object.keys(paths)).not.toContain("/v1/a2a");
  });

  it("serves a protocol a Worker defines for itself: its route, its body limit, its part of the document", async () => {
    // A descriptor written here, not in src/: what a Worker adds for a protocol of its own.
    const echo: Protocol = {
      name: "echo",
      paths: ["/v1/echo"],
      openApi: () => ({
        "/v1/echo": { post: { summary: "Says back what it is sent", responses: { "200": { description: "The body" } } } },
      }),
      register: (app) => app.post("/v1/echo", async (c) => c.json({ echoed: await c.req.json() })),
    };
    const worker = createHandoffWorker({ network: network(), protocols: [echo] });
    const ask = (path: string, init: RequestInit = {}) => Promise.resolve(worker.app.request(`https://chat.test${path}`, init, open));
    const post = (body: string) => ({ method: "POST", headers: { "content-type": "application/json" }, body });
    const echoed = await ask("/v1/echo", post(JSON.stringify({ hello: "there" })));
    expect([echoed.status, await echoed.json()]).toEqual([200, { echoed: { hello: "there" } }]);
    // Behind the same access as every route, and the API's body limit (it carries no files).
    const closed = { API_KEY: "a-master-key-0123456789" };
    expect((await Promise.resolve(worker.app.request("https://chat.test/v1/echo", post("{}"), closed))).status).toBe(401);
    const large = await errorOf(await ask("/v1/echo", post(JSON.stringify({ text: "x".repeat(MAX_BODY_BYTES) }))));
    expect(large).toMatchObject({ status: 413, code: "payload_too_large" });
    const { paths } = (await (await ask("/v1/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(paths["/v1/echo"]).toEqual({
      post: { summary: "Says back what it is sent", responses: { "200": { description: "The body" } } },
    });
    // The package's protocols it was not given still say how to serve them.
    expect(await errorOf(await ask("/v1/a2a", post("{}")))).toMatchObject({ status: 404, code: "protocol_not_enabled" });
  });

  it("says the API's errors on a protocol's paths in the protocol's shape, with the API's status and challenge", async () => {
    // A protocol of this test's own, whose errors are `{ failed: <code> }`, and A2A's, whose errors are JSON-RPC's.
    const echo: Protocol = {
      name: "echo",
      paths: ["/v1/echo"],
      errorBody: ({ code, message }) => ({ failed: code, why: message }),
      register: (app) => app.post("/v1/echo", async (c) => c.json({ echoed: await c.req.json() })),
    };
    const worker = createHandoffWorker({ network: network(), protocols: [echo, a2a()] });
    const closed = { API_KEY: "a-master-key-0123456789" };
    const ask = (path: string, init: RequestInit, env: object = closed) =>
      Promise.resolve(worker.app.request(`https://chat.test${path}`, init, env));
    const post = (body: string) => ({ method: "POST", headers: { "content-type": "application/json" }, body });

    const refused = await ask("/v1/echo", post("{}"));
    expect([refused.status, await refused.json()]).toEqual([401, { failed: "unauthorized", why: expect.any(String) }]);
    expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="handoff-runtime"');
    // A2A's refused credential stays HTTP's (its clients report an authentication failure); its other errors are JSON-RPC's.
    const rpc = await ask("/v1/a2a", post("{}"));
    expect(await errorOf(rpc)).toMatchObject({ status: 401, code: "unauthorized" });
    expect(rpc.headers.get("www-authenticate")).toBe('Bearer realm="handoff-runtime"');
    // A2A's bodies carry files: over the API's limit by more than a file's worth (base64).
    const overFiles = JSON.stringify({ text: "x".repeat(MAX_BODY_BYTES + 2000) });
    const large = await ask("/v1/a2a", post(overFiles), { ...open, FILE_MAX_BYTES: "1000" });
    expect([large.status, await large.json()]).toEqual([
      413,
      {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: expect.stringContaining("The body is over"), data: { code: "payload_too_large" } },
      },
    ]);
    // The card is a discovery document, not JSON-RPC: its errors are the API's; so are the chat API's beside them.
    expect(await errorOf(await ask("/.well-known/agent-card.json", {}, { ...open, A2A: "off" }))).toMatchObject({
      status: 404,
      code: "not_found",
    });
    expect(await errorOf(await ask("/v1/conversations", { method: "POST" }))).toMatchObject({ status: 401, code: "unauthorized" });
  });

  it("serves the OpenAPI document", async () => {
    expect(await (await request("/v1/openapi.json")).json()).toEqual(openApiDocument(PROTOCOLS));
  });

  it("answers 405 for another method on a path the API serves, the sub-app's root included, and 404 for a path it does not", async () => {
    expect(await errorOf(await request("/v1/agents", { method: "PUT" }))).toEqual({
      status: 405,
      code: "method_not_allowed",
      message: "PUT is not allowed on /v1/agents.",
    });
    // A conversation's paths ask for its object first: bound here, and never called.
    const bound = { ...open, CONVERSATIONS: { getByName: () => ({}) } };
    expect(await errorOf(await request("/v1/conversations/c1", { method: "POST" }, bound))).toEqual({
      status: 405,
      code: "method_not_allowed",
      message: "POST is not allowed on /v1/conversations/c1.",
    });
    expect(await errorOf(await request("/v1/conversations/c1/turns/2/trace", { method: "DELETE" }, bound))).toMatchObject({ status: 405 });
    expect(await errorOf(await request("/v1/nope", { method: "POST" }))).toEqual({
      status: 404,
      code: "not_found",
      message: "No route for POST /v1/nope.",
    });
  });

  it("serves the page's files with the security headers, and answers a file it lacks, or no files at all, as JSON", async () => {
    const page = await request("/", {}, { ...open, ASSETS: assets });
    expect(page.headers.get("content-type")).toBe("text/html");
    expect(page.headers.get("x-frame-options")).toBe("SAMEORIGIN");
    const script = await request("/app.js", {}, { ...open, ASSETS: assets });
    expect([script.status, script.headers.get("content-type"), await script.text()]).toEqual([
      200,
      "text/javascript",
      "console.log('chat')",
    ]);
    expect(await errorOf(await request("/missing.js", {}, { ...open, ASSETS: assets }))).toEqual({
      status: 404,
      code: "not_found",
      message: "No route for GET /missing.js.",
    });
    expect(await errorOf(await request("/"))).toEqual({ status: 404, code: "not_found", message: "No route for GET /." });
    expect(await errorOf(await request("/", { method: "POST" }))).toEqual({
      status: 404,
      code: "not_found",
      message: "No route for POST /.",
    });
  });
});

describe("the app's error handler", () => {
  it("answers a configuration that does not parse with what is wrong in it, and logs it", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const { status, code, message } = await errorOf(await request("/v1/agents", {}, { ...open, OPENAI_MAX_RETRIES: "lots" }));
    expect({ status, code }).toEqual({ status: 500, code: "invalid_configuration" });
    expect(message).toMatch(/^Invalid Worker configuration: .*OPENAI_MAX_RETRIES/s);
    expect(logged.mock.calls).toEqual([[`request failed: ${message}`]]);
  });

  it("answers a failure it did not expect with 500 and no detail, and logs it without the configured secrets", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const secret = "sk-configured-9f8e7d6c5b4a";
    const env = {
      ...open,
      OPENAI_API_KEY: secret,
      CONVERSATIONS: {
        getByName: () => {
          throw new Error(`binding broke holding ${secret}`);
        },
      },
    };
    expect(await errorOf(await request("/v1/conversations/c1/turns", {}, env))).toEqual({
      status: 500,
      code: "internal_error",
      message: "The request failed inside the Worker.",
    });
    expect(logged.mock.calls).toEqual([["request failed: binding broke holding [redacted]"]]);
  });
});

describe("GET /v1/agents", () => {
  type Described = {
    entry: string;
    agents: Array<{ name: string; description: string; model: string | null; mcpServers: unknown[] } & Record<string, unknown>>;
  };
  const described = async (net?: Network) => (await (await request("/v1/agents", {}, open, net)).json()) as Described;

  it("describes each agent: its model, tools, handoffs and transfer tools; a person with no handoffs", async () => {
    const { entry, agents } = await described();
    expect(entry).toBe("triage");
    expect(agents.map((a) => a.name)).toEqual(["triage", "billing", "lab", "desk"]);
    const [triage, billing, lab, desk] = agents;
    expect(triage).toEqual({
      name: "triage",
      description: "Routes.",
      examples: [],
      model: null,
      tools: [],
      mcpServers: [],
      human: false,
      handoffs: ["billing", "lab", "desk"],
      transferTools: ["transfer_to_billing", "transfer_to_lab", "transfer_to_desk"],
    });
    expect(billing).toMatchObject({
      tools: ["lookup_order"],
      handoffs: ["desk", "triage", "lab"],
      transferTools: ["transfer_to_desk", "transfer_to_triage", "transfer_to_lab"],
    });
    expect(lab).toMatchObject({
      model: "lab-model",
      tools: ["lab_whoami"],
      handoffs: ["triage", "billing", "desk"],
      transferTools: ["transfer_to_triage", "transfer_to_billing", "transfer_to_desk"],
    });
    expect(desk).toMatchObject({ human: true, handoffs: [], transferTools: [] });
  });

  it("names an MCP server not listed yet, then the tools this isolate last listed from it, named apart from the agent's own", async () => {
    const url = `${inject("mcpUrl")}/stateful/app-test/mcp`;
    const net = network(url);
    const before = (await described(net)).agents.find((a) => a.name === "lab")!;
    expect(before.mcpServers).toEqual([{ name: "lab", url, status: "not yet listed", tools: [] }]);

    const listedFrom = Date.now();
    await new McpConnections().listTools({ name: "lab", url }, AbortSignal.timeout(10_000));
    const [server] = (await described(net)).agents.find((a) => a.name === "lab")!.mcpServers as Array<{
      status: string;
      listedAt: string;
      tools: Array<{ name: string; serverName: string; description: string }>;
    }>;
    expect(server).toMatchObject({ name: "lab", url, status: "listed" });
    expect(Date.parse(server!.listedAt)).toBeGreaterThanOrEqual(listedFrom - 1000);
    expect(server!.listedAt).toBe(new Date(Date.parse(server!.listedAt)).toISOString());
    const names = server!.tools.map((t) => t.serverName);
    expect(names).toContain("whoami");
    expect(names).not.toContain("slow_echo");
    const whoami = server!.tools.find((t) => t.serverName === "whoami")!;
    expect(whoami.name).not.toBe("lab_whoami");
    expect(whoami.name).toMatch(/^lab_whoami/);
    expect(new Set(server!.tools.map((t) => t.name)).size).toBe(server!.tools.length);
    expect(whoami.description).toBe("Says which credentials the call came with.");
  });
});

describe("the development sign-in is on only when asked for", () => {
  const signIn = (env: object) =>
    request("/v1/dev/sign-in", { method: "POST", headers: { "content-type": "application/json" }, body: '{"name":"Ada"}' }, env);
  const me = async (env: object) => ((await (await request("/v1/me", {}, env)).json()) as { signIn: string | null }).signIn;

  it("an open API alone (ALLOW_ANONYMOUS, as a Worker of your own may set it) mints no tokens", async () => {
    expect(await errorOf(await signIn(open))).toEqual({
      status: 404,
      code: "not_found",
      message:
        "The development sign-in is on only with DEV_SIGN_IN=true and ALLOW_ANONYMOUS=true (in .dev.vars or on the wrangler dev command line, as `npm start` does) and no identity provider configured.",
    });
    expect(await me(open)).toBeNull();
  });

  it("DEV_SIGN_IN without ALLOW_ANONYMOUS, or beside an identity provider, mints none either", async () => {
    for (const env of [
      { DEV_SIGN_IN: "true", API_KEY: "a-master-key-of-16+" },
      { ...open, DEV_SIGN_IN: "true", AUTH_JWT_SECRET: "a-shared-secret-of-32-characters!!" },
    ]) {
      expect((await signIn(env)).status).not.toBe(201);
    }
  });

  it("DEV_SIGN_IN=true with ALLOW_ANONYMOUS (what `npm start` sets) signs a user in by name", async () => {
    const env = { ...open, DEV_SIGN_IN: "true" };
    const res = await signIn(env);
    expect(res.status).toBe(201);
    expect(((await res.json()) as { user: unknown }).user).toEqual({ id: "dev:ada", name: "Ada", roles: [] });
    expect(await me(env)).toBe("development");
  });
});
