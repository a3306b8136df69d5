import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import { parseSse } from "../support/sse.ts";
import { call, chat, scenario, stored } from "../support/worker.ts";

const API_KEY = "test-master-key-0123456789";
const keyed = { ...env, API_KEY, ALLOW_ANONYMOUS: "false" };
const closed = { ...env, API_KEY: undefined, ALLOW_ANONYMOUS: "false" };

function request(path: string, init: RequestInit = {}, bindings: object = keyed): Promise<Response> {
  return Promise.resolve(worker.request(`https://chat.test${path}`, init, bindings));
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const json = { "content-type": "application/json" };

async function code(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

describe("access", () => {
  it("fails closed: no API_KEY and no ALLOW_ANONYMOUS answers 503 on /v1/*", async () => {
    const res = await request("/v1/agents", {}, closed);
    expect([res.status, await res.json()]).toEqual([
      503,
      {
        error: {
          code: "auth_not_configured",
          message: "This Worker has no API_KEY configured: set the API_KEY secret (or ALLOW_ANONYMOUS=true for local use).",
        },
      },
    ]);
  });

  it("opens the operator API with neither key only where the whole API is open (ALLOW_ANONYMOUS and no sign-in), and where the development sign-in is offered only to an operator signed in with it", async () => {
    const NO_KEYS = [
      503,
      { error: { code: "auth_not_configured", message: "This Worker has no OPERATOR_KEY or API_KEY: set one to use the operator API." } },
    ];
    const desk = "/v1/operator/conversations";
    const answer = async (bindings: object) => {
      const res = await request(desk, {}, bindings);
      return [res.status, await res.json()];
    };
    expect(await answer({ ...closed, OPERATOR_KEY: undefined })).toEqual(NO_KEYS);
    const signIn = { AUTH_JWT_SECRET: "a-shared-secret-of-the-identity-provider-0123" };
    expect(await answer({ ...closed, OPERATOR_KEY: undefined, ALLOW_ANONYMOUS: "true", ...signIn })).toEqual(NO_KEYS);
    expect(await answer({ ...closed, OPERATOR_KEY: undefined, ALLOW_ANONYMOUS: "true", DEV_SIGN_IN: "false" })).toEqual([
      200,
      { conversations: expect.any(Array) },
    ]);
    // `npm start`: anyone may open the desk's page, but the desk's API answers a signed-in operator only.
    const devStart = { ...closed, OPERATOR_KEY: undefined, ALLOW_ANONYMOUS: "true", DEV_SIGN_IN: "true" };
    const refused = await request(desk, {}, devStart);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await refused.json()).toEqual({
      error: { code: "unauthorized", message: "Sign in as an operator to use the desk: the development sign-in, with “operator” ticked." },
    });
    const signInAs = async (operator: boolean) => {
      const body = JSON.stringify({ name: "Robin", operator });
      const res = await request("/v1/dev/sign-in", { method: "POST", headers: { "content-type": "application/json" }, body }, devStart);
      return ((await res.json()) as { token: string }).token;
    };
    expect((await request(desk, { headers: bearer(await signInAs(false)) }, devStart)).status).toBe(403);
    expect((await request(desk, { headers: bearer(await signInAs(true)) }, devStart)).status).toBe(200);
  });

  it("needs the bearer key when API_KEY is set, compared exactly", async () => {
    const missing = await request("/v1/agents");
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await code(missing)).toBe("unauthorized");
    expect((await request("/v1/agents", { headers: bearer(`${API_KEY}x`) })).status).toBe(401);
    expect((await request("/v1/agents", { headers: bearer(API_KEY.slice(0, -1)) })).status).toBe(401);
    expect((await request("/v1/agents", { headers: bearer(API_KEY) })).status).toBe(200);
  });

  it("issues a conversation token that opens that conversation and no other", async () => {
    const created = await request("/v1/conversations", { method: "POST", headers: bearer(API_KEY) });
    expect(created.status).toBe(201);
    const { id, token, activeAgent } = (await created.json()) as { id: string; token: string; activeAgent: string };
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(activeAgent).toBe("triage");
    expect(token).not.toContain(API_KEY);
    // `<id>.<grant>.<HMAC-SHA256>`, base64url with no padding: safe in a URL's query (the socket's ?token=). Ten tokens: among
    // their signatures, `+` and `/` (which base64url replaces) each appear but for a chance of about one in a thousand.
    const more = await Promise.all(
      Array.from(
        { length: 9 },
        async () =>
          (await (await request("/v1/conversations", { method: "POST", headers: bearer(API_KEY) })).json()) as {
            id: string;
            token: string;
          },
      ),
    );
    for (const made of [{ id, token }, ...more])
      expect(made.token).toMatch(new RegExp(`^${made.id}\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}$`));

    const view = await request(`/v1/conversations/${id}`, { headers: bearer(token) });
    expect(view.status).toBe(200);
    expect(await view.json()).toMatchObject({ id, activeAgent: "triage", messages: [], status: "idle" });
    const other = await request(`/v1/conversations/someone-else`, { headers: bearer(token) });
    expect(other.status).toBe(403);
    expect(await code(other)).toBe("forbidden");
    expect((await request("/v1/conversations", { method: "POST", headers: bearer(token) })).status).toBe(403);
    expect((await request(`/v1/conversations/${id}`, { headers: bearer(`${token.slice(0, -2)}xx`) })).status).toBe(401);
    // The signed parts, and nothing after them.
    expect((await request(`/v1/conversations/${id}`, { headers: bearer(`${token}.more`) })).status).toBe(401);
  });

  it("lets a token holder talk in its conversation", async () => {
    const s = await scenario([{ text: "Hello from triage." }]);
    const { id, token } = (await (await request("/v1/conversations", { method: "POST", headers: bearer(API_KEY) })).json()) as {
      id: string;
      token: string;
    };
    const res = await request(`/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: { ...json, ...bearer(token) },
      body: JSON.stringify({ message: s.tag("hi") }),
    });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    expect(events.at(-1)).toMatchObject({ type: "done", text: "Hello from triage." });
    expect(JSON.stringify(events)).not.toContain("sk-test-secret");
  });
});

describe("hostile and broken input", () => {
  const post = (path: string, body: BodyInit, headers: Record<string, string> = json) => call(path, { method: "POST", headers, body });

  it.each([
    [
      "wrong content type",
      () => post("/v1/conversations/c-x/messages", JSON.stringify({ message: "hi" }), { "content-type": "text/plain" }),
      415,
      "unsupported_media_type",
      "Send the body as JSON with Content-Type: application/json.",
    ],
    [
      "a content type that only mentions JSON",
      () => post("/v1/conversations/c-x/messages", JSON.stringify({ message: "hi" }), { "content-type": "text/plain; x=application/json" }),
      415,
      "unsupported_media_type",
      "Send the body as JSON with Content-Type: application/json.",
    ],
    [
      "a content type that starts like JSON",
      () => post("/v1/conversations/c-x/messages", JSON.stringify({ message: "hi" }), { "content-type": "application/jsonx" }),
      415,
      "unsupported_media_type",
      "Send the body as JSON with Content-Type: application/json.",
    ],
    [
      "body over 64 KiB",
      () => post("/v1/conversations/c-x/retry", JSON.stringify({ message: "x".repeat(70_000) })),
      413,
      "payload_too_large",
      "The body is over 65536 bytes.",
    ],
    [
      "body over 64 KiB without a length, cut while reading",
      () => {
        const chunk = new TextEncoder().encode("x".repeat(16_384));
        let sent = 0;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent++ < 100) controller.enqueue(chunk);
            else controller.close();
          },
        });
        return post("/v1/conversations/c-x/retry", body);
      },
      413,
      "payload_too_large",
      "The body is over 65536 bytes.",
    ],
    [
      "message over the length limit",
      () => post("/v1/conversations/c-x/messages", JSON.stringify({ message: "y".repeat(8_001) })),
      413,
      "message_too_long",
      "The message is 8001 characters; the limit is 8000.",
    ],
    [
      "wrong method",
      () => call("/v1/conversations/c-x/messages", { method: "PUT" }),
      405,
      "method_not_allowed",
      "PUT is not allowed on /v1/conversations/c-x/messages.",
    ],
    [
      "wrong method on the collection",
      () => call("/v1/conversations", { method: "PUT" }),
      405,
      "method_not_allowed",
      "PUT is not allowed on /v1/conversations.",
    ],
    ["unknown /v1 route", () => call("/v1/conversations/c-x/nothing"), 404, "not_found", "No route for GET /v1/conversations/c-x/nothing."],
    [
      "unknown fields on create",
      () => post("/v1/conversations", JSON.stringify({ id: "mine" })),
      400,
      "invalid_request",
      '✖ Unrecognized key: "id"',
    ],
  ])("%s gets a JSON error that says what to fix", async (_name, send, status, errorCode, message) => {
    const res = await send();
    expect(res.status).toBe(status);
    expect(await res.json()).toMatchObject({ error: { code: errorCode, message } });
    // Not a refusal of the credential: no challenge to sign in again.
    expect(res.headers.get("www-authenticate")).toBeNull();
  });

  it("leaves a stored conversation untouched", async () => {
    const s = await scenario([{ text: "kept" }]);
    await chat(s.conversationId, s.tag("keep me"));
    const before = await stored(s.conversationId);
    const path = `/v1/conversations/${s.conversationId}/messages`;
    await post(path, "{bad");
    await post(path, JSON.stringify({ message: "" }));
    await post(path, JSON.stringify({ message: "z".repeat(9_000) }));
    await post(path, JSON.stringify({ message: "ok" }), { "content-type": "text/plain" });
    await post(
      `/v1/conversations/${s.conversationId}/approvals`,
      JSON.stringify({ decisions: [{ toolCallId: "x", approved: true, extra: 1 }] }),
    );
    expect(await stored(s.conversationId)).toEqual(before);
  });
});

describe("CORS, headers, OpenAPI", () => {
  const withOrigins = { ...env, ALLOWED_ORIGINS: "https://app.example, https://other.example" };

  it("answers preflight for allowed origins only; none are allowed by default", async () => {
    const preflight = (origin: string, bindings: object) =>
      request("/v1/agents", { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } }, bindings);
    const allowed = await preflight("https://app.example", withOrigins);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(allowed.headers.get("access-control-allow-headers")).toMatch(/authorization/);
    expect((await preflight("https://evil.example", withOrigins)).headers.get("access-control-allow-origin")).toBeNull();
    expect((await preflight("https://app.example", env)).headers.get("access-control-allow-origin")).toBeNull();
  });

  it("sets security headers on JSON, stream and page responses", async () => {
    const s = await scenario([{ text: "hi" }]);
    const responses = [
      await call("/v1/agents"),
      await call(`/v1/conversations/${s.conversationId}/messages`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ message: s.tag("x") }),
      }),
      await call("/"),
      await call("/v1/nope"),
    ];
    for (const res of responses) {
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("x-frame-options")).toBe("SAMEORIGIN");
      // Each directive as the chat page needs it: its own scripts, styles, fetches and sockets; images inline too; no framing.
      expect(res.headers.get("content-security-policy")).toBe(
        "default-src 'self'; connect-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      );
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("strict-transport-security")).toBe("max-age=31536000; includeSubDomains");
      await res.body?.cancel();
    }
  });

  it("serves the chat page at /", async () => {
    const res = await call("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/html/);
    expect(await res.text()).toContain('<script type="module" src="/app.js">');
  });

  it("publishes an OpenAPI document generated from the request schemas", async () => {
    const doc = (await (await call("/v1/openapi.json")).json()) as {
      openapi: string;
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.paths["/v1/conversations/{id}/messages"]!.post!.requestBody!.content["application/json"]!.schema).toMatchObject({
      type: "object",
      properties: { message: { type: "string" } },
      required: ["message"],
      additionalProperties: false,
    });
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/v1/conversations/{id}/approvals", "/v1/conversations/{id}/events"]));
  });
});

describe("GET /v1/agents", () => {
  it("describes each agent: its tools, whom it can hand to and by which tool, a person with none", async () => {
    const { entry, agents } = (await (await call("/v1/agents")).json()) as {
      entry: string;
      agents: Array<{ name: string; tools: string[]; handoffs: string[]; transferTools: string[]; human: boolean; mcpServers: unknown[] }>;
    };
    const byName = Object.fromEntries(agents.map((a) => [a.name, a]));
    expect(entry).toBe("triage");
    expect(byName.triage).toMatchObject({
      tools: ["remember"],
      handoffs: ["billing", "shipping", "calculator", "support-desk"],
      transferTools: ["transfer_to_billing", "transfer_to_shipping", "transfer_to_calculator", "transfer_to_support_desk"],
      human: false,
      mcpServers: [],
    });
    expect(byName.billing).toMatchObject({
      tools: ["lookup_order", "refund", "ask_fraud_check", "remember"],
      handoffs: ["triage", "calculator", "shipping", "support-desk"],
      transferTools: ["transfer_to_triage", "transfer_to_calculator", "transfer_to_shipping", "transfer_to_support_desk"],
    });
    expect(byName["support-desk"]).toMatchObject({ tools: [], handoffs: [], transferTools: [], human: true });
  });
});
