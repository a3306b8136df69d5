/** Sign-in tokens by a shared HS256 secret, and a JWT told from a conversation token by its form. */
import { SignJWT } from "jose";
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

describe("a bearer credential's form", () => {
  it("is a JWT when its first part is a JOSE header; a conversation token (id.grant.mac) is not", async () => {
    const jwt = await new SignJWT({ sub: "ada" }).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(SECRET));
    expect(looksLikeJwt(jwt)).toBe(true);
    expect(looksLikeJwt(await mintToken(SECRET, "conv-1", "grant"))).toBe(false);
    expect(looksLikeJwt("eyJub3QiOiJhIGhlYWRlciJ9.x.y")).toBe(false);
    expect(looksLikeJwt("not-even-three-parts")).toBe(false);
  });
});
