/** Sign-in tokens by a shared HS256 secret, and a JWT told from a conversation token by its form. */
import { CompactSign, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.ts";
import { mintToken } from "../../src/http/tokens.ts";
import { looksLikeJwt, verifyUserToken } from "../../src/http/user-tokens.ts";

const SECRET = "a shared secret of at least thirty-two characters";

describe("a shared HS256 secret", () => {
  it("verifies tokens signed with the secret's UTF-8 bytes, reads the name and roles, and refuses another algorithm or secret", async () => {
    const config = readConfig({ AUTH_JWT_SECRET: SECRET, AUTH_ROLES_CLAIM: "groups" });
    const sign = (secret: string, claims: Record<string, unknown> = {}) =>
      new SignJWT({ sub: "ada", name: "Ada L.", groups: ["operator", 7], ...claims })
        .setProtectedHeader({ alg: "HS256" })
        .setExpirationTime("5m")
        .sign(new TextEncoder().encode(secret));
    expect(await verifyUserToken(await sign(SECRET), config)).toEqual({
      ok: true,
      user: { id: "ada", name: "Ada L.", roles: ["operator"] },
    });
    expect(await verifyUserToken(await sign(`${SECRET}!`), config)).toMatchObject({
      ok: false,
      status: 401,
      description: expect.stringMatching(/signature/),
    });
    const pinned = readConfig({ AUTH_JWT_SECRET: SECRET, AUTH_ALGORITHMS: "HS512" });
    expect(await verifyUserToken(await sign(SECRET), pinned)).toMatchObject({ ok: false, description: expect.stringMatching(/algorithm/) });
  });

  it("is one key source: a JWKS URL and a secret both set is a configuration error", async () => {
    const config = readConfig({ AUTH_JWT_SECRET: SECRET, AUTH_JWKS_URL: "https://idp.test/jwks.json" });
    await expect(verifyUserToken("a.b.c", config)).rejects.toThrow(/not both/);
  });
});

describe("who a token names", () => {
  const sign = (claims: Record<string, unknown>) =>
    new SignJWT({ exp: Math.floor(Date.now() / 1000) + 300, ...claims })
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(SECRET));
  const config = readConfig({ AUTH_JWT_SECRET: SECRET, AUTH_USER_CLAIM: "email", AUTH_NAME_CLAIM: "nick" });
  const verify = async (claims: Record<string, unknown>) => verifyUserToken(await sign(claims), config);
  const NOT_AN_ID = { ok: false, status: 401, description: "The token's email claim must be a user id (a string of 1 to 256 characters)." };

  it("is the configured claim's user id, of 1 to 256 characters", async () => {
    expect(await verify({ email: "e".repeat(256), sub: "not-this" })).toEqual({ ok: true, user: { id: "e".repeat(256), roles: [] } });
    for (const email of ["e".repeat(257), "", 42, undefined]) expect(await verify({ email, sub: "not-this" })).toEqual(NOT_AN_ID);
  });

  it("has a display name of at most 100 characters when the claim is a string that is not empty, and roles from a string or a list", async () => {
    expect(await verify({ email: "ada", nick: "n".repeat(101), roles: "operator" })).toEqual({
      ok: true,
      user: { id: "ada", name: "n".repeat(100), roles: ["operator"] },
    });
    for (const [nick, roles] of [
      ["", 7],
      [7, { operator: true }],
    ])
      expect(await verify({ email: "ada", nick, roles })).toEqual({ ok: true, user: { id: "ada", roles: [] } });
  });

  it("is read from a token of up to 8,192 characters, and a longer one is refused before it is parsed", async () => {
    const base = await sign({ email: "ada", pad: "" });
    // Each 3 characters of padding add 4 to the token: pad to exactly the limit, then one more 3.
    const exact = await sign({ email: "ada", pad: "p".repeat(((8192 - base.length) / 4) * 3) });
    expect(exact).toHaveLength(8192);
    expect(await verifyUserToken(exact, config)).toMatchObject({ ok: true, user: { id: "ada" } });
    expect(await verifyUserToken(`${exact}x`, config)).toEqual({
      ok: false,
      status: 401,
      description: "The token is longer than 8192 characters.",
    });
  });

  it("says a token that only looks like a JWT is not one", async () => {
    // Signed, but what it signs is not a claims set.
    const signed = await new CompactSign(new TextEncoder().encode("not a claims set"))
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(SECRET));
    expect(await verifyUserToken(signed, config)).toEqual({
      ok: false,
      status: 401,
      description: "The token is not a valid JWT.",
    });
  });

  it("says why a token is refused: expired, or a claim not accepted", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await verify({ email: "ada", exp: now - 3600 })).toEqual({ ok: false, status: 401, description: "The token has expired." });
    expect(await verify({ email: "ada", nbf: now + 3600 })).toEqual({
      ok: false,
      status: 401,
      description: "The token is not valid yet: its nbf claim is later than now.",
    });
    const issuer = readConfig({ AUTH_JWT_SECRET: SECRET, AUTH_ISSUER: "https://idp.test", AUTH_AUDIENCE: "chat" });
    const claims = { sub: "ada", iss: "https://idp.test", aud: "chat" };
    expect(await verifyUserToken(await sign({ ...claims, iss: "https://evil.test" }), issuer)).toMatchObject({
      description: "The token's iss claim is not the one this Worker accepts.",
    });
    expect(await verifyUserToken(await sign({ ...claims, aud: undefined }), issuer)).toMatchObject({
      description: "The token has no aud claim, which this Worker requires.",
    });
    for (const claim of ["iat", "nbf"])
      expect(await verifyUserToken(await sign({ ...claims, [claim]: "yesterday" }), issuer)).toMatchObject({
        description: `The token's ${claim} claim is not valid.`,
      });
  });
});

describe("a bearer credential's form", () => {
  it("is a JWT when its first part is a JOSE header; a conversation token (id.grant.mac) is not", async () => {
    const jwt = await new SignJWT({ sub: "ada" }).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(SECRET));
    expect(looksLikeJwt(jwt)).toBe(true);
    expect(looksLikeJwt(await mintToken(SECRET, "conv-1", "grant"))).toBe(false);
    expect(looksLikeJwt("eyJub3QiOiJhIGhlYWRlciJ9.x.y")).toBe(false);
    expect(looksLikeJwt("not-even-three-parts")).toBe(false);
  });
});
