/** Sign-in tokens for the users suite: signed with the test identity provider's keys (test/node/jwks-server.ts). */
import { importJWK, type JWK, SignJWT } from "jose";
import { inject } from "vitest";

/** The users suite's master key (its API_KEY). */
export const MASTER = "master-key-for-the-users-tests";

/** A sign-in token for `user`; `signedWith` another key than the one its header names forges it. */
export async function mint(user: string, claims: Record<string, unknown> = {}, signedWith = "rs1"): Promise<string> {
  const jwk = inject("jwks").keys[signedWith] as JWK;
  return new SignJWT({ sub: user, name: `User ${user}`, iss: "https://idp.test", aud: "handoff-chat", ...claims })
    .setProtectedHeader({ alg: jwk.alg!, kid: "rs1" })
    .setExpirationTime("10m")
    .sign(await importJWK(jwk, jwk.alg));
}
