/**
 * A feature configured without the binding it needs fails closed, naming the binding: a daily
 * budget without the inboxes that count it, the per-client limit without its rate limiter (unless
 * CLIENT_LIMIT=off), a network with people without the desk they find conversations on, and the
 * conversations themselves. Never let through unenforced, never a TypeError.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, runInDurableObject } from "cloudflare:test";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { createSupportNetwork } from "../../src/agents/index.ts";
import { readConfig } from "../../src/config.ts";
import { PersonHold } from "../../src/conversation/person-hold.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { TurnAdmission } from "../../src/conversation/turn-admission.ts";
import type { TurnDriver } from "../../src/conversation/turns/turn-driver.ts";
import { createApp } from "../../src/http/app.ts";
import { a2a, agUi } from "../../src/cloudflare/index.ts";
import type { Network } from "../../src/runtime/network.ts";
import { Redactor } from "../../src/runtime/redact.ts";
import { supportLike } from "../support/networks.ts";

/** One turn of a signed-in user's message admitted with `bindings` and `vars`: what admission answers. */
async function admit(bindings: object, vars: Record<string, string>, network: Network = supportLike()) {
  const id = `bindings-${crypto.randomUUID()}`;
  return runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
    const store = new ConversationStore(state.storage);
    store.create(id, "triage", "grant", "ada");
    const driver = { running: false, limitStreams: () => null } as unknown as TurnDriver;
    const config = readConfig({ ALLOW_ANONYMOUS: "true", ...vars });
    return new TurnAdmission({ store, driver, network, config, env: bindings }).turn(
      { conversationId: id, user: "ada" },
      { kind: "message", message: "hi" },
      () => ({ ok: true as const, value: "begun" }),
    );
  });
}

/** Each refusal names the binding, what it is for, and where to add it. */
const WORDS: Record<string, string> = {
  INBOXES:
    "USER_DAILY_TOKENS is set but this Worker binds no INBOXES (the Inbox Durable Object, which counts a user's tokens): bind it in wrangler.toml.",
  CLIENT_LIMITER:
    "This Worker binds no CLIENT_LIMITER (the rate-limiting binding that limits new turns per client): add a [[ratelimits]] binding " +
    'named CLIENT_LIMITER to wrangler.toml, or set CLIENT_LIMIT = "off" when a rule in front of the Worker limits clients.',
  OPERATOR_DESK:
    "This network hands conversations to people (support-desk) but this Worker binds no OPERATOR_DESK (the OperatorDesk Durable Object they " +
    "find them on): bind it in wrangler.toml.",
};
const refusal = (binding: string) => ({ ok: false, error: { code: "invalid_configuration", message: WORDS[binding] } });
const { CLIENT_LIMITER, INBOXES, OPERATOR_DESK } = env;

