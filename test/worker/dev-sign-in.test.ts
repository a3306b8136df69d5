/**
 * The development sign-in of `npm start` (ALLOW_ANONYMOUS, no identity provider): a name and an
 * operator flag become a short-lived token signed with a key the Worker made, which then opens that
 * user's own conversations and inbox, or the operator API under their name. wrangler.toml never
 * turns it on.
 */
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { call } from "../support/worker.ts";

const json = (body: unknown, token?: string): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
  body: JSON.stringify(body),
});
const bearer = (token: string): RequestInit => ({ headers: { authorization: `Bearer ${token}` } });

async function signIn(name: string, operator = false): Promise<string> {
  const res = await call("/v1/dev/sign-in", json({ name, operator }));
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

describe("the development sign-in", () => {
  it("signs a user in by name: GET /v1/me says who, and their conversations are theirs alone", async () => {
    const res = await call("/v1/dev/sign-in", json({ name: "Ada Dev" }));
    const body = (await res.json()) as { token: string; user: unknown; expiresAt: string };
    expect(body.user).toEqual({ id: "dev:ada dev", name: "Ada Dev", roles: [] });
    // Short-lived: an hour, as the token's own exp says.
    const { exp } = JSON.parse(atob(body.token.split(".")[1]!.replaceAll("-", "+").replaceAll("_", "/"))) as { exp: number };
    expect(Date.parse(body.expiresAt)).toBe(exp * 1000);
    expect(Date.parse(body.expiresAt) - Date.now()).toBeLessThanOrEqual(3600_000);
    expect(Date.parse(body.expiresAt) - Date.now()).toBeGreaterThan(3500_000);
    expect(await (await call("/v1/me", bearer(body.token))).json()).toEqual({
      access: "user",
      user: { id: "dev:ada dev", name: "Ada Dev", roles: [] },
      signIn: "development",
    });
    expect(await (await call("/v1/me")).json()).toEqual({ access: "anonymous", user: null, signIn: "development" });

    const created = (await (await call("/v1/conversations", { method: "POST", ...bearer(body.token) })).json()) as { id: string };
    const bob = await signIn("Bob Dev");
    expect((await call(`/v1/conversations/${created.id}`, bearer(bob))).status).toBe(404);
    const adaList = (await (await call("/v1/conversations", bearer(body.token))).json()) as { conversations: Array<{ id: string }> };
    expect(adaList.conversations.map((c) => c.id)).toContain(created.id);
    const bobList = (await (await call("/v1/conversations", bearer(bob))).json()) as { conversations: Array<{ id: string }> };
    expect(bobList.conversations.map((c) => c.id)).not.toContain(created.id);
    // Signing in again under the same name is the same user: the inbox is found again.
    const again = await signIn("ada dev");
    expect((await call(`/v1/conversations/${created.id}`, bearer(again))).status).toBe(200);
  });

  it("opens the operator API under the operator's name only when they said they are one", async () => {
    const olga = await signIn("Olga", true);
    // Outside the operator API an operator is a signed-in user whose roles say what else they may open.
    expect(await (await call("/v1/me", bearer(olga))).json()).toEqual({
      access: "user",
      user: { id: "dev:olga", name: "Olga", roles: ["operator"] },
      signIn: "development",
    });
    expect(await (await call("/v1/operator/conversations", bearer(olga))).json()).toMatchObject({ conversations: expect.any(Array) });
    expect((await call("/v1/operator/conversations", bearer(await signIn("Uma")))).status).toBe(403);
  });

  it("refuses a token it did not sign, and bad sign-in bodies, with a clear error", async () => {
    const forged = await new SignJWT({ sub: "dev:mallory", roles: ["operator"] })
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer("handoff-runtime/dev-sign-in")
      .setExpirationTime("10m")
      .sign(new TextEncoder().encode("a key this Worker did not make, 32+ bytes long"));
    const res = await call("/v1/operator/conversations", bearer(forged));
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/signature does not verify/);
    for (const [body, why] of [
      [{}, /name/],
      [{ name: "   " }, /must not be empty/],
      [{ name: "x".repeat(41) }, /at most 40/],
      [{ name: "Ada", operator: "yes" }, /operator/],
    ] as const) {
      const refused = await call("/v1/dev/sign-in", json(body));
      const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
      expect([refused.status, error.code, error.message]).toEqual([400, "invalid_request", expect.stringMatching(why)]);
    }
  });
});
