/**
 * HTTP fuzzing: random methods, paths, ids, headers and bodies against every route. No 500, no
 * stack trace, a JSON error for every refusal, and no change to a stored conversation.
 */
import fc from "fast-check";
import { describe, expect, inject, it } from "vitest";
import { call, chat, scenario, stored } from "../support/worker.ts";

const ROUTES = ["/", "/v1/agents", "/v1/openapi.json", "/v1/conversations", "/v1/conversations/{id}", "/v1/conversations/{id}/messages", "/v1/conversations/{id}/approvals", "/v1/conversations/{id}/events", "/v1/conversations/{id}/chat", "/v1/conversations/{id}/chat/stream", "/v1/{id}", "/{id}"];

const id = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/),
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
  fc.constantFrom("", "..", "%00", "a".repeat(200), "%F0%9F%98%80", "a%2Fb"),
);

const body = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 200 }),
  fc.json({ maxDepth: 3 }),
  fc.record({ message: fc.oneof(fc.string({ maxLength: 50 }), fc.integer(), fc.constant(null)), extra: fc.option(fc.string(), { nil: undefined }) }).map((o) => JSON.stringify(o)),
  fc.record({ decisions: fc.array(fc.record({ toolCallId: fc.string({ maxLength: 10 }), approved: fc.oneof(fc.boolean(), fc.string()) }), { maxLength: 3 }) }).map((o) => JSON.stringify(o)),
  fc.nat({ max: 100_000 }).map((n) => "x".repeat(n)),
);

const request = fc.record({
  method: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"),
  route: fc.constantFrom(...ROUTES),
  id,
  contentType: fc.constantFrom(undefined, "application/json", "text/plain", "application/json; charset=utf-8", "multipart/form-data", "garbage"),
  lastEventId: fc.option(fc.oneof(fc.nat().map(String), fc.string({ maxLength: 10 })), { nil: undefined }),
  body,
});

describe("HTTP fuzz (fast-check)", () => {
  it(`never answers 500, never leaks a stack, never changes a stored conversation (${inject("propertyRuns")} runs)`, async () => {
    const s = await scenario([{ text: "The stored answer." }]);
    await chat(s.conversationId, s.tag("keep this"));
    const before = await stored(s.conversationId);
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        if (r.id === s.conversationId && (r.method === "DELETE" || r.route.endsWith("/messages") || r.route.endsWith("/chat"))) return;
        const headers: Record<string, string> = {};
        if (r.contentType) headers["content-type"] = r.contentType;
        if (r.lastEventId !== undefined) headers["last-event-id"] = r.lastEventId;
        const sendsBody = r.body !== undefined && r.method !== "GET" && r.method !== "HEAD";
        const res = await call(r.route.replace("{id}", r.id), { method: r.method, headers, ...(sendsBody ? { body: r.body } : {}) });
        const text = await res.text();
        expect(res.status).toBeLessThan(500);
        expect(text).not.toMatch(/\bat \S+\.(ts|js):\d+/);
        expect(text).not.toContain("sk-test-secret");
        if (res.status >= 400 && r.method !== "HEAD") expect(JSON.parse(text)).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
      }),
      { numRuns: inject("propertyRuns"), seed: inject("propertySeed") },
    );
    expect(await stored(s.conversationId)).toEqual(before);
  });
});
