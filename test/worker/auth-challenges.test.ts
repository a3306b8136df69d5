/**
 * RFC 6750 §3.1 on every 401: a bare `Bearer realm` challenge when no credential was sent, and
 * `error="invalid_token"` with an `error_description` when the one sent is not good, whatever kind
 * it was meant to be (a garbage string, a wrong key, a conversation token signed by another
 * Worker, a wrong operator key); and CORS preflights allow every method the routes answer.
 */
import { env } from "cloudflare:workers";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";

const API_KEY = "test-master-key-0123456789";
const keyed = { ...env, API_KEY, OPERATOR_KEY: "operator-key-0123456789abcdef", ALLOW_ANONYMOUS: "false" };

function request(path: string, init: RequestInit = {}, bindings: object = keyed): Promise<Response> {
  return Promise.resolve(worker.request(`https://chat.test${path}`, init, bindings));
}
const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
const INVALID = /^Bearer realm="handoff-runtime", error="invalid_token", error_description="[^"]+"$/;

describe("401 challenges", () => {
  it("are bare when nothing was sent, on the API and the operator API", async () => {
    for (const path of ["/v1/agents", "/v1/operator/conversations"]) {
      const res = await request(path);
      expect([res.status, res.headers.get("www-authenticate")]).toEqual([401, 'Bearer realm="handoff-runtime"']);
    }
  });

  it("say invalid_token and why for a credential that is not good, of any kind", async () => {
    // A conversation token of another Worker: made by this one under another secret.
    const other = await request(
      "/v1/conversations",
      { method: "POST", ...bearer("another-master-key-0123456789") },
      { ...keyed, API_KEY: "another-master-key-0123456789", SESSION_SECRET: "another-session-secret-0123456789" },
    );
    const { token } = (await other.json()) as { token: string };
    const cases: Array<[string, string, string]> = [
      ["a garbage string", "/v1/agents", "not-a-key"],
      ["the key with one character more", "/v1/agents", `${API_KEY}x`],
      ["a conversation token another Worker signed", "/v1/agents", token],
      ["a wrong operator key", "/v1/operator/conversations", "operator-key-wrong-000000000"],
    ];
    for (const [what, path, credential] of cases) {
      const res = await request(path, bearer(credential));
      expect(res.status, what).toBe(401);
      expect(res.headers.get("www-authenticate"), what).toMatch(INVALID);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code, what).toBe("unauthorized");
      // The description is the body's message, never the credential.
      expect(res.headers.get("www-authenticate"), what).toContain(body.error.message.slice(0, 40));
      expect(res.headers.get("www-authenticate"), what).not.toContain(credential);
    }
  });
});

describe("where a credential is read from", () => {
  const JWT_SECRET = "a-shared-secret-of-the-identity-provider-0123";
  const withUsers = { ...keyed, AUTH_JWT_SECRET: JWT_SECRET };
  const signIn = (sub: string) =>
    new SignJWT({ sub }).setProtectedHeader({ alg: "HS256" }).setExpirationTime("5m").sign(new TextEncoder().encode(JWT_SECRET));
  const bare = async (res: Response) => [
    res.status,
    res.headers.get("www-authenticate"),
    ((await res.json()) as { error: { message: string } }).error.message,
  ];
  const NOTHING_SENT = [
    401,
    'Bearer realm="handoff-runtime"',
    "Send Authorization: Bearer <API key, your sign-in token or a conversation token>.",
  ];

  it("takes ?token= on the socket route only (a browser's WebSocket cannot send headers), nowhere else", async () => {
    expect(await bare(await request(`/v1/agents?token=${API_KEY}`))).toEqual(NOTHING_SENT);
    const created = (await (await request("/v1/conversations", { method: "POST", ...bearer(API_KEY) })).json()) as {
      id: string;
      token: string;
    };
    expect(await bare(await request(`/v1/conversations/${created.id}?token=${created.token}`))).toEqual(NOTHING_SENT);
  });

  it("takes Cloudflare Access's header only where sign-in tokens are configured", async () => {
    const token = await signIn("ada");
    const access = { headers: { "cf-access-jwt-assertion": token } };
    expect(await bare(await request("/v1/me", access))).toEqual(NOTHING_SENT);
    const me = await request("/v1/me", access, withUsers);
    expect([me.status, await me.json()]).toEqual([200, { access: "user", user: { id: "ada", roles: [] }, signIn: "provider" }]);
  });

  it("takes OPERATOR_KEY on the operator API only", async () => {
    const desk = await request("/v1/operator/conversations", bearer(keyed.OPERATOR_KEY));
    expect([desk.status, await desk.json()]).toEqual([200, { conversations: expect.any(Array) }]);
    const { id } = (await (await request("/v1/conversations", { method: "POST", ...bearer(API_KEY) })).json()) as { id: string };
    const read = await request(`/v1/operator/conversations/${id}`, bearer(keyed.OPERATOR_KEY));
    expect([read.status, ((await read.json()) as { id: string }).id]).toEqual([200, id]);
    expect((await request("/v1/agents", bearer(keyed.OPERATOR_KEY))).status).toBe(401);
  });

  it("knows the master key when it looks like a JWT, sign-in tokens configured or not", async () => {
    const jwtShaped = `${btoa(JSON.stringify({ alg: "HS256" })).replaceAll("=", "")}.e30.bWFzdGVyLWtleS1zaGFwZWQ`;
    for (const bindings of [
      { ...keyed, API_KEY: jwtShaped },
      { ...withUsers, API_KEY: jwtShaped },
    ]) {
      const me = await request("/v1/me", bearer(jwtShaped), bindings);
      expect(((await me.json()) as { access: string }).access).toBe("master");
    }
  });
});

describe("CORS", () => {
  it("lets a preflight from an allowed origin ask for every method the routes answer, PATCH included", async () => {
    const res = await request(
      "/v1/conversations/c-1",
      { method: "OPTIONS", headers: { origin: "https://app.test", "access-control-request-method": "PATCH" } },
      { ...keyed, ALLOWED_ORIGINS: "https://app.test" },
    );
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://app.test");
    expect(res.headers.get("access-control-allow-methods")?.split(",")).toEqual(["DELETE", "GET", "PATCH", "POST"]);
  });
});
