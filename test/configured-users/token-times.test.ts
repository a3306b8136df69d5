/**
 * The clock skew a sign-in token's times are allowed (60 s): a token expired or not yet valid by
 * less than that is taken, one past it by more is refused, both for `exp` and for `nbf`. The margins
 * (30 s inside, 30 s outside) are far from the test's own run time.
 */
import { importJWK, type JWK, SignJWT } from "jose";
import { describe, expect, inject, it } from "vitest";
import { call } from "../support/worker.ts";

const { keys } = inject("jwks");
const now = () => Math.floor(Date.now() / 1000);

async function tokenWith(times: { exp: number; nbf?: number }): Promise<string> {
  const jwk = keys.rs1 as JWK;
  return new SignJWT({ sub: "skew-user", iss: "https://idp.test", aud: "handoff-chat", iat: now() - 120, ...times })
    .setProtectedHeader({ alg: jwk.alg!, kid: "rs1" })
    .sign(await importJWK(jwk, jwk.alg));
}

async function create(token: string): Promise<[number, string]> {
  const res = await call("/v1/conversations", { method: "POST", headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { error?: { message: string } };
  return [res.status, body.error?.message ?? ""];
}

describe("a sign-in token's times, at the edge of the clock skew", () => {
  it("takes a token expired 30 s ago, refuses one expired 90 s ago", async () => {
    expect(await create(await tokenWith({ exp: now() - 30 }))).toEqual([201, ""]);
    expect(await create(await tokenWith({ exp: now() - 90 }))).toEqual([401, expect.stringMatching(/expired/)]);
  });

  it("takes a token valid from 30 s from now, refuses one valid from 90 s from now", async () => {
    expect(await create(await tokenWith({ exp: now() + 600, nbf: now() + 30 }))).toEqual([201, ""]);
    expect(await create(await tokenWith({ exp: now() + 600, nbf: now() + 90 }))).toEqual([401, expect.stringMatching(/nbf/)]);
  });
});
