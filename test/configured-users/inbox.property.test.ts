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

const runs = Math.max(20, Math.round(inject("propertyRuns") / 8));
const seed = inject("inboxSeed");

/** One sequence's world: the users, their tokens, who owns what, which conversations have a turn. */
interface World {
  tag: (text: string) => string;
  tokens: string[];
  owner: Map<string, number>;
  answered: Set<string>;
}

function auth(world: World, user: number, init: RequestInit = {}): RequestInit {
  return {
    ...init,
    headers: {
      ...(init.headers as Record<string, string>),
      authorization: `Bearer ${world.tokens[user]}`,
      "content-type": "application/json",
    },
  };
}

/** One step, checked as it answers: someone else's conversation is never reached; one's own answers as the route does. */
async function apply(world: World, step: Op): Promise<void> {
  const { owner, answered } = world;
  const all = [...owner.keys()];
  if (step.kind === "create") {
    const res = await call("/v1/conversations", auth(world, step.user, { method: "POST" }));
    expect(res.status).toBe(201);
    owner.set(((await res.json()) as { id: string }).id, step.user);
    return;
  }
  const target = all[step.pick % Math.max(1, all.length)];
  if (target === undefined) return;
  const mine = owner.get(target) === step.user;
  const base = `/v1/conversations/${target}`;
  const requests: Record<Exclude<Op["kind"], "create">, () => Promise<Response>> = {
    message: () =>
      call(`${base}/messages`, auth(world, step.user, { method: "POST", body: JSON.stringify({ message: world.tag("hello") }) })),
    fork: () => call(`${base}/fork`, auth(world, step.user, { method: "POST", body: JSON.stringify({ afterTurn: 1 }) })),
    rename: () => call(base, auth(world, step.user, { method: "PATCH", body: JSON.stringify({ title: `title ${step.pick}` }) })),
    delete: () => call(base, auth(world, step.user, { method: "DELETE" })),
    read: () => call(base, auth(world, step.user)),
  };
  const res = await requests[step.kind]();
  const body = await res.text();
  if (!mine) expect([res.status, body.includes("conversation_not_found")]).toEqual([404, true]);
  else if (step.kind === "fork" && !answered.has(target)) expect(res.status).toBe(404);
  else expect(res.status).toBeLessThan(300);
  if (!mine) return;
  if (step.kind === "message") answered.add(target);
  if (step.kind === "fork" && res.status === 201) {
    const forked = (JSON.parse(body) as { id: string }).id;
    owner.set(forked, step.user);
    answered.add(forked);
  }
  if (step.kind === "delete") {
    owner.delete(target);
    answered.delete(target);
  }
}

/** After every step each user's list is exactly the conversations they own. */
async function runSequence(ops: Op[]): Promise<void> {
  const s = await scenario(Array.from({ length: 40 }, (_, i) => ({ text: `answer ${i}` })));
  const users = [0, 1, 2].map((n) => `u${n}-${s.id}`);
  const world: World = { tag: s.tag, tokens: await Promise.all(users.map(tokenOf)), owner: new Map(), answered: new Set() };
  for (const step of ops) {
    await apply(world, step);
    for (const [user] of users.entries()) {
      const listed = (await (await call("/v1/conversations?limit=100", auth(world, user))).json()) as {
        conversations: Array<{ id: string }>;
      };
      const owned = [...world.owner].filter(([, u]) => u === user).map(([id]) => id);
      expect(listed.conversations.map((c) => c.id).sort(), `user ${user} after ${JSON.stringify(step)}`).toEqual(owned.sort());
    }
  }
}

describe("inboxes of several users (fast-check)", () => {
  it(`list exactly what each user owns, and nothing crosses users (${runs} runs, seed ${seed})`, async () => {
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 14 }), runSequence), { numRuns: runs, seed });
  }, 120_000);

  it("keep the case the property shrank to when the inbox kept a deleted conversation: created, deleted, gone from the list", async () => {
    await runSequence([
      { kind: "create", user: 1 },
      { kind: "delete", user: 1, pick: 0 },
      { kind: "message", user: 0, pick: 0 },
      { kind: "create", user: 0 },
      { kind: "message", user: 0, pick: 0 },
    ]);
  });
});