describe("a configured feature without its binding", () => {
  it("USER_DAILY_TOKENS without INBOXES: a signed-in user's turn is refused, naming the binding; with the inboxes it is admitted", async () => {
    expect(await admit({ CLIENT_LIMITER }, { USER_DAILY_TOKENS: "1000" })).toMatchObject(refusal("INBOXES"));
    expect(await admit({ CLIENT_LIMITER, INBOXES }, { USER_DAILY_TOKENS: "1000" })).toEqual({ ok: true, value: "begun" });
  });

  it("the per-client limit without CLIENT_LIMITER: refused, unless CLIENT_LIMIT=off says a rule in front limits clients", async () => {
    expect(await admit({}, {})).toMatchObject(refusal("CLIENT_LIMITER"));
    expect(await admit({}, { CLIENT_LIMIT: "off" })).toEqual({ ok: true, value: "begun" });
    expect(await admit({ CLIENT_LIMITER }, {})).toEqual({ ok: true, value: "begun" });
  });

  it("a network with people without OPERATOR_DESK: every turn is refused, naming the binding and the people", async () => {
    const withPeople = createSupportNetwork();
    const refused = await admit({ CLIENT_LIMITER }, {}, withPeople);
    expect(refused).toMatchObject(refusal("OPERATOR_DESK"));
    expect(refused).toMatchObject({ error: { message: expect.stringContaining("support-desk") } });
    expect(await admit({ CLIENT_LIMITER, OPERATOR_DESK }, {}, withPeople)).toEqual({ ok: true, value: "begun" });
  });

  it("a network with no people needs no OPERATOR_DESK: ending a conversation's hold and its card go nowhere, without an error", async () => {
    const id = `no-desk-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(id, "triage", "grant", "ada");
      const redactor = new Redactor([]);
      const hold = new PersonHold(store, redactor, {}, () => {}, supportLike());
      // What deleting the conversation does (the hold ends, its card leaves the desk), and what a person's turn does.
      await expect(hold.end(id)).resolves.toBeUndefined();
      await expect(hold.toDesk({ conversationId: id, person: "support-desk", status: "waiting" })).resolves.toBeUndefined();
    });
  });

  it("a Worker without CONVERSATIONS answers 500 invalid_configuration naming it, not a bare error", async () => {
    const app = createApp(() => createSupportNetwork(), [a2a(), agUi()]);
    const res = await app.fetch(
      new Request("https://chat.test/v1/conversations/c1", { headers: { authorization: "Bearer unused" } }),
      { ...env, CONVERSATIONS: undefined, API_KEY: undefined, ALLOW_ANONYMOUS: "true" },
      createExecutionContext(),
    );
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ error: { code: "invalid_configuration", message: expect.stringContaining("CONVERSATIONS") } });
  });

  it("the operator desk and a user's list without their Durable Objects answer naming the binding", async () => {
    const app = createApp(() => createSupportNetwork(), [a2a(), agUi()]);
    const secret = "a-shared-secret-of-the-identity-provider-0123";
    const signIn = await new SignJWT({ sub: "ada" })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode(secret));
    const answer = async (path: string, credential: string, bindings: object) => {
      const res = await app.fetch(
        new Request(`https://chat.test${path}`, { headers: { authorization: `Bearer ${credential}` } }),
        { ...env, API_KEY: "a-master-key-0123456789", AUTH_JWT_SECRET: secret, ...bindings },
        createExecutionContext(),
      );
      return [res.status, await res.json()];
    };
    expect(await answer("/v1/operator/conversations", "a-master-key-0123456789", { OPERATOR_DESK: undefined })).toEqual([
      503,
      {
        error: {
          code: "operator_desk_not_configured",
          message:
            "This Worker binds no operator desk: add the OPERATOR_DESK Durable Object binding (class OperatorDesk) to wrangler.toml.",
        },
      },
    ]);
    expect(await answer("/v1/conversations", signIn, { INBOXES: undefined })).toEqual([
      503,
      {
        error: {
          code: "inbox_not_configured",
          message: expect.stringMatching(/^This Worker binds no inboxes: add the INBOXES Durable Object binding \(class Inbox\)/),
        },
      },
    ]);
    // A conversation that is not there is still not found: with no inbox there is no entry of it to take away.
    const gone = `gone-${crypto.randomUUID()}`;
    expect(await answer(`/v1/conversations/${gone}`, signIn, { INBOXES: undefined })).toEqual([
      404,
      { error: { code: "conversation_not_found", message: expect.stringMatching(new RegExp(`^No conversation '${gone}'\\.`)) } },
    ]);
  });

  it("a key with a space in it, which no client could present as a Bearer token, answers 500 invalid_configuration naming it", async () => {
    const app = createApp(() => createSupportNetwork(), [a2a(), agUi()]);
    for (const name of ["API_KEY", "OPERATOR_KEY"]) {
      const key = "a long key with spaces in it";
      const res = await app.fetch(
        new Request("https://chat.test/v1/agents", { headers: { authorization: "Bearer whatever" } }),
        { ...env, [name]: key },
        createExecutionContext(),
      );
      expect(res.status).toBe(500);
      const body = await res.text();
      expect(JSON.parse(body)).toMatchObject({
        error: { code: "invalid_configuration", message: expect.stringContaining(`${name} cannot contain spaces`) },
      });
      expect(body).not.toContain(key);
    }
  });
});
