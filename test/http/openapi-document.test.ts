/**
 * The OpenAPI document as a client generator reads it: valid OpenAPI 3.1 by the specification's
 * own JSON Schema (checked under Node: the validator compiles schemas to code, which workerd does
 * not run), every operation summarised and answered, every path parameter declared, every route of
 * the app documented and nothing else.
 */
import { Validator as JsonSchemaValidator, type Schema } from "@cfworker/json-schema";
import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { createSupportNetwork } from "../../src/agents/index.ts";
import { createApp } from "../../src/http/app.ts";
import { a2a, agUi } from "../../src/cloudflare/index.ts";
import { eventComponent, openApiDocument } from "../../src/http/openapi.ts";
import { EVENT_SCHEMAS } from "../../src/runtime/events.ts";

/** The protocols the repository's Worker serves, whose parts its document has. */
const PROTOCOLS = [a2a(), agUi()];

interface Parameter {
  name: string;
  in: string;
  description?: string;
  schema?: { type?: string; enum?: string[]; pattern?: string; maximum?: number; maxLength?: number };
}

interface Operation {
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: Schema }> };
  responses?: Record<string, { description?: string }>;
}

/** Each operation of a document, with the parameters its path item shares. Built in each test, so a mutant of the document is switched on for it. */
function operationsOf(document: Record<string, unknown>) {
  const paths = document.paths as Record<string, Record<string, Operation | Operation["parameters"]>>;
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([key]) => key !== "parameters")
      .map(([method, operation]) => ({
        path,
        method,
        operation: operation as Operation,
        shared: (item.parameters ?? []) as Operation["parameters"],
      })),
  );
}

/** Each route of the app as `METHOD /path`, with `:id` written as OpenAPI writes it (`{id}`). */
function routesOfApp(): string[] {
  const app = createApp(() => createSupportNetwork(), [a2a(), agUi()]);
  const routes = app.routes
    .filter((r) => r.method !== "ALL" && r.path.startsWith("/v1/"))
    .map((r) => `${r.method} ${r.path.replace(/:([A-Za-z]+)/g, "{$1}")}`);
  return [...new Set(routes)].sort();
}

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1", async () => {
    const result = await new Validator().validate(openApiDocument(PROTOCOLS));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("summarises every operation and describes each of its answers", () => {
    const operations = operationsOf(openApiDocument(PROTOCOLS));
    expect(operations.length).toBeGreaterThan(20);
    for (const { path, method, operation } of operations) {
      expect(operation.summary?.trim(), `${method} ${path}`).toBeTruthy();
      const answers = Object.entries(operation.responses ?? {});
      expect(answers.length, `${method} ${path}`).toBeGreaterThan(0);
      for (const [status, answer] of answers) expect(answer.description?.trim(), `${method} ${path} ${status}`).toBeTruthy();
    }
  });

  it("declares every parameter its paths name", () => {
    for (const { path, method, operation, shared } of operationsOf(openApiDocument(PROTOCOLS))) {
      const declared = [...(shared ?? []), ...(operation.parameters ?? [])].filter((p) => p.in === "path").map((p) => p.name);
      const named = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      expect(declared.sort(), `${method} ${path}`).toEqual(named.sort());
    }
  });

  it("documents every route the app serves, with the same methods, and no route it does not serve", () => {
    const served = routesOfApp();
    const documented = operationsOf(openApiDocument(PROTOCOLS))
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
      .sort();
    expect(served.length).toBeGreaterThan(20);
    expect(
      documented.filter((r) => !served.includes(r)),
      "documented but not served",
    ).toEqual([]);
    expect(
      served.filter((r) => !documented.includes(r)),
      "served but not documented",
    ).toEqual([]);
  });
});

/** A conversation object for the app under Node: every conversation is one that does not exist. */
const missing = async () => ({ ok: false, error: { code: "conversation_not_found", message: "No such conversation." } });
const env = { ALLOW_ANONYMOUS: "true", DEV_SIGN_IN: "true", CONVERSATIONS: { getByName: () => new Proxy({}, { get: () => missing }) } };

const UNKNOWN_EVENT = { code: "event_id_unknown", message: "No event 9.", details: { lastEventId: 3 } };

/** A documented path with a value in each of its parameters. */
const concrete = (path: string) => path.replace("{id}", "c1").replace("{turn}", "1").replace("{entry}", "e1");

async function send(path: string, init: RequestInit = {}, headers: Record<string, string> = {}): Promise<Response> {
  const app = createApp(() => createSupportNetwork(), [a2a(), agUi()]);
  // Where the development sign-in is offered, the operator API is a signed-in operator's: this one signs in.
  const operator: Record<string, string> = /^\/v1\/(operator\/|conversations\/[^/]+\/operator\/)/.test(path)
    ? { authorization: `Bearer ${await operatorToken()}` }
    : {};
  const merged = new Headers({ ...operator, ...headers });
  new Headers(init.headers).forEach((value, name) => merged.set(name, value));
  return app.request(`https://chat.test${path}`, { ...init, headers: merged }, env);
}

