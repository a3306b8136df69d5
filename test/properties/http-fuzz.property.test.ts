/**
 * HTTP fuzzing: random methods, paths, ids, headers, credentials and bodies against every route.
 * No 500, no stack trace, no secret, a short JSON error for every refusal, and no change to a
 * stored conversation that the fuzzed requests do reach.
 */
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, inject, it } from "vitest";
import worker from "../../src/index.ts";
import { chat, scenario, stored } from "../support/worker.ts";

const ROUTES = [
  "/",
  "/v1/agents",
  "/v1/openapi.json",
  "/v1/conversations",
  "/v1/conversations/{id}",
  "/v1/conversations/{id}/messages",
  "/v1/conversations/{id}/approvals",
  "/v1/conversations/{id}/events",
  "/v1/conversations/{id}/tokens",
  "/v1/conversations/{id}/chat",
  "/v1/conversations/{id}/chat/stream",
  "/v1/{id}",
  "/{id}",
];

const API_KEY = "fuzz-master-key-0123456789";
const bindings = env as unknown as Record<string, string>;
const SECRETS = [bindings.OPENAI_API_KEY!, bindings.SESSION_SECRET!, bindings.ORDERS_API_TOKEN!, API_KEY];

/** Malformed and odd percent-escapes, as a careless or hostile client sends them. */
const escapes = fc.constantFrom("%ZZ", "%", "%E0%A4%A", "%%41", "a%2", "%C0%AF", "%FF%FE", "%u2028");

/** Bodies near the size limit full of invalid items: the error must stay short. */
const invalidMany = fc
  .nat({ max: 1_400 })
  .map((n) => JSON.stringify({ decisions: Array.from({ length: n }, (_, i) => ({ toolCallId: `c${i}`, approved: "maybe", extra: i })) }));

const body = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 200 }),
  fc.json({ maxDepth: 3 }),
  fc
    .record({
      message: fc.oneof(fc.string({ maxLength: 50 }), fc.integer(), fc.constant(null)),
      extra: fc.option(fc.string(), { nil: undefined }),
    })
    .map((o) => JSON.stringify(o)),
  fc
    .record({
      decisions: fc.array(fc.record({ toolCallId: fc.string({ maxLength: 10 }), approved: fc.oneof(fc.boolean(), fc.string()) }), {
        maxLength: 3,
      }),
    })
    .map((o) => JSON.stringify(o)),
  invalidMany,
  fc.nat({ max: 100_000 }).map((n) => "x".repeat(n)),
);

describe("HTTP fuzz (fast-check)", () => {
  it(`never answers 500, never leaks a stack or a secret, keeps errors short, never changes a stored conversation (${inject("propertyRuns")} runs)`, async () => {
    const s = await scenario([{ text: "The stored answer." }]);
    await chat(s.conversationId, s.tag("keep this"));
    const before = await stored(s.conversationId);
    const keyed = { ...env, API_KEY, ALLOW_ANONYMOUS: "false" };
    const { token } = (await (
      await worker.request(
        `https://chat.test/v1/conversations/${s.conversationId}/tokens`,
        { method: "POST", headers: { authorization: `Bearer ${API_KEY}` } },
        keyed,
      )
    ).json()) as { token: string };

    const id = fc.oneof(
      fc.constant(s.conversationId),
      fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/),
      fc.string({ maxLength: 30 }).map(encodeURIComponent),
      fc.constantFrom("", "..", "%00", "a".repeat(200), "%F0%9F%98%80", "a%2Fb"),
      escapes,
      fc.tuple(fc.stringMatching(/^[a-z]{0,5}$/), escapes).map(([a, b]) => a + b),
    );
    const request = fc.record({
      method: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"),
      route: fc.constantFrom(...ROUTES),
      id,
      auth: fc.constantFrom("anonymous", "token", "master", "bad-token", "none"),
      contentType: fc.constantFrom(
        undefined,
        "application/json",
        "text/plain",
        "application/json; charset=utf-8",
        "multipart/form-data",
        "garbage",
      ),
      lastEventId: fc.option(fc.oneof(fc.nat().map(String), fc.string({ maxLength: 10 }), fc.constantFrom("0x10", "1e1", " 5 ", "-1")), {
        nil: undefined,
      }),
      body,
    });

    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const mutates = r.method === "DELETE" || r.route.endsWith("/messages") || r.route.endsWith("/chat") || r.route.endsWith("/tokens");
        if (r.id === s.conversationId && mutates) return;
        const headers: Record<string, string> = {};
        if (r.contentType) headers["content-type"] = r.contentType;
        if (r.lastEventId !== undefined) headers["last-event-id"] = r.lastEventId;
        const credential = { token, master: API_KEY, "bad-token": `${s.conversationId}.x.y` }[r.auth as "token"];
        if (credential) headers.authorization = `Bearer ${credential}`;
        const sendsBody = r.body !== undefined && r.method !== "GET" && r.method !== "HEAD";
        const init = { method: r.method, headers, ...(sendsBody ? { body: r.body } : {}) };
        const res = await worker.request(`https://chat.test${r.route.replace("{id}", r.id)}`, init, r.auth === "anonymous" ? env : keyed);
        const text = await res.text();
        expect(res.status).toBeLessThan(500);
        expect(text).not.toMatch(/\bat \S+\.(ts|js):\d+/);
        for (const secret of SECRETS) expect(text).not.toContain(secret);
        if (res.status >= 400 && r.method !== "HEAD") {
          expect(JSON.parse(text)).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
          expect(text.length).toBeLessThan(4_096);
        }
      }),
      { numRuns: inject("propertyRuns"), seed: inject("propertySeed") },
    );
    expect(await stored(s.conversationId)).toEqual(before);
  });
});
