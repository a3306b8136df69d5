/**
 * A property over random sequences of several signed-in users creating, messaging, forking,
 * renaming and deleting conversations, and reading each other's: after every step each user's
 * list is exactly the conversations they own, and no read across users ever succeeds.
 */
import { importJWK, type JWK, SignJWT } from "jose";
import fc from "fast-check";
import { describe, expect, inject, it } from "vitest";
import { scenario } from "../support/scenario.ts";
import { call } from "../support/worker.ts";

const { keys } = inject("jwks");

async function tokenOf(user: string): Promise<string> {
  const jwk = keys.rs1 as JWK;
  return new SignJWT({ sub: user, iss: "https://idp.test", aud: "handoff-chat" })
    .setProtectedHeader({ alg: "RS256", kid: "rs1" })
    .setExpirationTime("30m")
    .sign(await importJWK(jwk, "RS256"));
}

type Op = { kind: "create"; user: number } | { kind: "message" | "fork" | "rename" | "delete" | "read"; user: number; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("create" as const), user: fc.nat({ max: 2 }) }),
  fc.record({
    kind: fc.constantFrom("message" as const, "fork" as const, "rename" as const, "delete" as const, "read" as const),
    user: fc.nat({ max: 2 }),
    pick: fc.nat({ max: 20 }),
  }),
);

const runs = Math.max(3, Math.round(inject("propertyRuns") / 30));

describe("inboxes of several users (fast-check)", () => {
  it(`list exactly what each user owns, and nothing crosses users (${runs} runs)`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 14 }), async (ops) => {
        const s = await scenario(Array.from({ length: 40 }, (_, i) => ({ text: `answer ${i}` })));
        const users = [0, 1, 2].map((n) => `u${n}-${s.id}`);
        const tokens = await Promise.all(users.map(tokenOf));
        const owner = new Map<string, number>();
        const answered = new Set<string>();
        const auth = (user: number, init: RequestInit = {}): RequestInit => ({
          ...init,
          headers: {
            ...(init.headers as Record<string, string>),
            authorization: `Bearer ${tokens[user]}`,
            "content-type": "application/json",
          },
        });
        for (const step of ops) {
          const all = [...owner.keys()];
          const target = step.kind === "create" ? undefined : all[step.pick % Math.max(1, all.length)];
          if (step.kind === "create") {
            const res = await call("/v1/conversations", auth(step.user, { method: "POST" }));
            expect(res.status).toBe(201);
            owner.set(((await res.json()) as { id: string }).id, step.user);
          } else if (target !== undefined) {
            const mine = owner.get(target) === step.user;
            const base = `/v1/conversations/${target}`;
            const res =
              step.kind === "message"
                ? await call(`${base}/messages`, auth(step.user, { method: "POST", body: JSON.stringify({ message: s.tag("hello") }) }))
                : step.kind === "fork"
                  ? await call(`${base}/fork`, auth(step.user, { method: "POST", body: JSON.stringify({ afterTurn: 1 }) }))
                  : step.kind === "rename"
                    ? await call(base, auth(step.user, { method: "PATCH", body: JSON.stringify({ title: `title ${step.pick}` }) }))
                    : step.kind === "delete"
                      ? await call(base, auth(step.user, { method: "DELETE" }))
                      : await call(base, auth(step.user));
            const body = await res.text();
            // Someone else's conversation is never reached; one's own answers as the route does.
            if (!mine) expect([res.status, body.includes("conversation_not_found")]).toEqual([404, true]);
            else if (step.kind === "fork" && !answered.has(target)) expect(res.status).toBe(404);
            else expect(res.status).toBeLessThan(300);
            if (mine && step.kind === "message") answered.add(target);
            if (mine && step.kind === "fork" && res.status === 201) owner.set((JSON.parse(body) as { id: string }).id, step.user);
            if (mine && step.kind === "fork" && res.status === 201) answered.add((JSON.parse(body) as { id: string }).id);
            if (mine && step.kind === "delete") {
              owner.delete(target);
              answered.delete(target);
            }
          }
          for (const [user] of users.entries()) {
            const listed = (await (await call("/v1/conversations?limit=100", auth(user))).json()) as {
              conversations: Array<{ id: string }>;
            };
            const owned = [...owner].filter(([, u]) => u === user).map(([id]) => id);
            expect(listed.conversations.map((c) => c.id).sort()).toEqual(owned.sort());
          }
        }
      }),
      { numRuns: runs, seed: inject("propertySeed") },
    );
  }, 120_000);
});