let token: Promise<string> | undefined;
function operatorToken(): Promise<string> {
  token ??= (async () => {
    const body = JSON.stringify({ name: "Sam", operator: true });
    const res = await createApp(() => createSupportNetwork()).request(
      "https://chat.test/v1/dev/sign-in",
      { method: "POST", headers: { "content-type": "application/json" }, body },
      env,
    );
    return ((await res.json()) as { token: string }).token;
  })();
  return token;
}

/** A value the parameter's schema does not take, where its schema says enough to make one. */
function outside(schema: NonNullable<Parameter["schema"]>): string | undefined {
  if (schema.enum) return "neither";
  if (schema.type === "integer") return "lots";
  if (schema.pattern) return "!";
  if (schema.maxLength !== undefined) return "x".repeat(schema.maxLength + 1);
  return undefined;
}

describe("the OpenAPI document against the routes", () => {
  it("marks a request body required exactly where its route refuses a request without one", async () => {
    for (const { path, method, operation } of operationsOf(openApiDocument(PROTOCOLS))) {
      if (!operation.requestBody) continue;
      const res = await send(concrete(path), { method: method.toUpperCase() });
      const body = (await res.json()) as { error?: { code: unknown } };
      // A2A answers in JSON-RPC: -32700 is "not JSON", which an absent body is.
      const refused = res.status === 415 || body.error?.code === -32700;
      expect(refused, `${method} ${path}: ${JSON.stringify(body)}`).toBe(operation.requestBody.required);
    }
  });

  it("documents a body wherever its route reads one: elsewhere a stray field is not refused", async () => {
    for (const { path, method, operation } of operationsOf(openApiDocument(PROTOCOLS))) {
      if (operation.requestBody || method === "get" || method === "delete") continue;
      const res = await send(
        concrete(path),
        { method: method.toUpperCase(), body: '{"stray":true}' },
        { "content-type": "application/json" },
      );
      expect(res.status, `${method} ${path}`).not.toBe(400);
    }
  });

  it("documents each query parameter with the schema its route checks: a value outside it is refused", async () => {
    const token = (await (
      await send("/v1/dev/sign-in", { method: "POST", body: '{"name":"Ada","operator":true}' }, { "content-type": "application/json" })
    ).json()) as {
      token: string;
    };
    const checked: string[] = [];
    for (const { path, method, operation, shared } of operationsOf(openApiDocument(PROTOCOLS))) {
      for (const parameter of [...(shared ?? []), ...(operation.parameters ?? [])]) {
        const value = parameter.in === "query" && parameter.schema ? outside(parameter.schema) : undefined;
        if (value === undefined) continue;
        const url = `${concrete(path)}?${new URLSearchParams({ [parameter.name]: value })}`;
        const res = await send(url, { method: method.toUpperCase() }, { authorization: `Bearer ${token.token}`, upgrade: "websocket" });
        const { error } = (await res.json()) as { error: { code: string } };
        expect([res.status, error.code], `${method} ${url}`).toEqual([400, "invalid_request"]);
        checked.push(`${path} ${parameter.name}`);
      }
    }
    // Each query a route checks with a schema, with each field of it a value can fall outside.
    expect(checked.sort()).toEqual([
      "/v1/conversations archived",
      "/v1/conversations before",
      "/v1/conversations limit",
      "/v1/conversations q",
      "/v1/conversations/{id} before",
      "/v1/conversations/{id} limit",
      "/v1/conversations/{id}/events after",
      "/v1/conversations/{id}/events follow",
      "/v1/conversations/{id}/socket after",
      "/v1/conversations/{id}/ui-messages before",
      "/v1/conversations/{id}/ui-messages limit",
      "/v1/me/memory limit",
      "/v1/me/memory q",
      "/v1/operator/conversations status",
      "/v1/operator/conversations/{id} before",
      "/v1/operator/conversations/{id} limit",
    ]);
  });

  it("describes the error bodies the app sends: code and message required, details an object", async () => {
    const document = openApiDocument(PROTOCOLS) as { components: { schemas: { Error: Schema } } };
    const validator = new JsonSchemaValidator(document.components.schemas.Error, "2020-12");
    const bodies = [
      await (await send("/v1/nope")).json(),
      await (await send("/v1/agents", { method: "PUT" })).json(),
      await (await send("/v1/conversations/c1/messages", { method: "POST", body: "{" }, { "content-type": "application/json" })).json(),
      await (await send("/v1/conversations/c1/turns/0/trace")).json(),
      // A refusal with details, as a conversation object gives one.
      await (
        await createApp(() => createSupportNetwork(), [a2a(), agUi()]).request(
          "https://chat.test/v1/conversations/c1/events?after=9",
          {},
          {
            ...env,
            CONVERSATIONS: { getByName: () => new Proxy({}, { get: () => async () => ({ ok: false, error: UNKNOWN_EVENT }) }) },
          },
        )
      ).json(),
    ];
    expect(bodies.at(-1)).toMatchObject({ error: { details: UNKNOWN_EVENT.details } });
    for (const body of bodies) expect(validator.validate(body).errors, JSON.stringify(body)).toEqual([]);
    for (const wrong of [
      {},
      { error: { message: "m" } },
      { error: { code: "c" } },
      { error: { code: 1, message: "m" } },
      { error: { code: "c", message: 1 } },
      { error: { code: "c", message: "m", details: "d" } },
    ])
      expect(validator.validate(wrong).valid, JSON.stringify(wrong)).toBe(false);
  });

  it("asks for the bearer credential a keyed Worker challenges for, on every operation", async () => {
    const document = openApiDocument(PROTOCOLS) as {
      info: Record<string, string>;
      security: unknown;
      components: { securitySchemes: Record<string, { type: string; scheme: string; description: string }> };
    };
    expect(document.security).toEqual([{ bearer: [] }]);
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    for (const text of [
      document.info.title,
      document.info.version,
      document.info.description,
      document.components.securitySchemes.bearer!.description,
    ])
      expect(text?.trim()).toBeTruthy();
    const app = createApp(() => createSupportNetwork(), [a2a(), agUi()]);
    const challenged = await app.request("https://chat.test/v1/agents", {}, { API_KEY: "k-0123456789abcdef" });
    expect(challenged.status).toBe(401);
    expect(challenged.headers.get("www-authenticate")).toMatch(/^Bearer /);
  });

  it("publishes a schema for every event type, each event valid by it, and names the ones each turn stream sends", () => {
    const doc = openApiDocument(PROTOCOLS) as { components: { schemas: Record<string, Schema> } };
    for (const type of Object.keys(EVENT_SCHEMAS)) expect(doc.components.schemas, type).toHaveProperty(eventComponent(type));
    const valid = new JsonSchemaValidator(doc.components.schemas.HandoffEvent!, "2020-12");
    expect(valid.validate({ type: "handoff", kind: "hand-back", from: "desk", to: "triage" }).valid).toBe(true);
    // A hand-back's note is for the agent that takes over: no event carries it.
    expect(valid.validate({ type: "handoff", kind: "hand-back", from: "desk", to: "triage", note: "sorted" }).valid).toBe(false);
    expect(valid.validate({ type: "handoff", kind: "hand-back", from: "desk" }).valid).toBe(false);
    const refs = (path: string, method: string) =>
      (
        operationsOf(doc).find((o) => o.path === path && o.method === method)!.operation.responses!["200"] as {
          content: Record<string, { schema: { oneOf: Array<{ $ref: string }> } }>;
        }
      ).content["text/event-stream"]!.schema.oneOf.map((r) => r.$ref.replace("#/components/schemas/", ""));
    const all = Object.keys(EVENT_SCHEMAS).map(eventComponent);
    expect(refs("/v1/conversations/{id}/messages", "post").sort()).toEqual(all.filter((name) => name !== "OperatorMessageEvent").sort());
    expect(refs("/v1/conversations/{id}/events", "get").sort()).toEqual([...all].sort());
  });

  it("answers every route that streams with text/event-stream", () => {
    const streaming = operationsOf(openApiDocument(PROTOCOLS))
      .filter(({ operation }) => "text/event-stream" in ((operation.responses?.["200"] as { content?: object })?.content ?? {}))
      .map(({ method, path }) => `${method} ${path}`);
    expect(streaming.sort()).toEqual([
      "get /v1/conversations/{id}/chat/stream",
      "get /v1/conversations/{id}/events",
      "post /v1/ag-ui",
      "post /v1/conversations/{id}/approvals",
      "post /v1/conversations/{id}/chat",
      "post /v1/conversations/{id}/decisions",
      "post /v1/conversations/{id}/messages",
      "post /v1/conversations/{id}/operator/approvals",
      "post /v1/conversations/{id}/operator/decisions",
      "post /v1/conversations/{id}/retry",
    ]);
  });

  it("names, places, describes and types every parameter", () => {
    for (const { path, method, operation, shared } of operationsOf(openApiDocument(PROTOCOLS)))
      for (const parameter of [...(shared ?? []), ...(operation.parameters ?? [])]) {
        const where = `${method} ${path} ${parameter.name}`;
        expect(parameter.name, where).toMatch(/^[A-Za-z][\w-]*$/);
        expect(["path", "query", "header"], where).toContain(parameter.in);
        expect(parameter.description?.trim(), where).toBeTruthy();
        expect(["string", "integer", "number", "boolean"], where).toContain(parameter.schema?.type);
      }
  });

  it("documents each JSON body with a schema that refuses what its route refuses", async () => {
    let checked = 0;
    for (const { path, method, operation } of operationsOf(openApiDocument(PROTOCOLS))) {
      const schema = operation.requestBody?.content["application/json"]?.schema;
      if (!schema) continue;
      const res = await send(
        concrete(path),
        { method: method.toUpperCase(), body: '{"stray":true}' },
        { "content-type": "application/json" },
      );
      // A2A answers a body it cannot take in JSON-RPC, with 200; docs/a2a.md describes its methods.
      if (res.status !== 400) continue;
      expect(new JsonSchemaValidator(schema, "2020-12").validate({ stray: true }).valid, `${method} ${path}`).toBe(false);
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(12);
  });
});
