/**
 * Signed-in users through the Worker: JWTs from the identity provider's JWKS (test/node/jwks-server.ts)
 * verified with `jose`, conversations each user owns (someone else's answers 404), and every bad
 * token refused with a clear 401 (or a 503 while the provider's keys cannot be had), changing nothing.
 */
import { importJWK, type JWK, SignJWT } from "jose";
import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { inboxOf } from "../../src/inbox/inbox.ts";
import { scenario } from "../support/scenario.ts";
import { underMutation } from "../support/mutation.ts";
import { inOneWindow } from "../support/rate-window.ts";
import { parseSse } from "../support/sse.ts";
import { until } from "../support/until.ts";
import { call } from "../support/worker.ts";

const MASTER = "master-key-for-the-users-tests";
const { url: jwksUrl, keys, rs1PublicPem } = inject("jwks");

/** A token for `user`, signed with the key `kid`; `claims` and `header` change what a test needs. */
async function mint(user: string | undefined, options: { kid?: string; claims?: Record<string, unknown>; expiresIn?: string } = {}) {
  const kid = options.kid ?? "rs1";
  const jwk = keys[kid] as JWK;
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    ...(user === undefined ? {} : { sub: user, name: `User ${user}` }),
    iss: "https://idp.test",
    aud: "handoff-chat",
    iat: now,
    ...options.claims,
  };
  const jwt = new SignJWT(payload).setProtectedHeader({ alg: jwk.alg!, kid }).setExpirationTime(options.expiresIn ?? "10m");
  return jwt.sign(await importJWK(jwk, jwk.alg));
}

const as = (credential: string | undefined, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string>), ...(credential ? { authorization: `Bearer ${credential}` } : {}) },
});
const json = (body: unknown) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

async function create(credential: string): Promise<{ id: string; token: string }> {
  const res = await call("/v1/conversations", as(credential, { method: "POST" }));
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; token: string };
}

async function jwksFetches(): Promise<number> {
  return ((await (await fetch(`${jwksUrl}/__jwks/stats`)).json()) as { fetches: number }).fetches;
}

const control = (body: unknown) => fetch(`${jwksUrl}/__jwks`, { method: "POST", body: JSON.stringify(body) });

afterEach(async () => {
  vi.useRealTimers();
  await control({ mode: "ok" });
});

describe("conversations each signed-in user owns", () => {
  it("answers every conversation route for its owner, the master key and its token, 404 for anyone else, 401 for no one", async () => {
    const s = await scenario([{ text: "Hello, Ada." }, { text: "Again." }, { text: "Once more." }, { text: "Chat." }]);
    const ada = await mint("ada");
    const { id, token } = await create(ada);
    const first = await call(`/v1/conversations/${id}/messages`, as(ada, json({ message: s.tag("hi") })));
    expect(first.status).toBe(200);
    await first.text();
    const base = `/v1/conversations/${id}`;
    const routes: Array<[string, string, RequestInit]> = [
      ["GET", base, {}],
      ["GET", `${base}/events`, { headers: { "last-event-id": "0" } }],
      ["GET", `${base}/turns`, {}],
      ["GET", `${base}/turns/1/trace`, {}],
      ["GET", `${base}/ui-messages`, {}],
      ["GET", `${base}/chat/stream`, {}],
      ["POST", `${base}/cancel`, { method: "POST" }],
      ["POST", `${base}/approvals`, json({ decisions: [{ toolCallId: "none", approved: true }] })],
      ["POST", `${base}/fork`, json({ afterTurn: 1 })],
      ["POST", `${base}/tokens`, json({})],
    ];
    const callers: Array<[string, string | undefined]> = [
      ["owner", ada],
      ["another user", await mint("bob")],
      ["an operator", await mint("olga", { claims: { roles: ["operator"] } })],
      ["the master key", MASTER],
      ["its token", token],
      ["nobody", undefined],
    ];
    for (const [method, path, init] of routes) {
      for (const [who, credential] of callers) {
        const res = await call(path, as(credential, init));
        const body = await res.text();
        const where = `${who}: ${method} ${path} → ${res.status} ${body.slice(0, 120)}`;
        if ((who === "another user" || who === "an operator") && path.endsWith("/chat/stream")) {
          // useChat's resume answers a conversation that does not exist with 204 (nothing to resume): someone else's alike.
          expect(res.status, where).toBe(204);
        } else if (who === "another user" || who === "an operator") {
          expect(res.status, where).toBe(404);
          expect(body, where).toContain("conversation_not_found");
        } else if (who === "nobody") expect(res.status, where).toBe(401);
        else if (who === "its token" && path.endsWith("/tokens")) expect(res.status, where).toBe(403);
        else expect([401, 403, 404], where).not.toContain(res.status);
      }
    }
    // Messages and deletion: someone else's message or delete is a 404 and changes nothing.
    const bob = await mint("bob");
    expect((await call(`${base}/messages`, as(bob, json({ message: "mine now" })))).status).toBe(404);
    expect((await call(base, as(bob, { method: "DELETE" }))).status).toBe(404);
    const view = (await (await call(base, as(ada))).json()) as { messages: Array<{ content: string | null }> };
    expect(view.messages.map((m) => m.content)).not.toContain("mine now");
    expect((await call(base, as(ada, { method: "DELETE" }))).status).toBe(204);
    expect((await call(base, as(ada))).status).toBe(404);
  });

  it("opens the WebSocket for its owner (the sign-in token as ?token=, as a browser must send it), and no one else", async () => {
    const s = await scenario([{ text: "Hi." }]);
    const ada = await mint(`ws-${s.id}`);
    const { id, token } = await create(ada);
    await (await call(`/v1/conversations/${id}/messages`, as(ada, json({ message: s.tag("hi") })))).text();
    const socket = (credential: string) =>
      call(`/v1/conversations/${id}/socket?token=${encodeURIComponent(credential)}`, { headers: { upgrade: "websocket" } });
    const owner = await socket(ada);
    expect(owner.status).toBe(101);
    owner.webSocket!.accept();
    owner.webSocket!.close();
    const byToken = await socket(token);
    expect(byToken.status).toBe(101);
    byToken.webSocket!.accept();
    byToken.webSocket!.close();
    expect((await socket(await mint("bob"))).status).toBe(404);
    expect((await call(`/v1/conversations/${id}/socket`, { headers: { upgrade: "websocket" } })).status).toBe(401);
  });

  it("gives a fork to whoever made it, and lets no user start a conversation with a first message", async () => {
    const s = await scenario([{ text: "One." }]);
    const ada = await mint("ada");
    const { id } = await create(ada);
    const sent = await call(`/v1/conversations/${id}/messages`, as(ada, json({ message: s.tag("hi") })));
    await sent.text();
    const fork = await call(`/v1/conversations/${id}/fork`, as(ada, json({ afterTurn: 1 })));
    expect(fork.status).toBe(201);
    const forked = ((await fork.json()) as { id: string }).id;
    expect((await call(`/v1/conversations/${forked}`, as(ada))).status).toBe(200);
    expect((await call(`/v1/conversations/${forked}`, as(await mint("bob")))).status).toBe(404);
    // A fork keeps its owner whichever credential made it: the conversation's token, the master key.
    const { token } = (await (await call(`/v1/conversations/${id}/tokens`, as(ada, json({})))).json()) as { token: string };
    for (const credential of [token, MASTER]) {
      const other = await call(`/v1/conversations/${id}/fork`, as(credential, json({ afterTurn: 1 })));
      expect(other.status).toBe(201);
      const made = ((await other.json()) as { id: string }).id;
      expect((await call(`/v1/conversations/${made}`, as(ada))).status).toBe(200);
      expect((await call(`/v1/conversations/${made}`, as(await mint("bob")))).status).toBe(404);
    }
    // A user cannot squat an id by messaging it first; the master key still can.
    expect((await call("/v1/conversations/picked-by-ada/messages", as(ada, json({ message: "hi" })))).status).toBe(404);
  });

  it("has no development sign-in when an identity provider is configured, and GET /v1/me says who the token names", async () => {
    const res = await call("/v1/dev/sign-in", as(MASTER, json({ name: "Mallory", operator: true })));
    expect([res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([404, "not_found"]);
    expect(await (await call("/v1/me", as(await mint("ada")))).json()).toEqual({
      access: "user",
      user: { id: "ada", name: "User ada", roles: [] },
      signIn: "provider",
    });
    expect((await call("/v1/me")).status).toBe(401);
  });

  it("takes the token from Cloudflare Access's header too, and opens the operator API only with the operator role", async () => {
    const ada = await mint("ada");
    const created = await call("/v1/conversations", { method: "POST", headers: { "cf-access-jwt-assertion": ada } });
    expect(created.status).toBe(201);
    expect((await call("/v1/operator/conversations", as(ada))).status).toBe(403);
    expect((await call("/v1/operator/conversations", as(await mint("olga", { claims: { roles: "operator" } })))).status).toBe(200);
  });
});

describe("a bad sign-in token", () => {
  /** A refusal says why in its body and in WWW-Authenticate, and creates nothing. */
  async function refused(credential: string, why: RegExp, status = 401): Promise<void> {
    const res = await call("/v1/conversations", as(credential, { method: "POST" }));
    const body = (await res.json()) as { error?: { code: string; message: string } };
    expect([res.status, body.error?.message]).toEqual([status, expect.stringMatching(why)]);
    if (!body.error) return;
    if (status === 401) {
      expect(body.error.code).toBe("unauthorized");
      expect(res.headers.get("www-authenticate")).toMatch(/error="invalid_token", error_description="/);
    } else expect(body.error.code).toBe("auth_unavailable");
  }

  const b64 = (value: unknown) => btoa(JSON.stringify(value)).replaceAll("=", "").replaceAll("+", "-").replaceAll("/", "_");

  it("is refused: alg none, an HS256 token signed with the provider's public key, expired, not yet valid, another issuer or audience", async () => {
    const claims = { sub: "mallory", iss: "https://idp.test", aud: "handoff-chat", exp: Math.floor(Date.now() / 1000) + 600 };
    await refused(`${b64({ alg: "none" })}.${b64(claims)}.`, /not a valid JWT|algorithm/);
    const confused = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256", kid: "rs1" })
      .sign(new TextEncoder().encode(rs1PublicPem));
    await refused(confused, /algorithm/);
    await refused(await mint("ada", { expiresIn: "-2h" }), /expired/);
    await refused(await mint("ada", { claims: { nbf: Math.floor(Date.now() / 1000) + 3600 } }), /nbf/);
    await refused(await mint("ada", { claims: { iss: "https://evil.test" } }), /iss/);
    await refused(await mint("ada", { claims: { aud: "another-app" } }), /aud/);
  });

  it("is refused when it names no user, an oversized one, or a user id that is not a string", async () => {
    await refused(await mint(undefined), /sub claim/);
    await refused(await mint("ada", { claims: { sub: 42 } }), /sub claim/);
    await refused(await mint("ada", { claims: { padding: "x".repeat(9000) } }), /longer than/);
  });

  it("signed with a key the provider does not list is refused after one refetch; once the provider lists it, it works", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    await create(await mint("ada"));
    const before = await jwksFetches();
    // Past the cooldown since the last fetch, an unknown kid makes the one refetch.
    vi.setSystemTime(Date.now() + 31_000);
    await refused(await mint("ada", { kid: "rs2" }), /does not list/);
    expect(await jwksFetches()).toBe(before + 1);
    // Within the cooldown, an unknown kid does not refetch.
    await refused(await mint("ada", { kid: "rs2" }), /does not list/);
    expect(await jwksFetches()).toBe(before + 1);
    // The provider rotates in the new key; after the cooldown the next unknown kid refetches, and the key works.
    await control({ publish: ["rs2"] });
    vi.setSystemTime(Date.now() + 31_000);
    await create(await mint("ada", { kid: "rs2" }));
    expect(await jwksFetches()).toBe(before + 2);
    await create(await mint("ada", { kid: "es1" }));
  });

  it("meets a provider that is down, answers garbage or is slow with 503 auth_unavailable, never an open door", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() });
    await create(await mint("ada"));
    // Past the key set's cache age (10 minutes; earlier tests moved the clock too), the keys must be fetched again.
    for (const mode of ["down", "garbage", "slow"] as const) {
      await control({ mode });
      vi.setSystemTime(Date.now() + 30 * 60_000);
      await refused(await mint("ada"), /could not be fetched/, 503);
    }
  }, 30_000);
});

describe("a signed-in user's inbox", () => {
  type Page = {
    conversations: Array<{
      id: string;
      title: string;
      holder: string;
      status: string;
      snippet: string;
      archived: boolean;
      updatedAt: number;
    }>;
    next: string | null;
  };
  const list = async (credential: string, query = ""): Promise<Page> => {
    const res = await call(`/v1/conversations${query}`, as(credential));
    expect(res.status).toBe(200);
    return (await res.json()) as Page;
  };
  const say = async (credential: string, id: string, message: string) => {
    const res = await call(`/v1/conversations/${id}/messages`, as(credential, json({ message })));
    expect(res.status).toBe(200);
    await res.text();
  };

  it("lists exactly the user's conversations, newest first, with title, holder, status and the last message; paged; searched", async () => {
    const s = await scenario([
      { text: "Your parcel left the depot." },
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { text: "Refund on its way." },
    ]);
    const [cleo, dan] = [await mint(`cleo-${s.id}`), await mint(`dan-${s.id}`)];
    const first = await create(cleo);
    const second = await create(cleo);
    const dans = await create(dan);
    await say(cleo, first.id, s.tag("where is my parcel A1002?"));
    await say(cleo, second.id, s.tag("refund my double charge"));
    const page = await list(cleo);
    expect(page.conversations.map((c) => c.id)).toEqual([second.id, first.id]);
    expect(page.conversations[0]).toMatchObject({ holder: "billing", status: "completed", snippet: "Refund on its way.", archived: false });
    expect(page.conversations[0]!.title).toMatch(/^refund my double charge/);
    expect(page.conversations[1]).toMatchObject({ holder: "triage", status: "completed", snippet: "Your parcel left the depot." });
    expect((await list(dan)).conversations.map((c) => c.id)).toEqual([dans.id]);
    // Paged: one at a time, the cursor leading to the next; searched over titles and last messages.
    const one = await list(cleo, "?limit=1");
    expect(one.conversations.map((c) => c.id)).toEqual([second.id]);
    expect((await list(cleo, `?limit=1&before=${one.next}`)).conversations.map((c) => c.id)).toEqual([first.id]);
    expect((await list(cleo, "?q=parcel")).conversations.map((c) => c.id)).toEqual([first.id]);
    expect((await list(cleo, "?q=refund%20way")).conversations.map((c) => c.id)).toEqual([second.id]);
    expect((await list(cleo, `?q=${encodeURIComponent('"(*')}`)).conversations).toEqual([]);
    const bad = await call("/v1/conversations?limit=0", as(cleo));
    expect(bad.status).toBe(400);
    expect((await call("/v1/conversations", as(MASTER))).status).toBe(403);
  });

  it("searches every user and agent message (not tool results), by prefix, newest first; an edited message's words leave", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "l", name: "lookup_order", arguments: JSON.stringify({ orderId: "A1002" }) }] },
      { text: "Sorry to hear that: it is being prepared." },
      { text: "Your parcel is on its way." },
      { text: "Bye." },
      { text: "Noted." },
      { text: "Understood." },
    ]);
    const gail = await mint(`gail-${s.id}`);
    const [late, other] = [await create(gail), await create(gail)];
    // The user's words, with the agent answering last and the title not having them.
    await say(gail, late.id, s.tag("my parcel has not arrived"));
    await call(`/v1/conversations/${late.id}`, as(gail, { ...json({ title: "Delivery" }), method: "PATCH" }));
    // An agent's words, in a message that is no longer the last.
    await say(gail, other.id, s.tag("hello there"));
    await say(gail, other.id, s.tag("thanks"));
    const found = async (q: string) => (await list(gail, `?q=${encodeURIComponent(q)}`)).conversations.map((c) => c.id);
    expect(await found("parcel")).toEqual([other.id, late.id]);
    expect(await found("PARC")).toEqual([other.id, late.id]);
    expect(await found("parcel arrived")).toEqual([late.id]);
    expect(await found("hello")).toEqual([other.id]);
    // The tool's result (the order's item, "USB-C dock") stays out.
    expect(await found("dock")).toEqual([]);
    // A secret the user typed is found neither whole nor by its pieces.
    await say(gail, other.id, s.tag(`the key is ${MASTER}`));
    expect(await found("users tests")).toEqual([]);
    // An edit of the last message: its words go, the new ones come.
    const edited = await call(`/v1/conversations/${other.id}/retry`, as(gail, json({ message: s.tag("goodbye now") })));
    expect(edited.status).toBe(200);
    await edited.text();
    expect(await found("goodbye")).toEqual([other.id]);
    expect(await found("redacted")).toEqual([]);
  });

  it("shows a conversation as running while its turn runs, with no row written for it", async () => {
    const s = await scenario([{ text: "A slow answer, held by the provider.", holdAfter: 2 }]);
    const user = await mint(`running-${s.id}`);
    const { id } = await create(user);
    const sent = await call(`/v1/conversations/${id}/messages`, as(user, json({ message: s.tag("hello") })));
    const statusOf = async () => (await list(user)).conversations.find((c) => c.id === id)?.status;
    for (let i = 0; i < 100 && (await statusOf()) !== "running"; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await statusOf()).toBe("running");
    await s.release();
    await sent.text();
    expect(await statusOf()).toBe("completed");
  });

  it("writes one inbox row per turn, and pages through entries of the same millisecond without losing one", async () => {
    const s = await scenario([{ text: "One." }, { text: "Two." }, { text: "Two." }]);
    const user = await mint(`rows-${s.id}`);
    const { id } = await create(user);
    for (const message of ["first", "second", "second"]) {
      await say(user, id, s.tag(message));
      const view = (await (await call(`/v1/conversations/${id}`, as(user))).json()) as { lastTurnStorage: { inboxRowsWritten: number } };
      expect(view.lastTurnStorage.inboxRowsWritten, message).toBe(1);
    }
    // Many created at once share milliseconds: one page at a time still reaches each exactly once.
    const made = await Promise.all(Array.from({ length: 12 }, () => create(user)));
    const seen: string[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page = await list(user, `?limit=5${cursor ? `&before=${cursor}` : ""}`);
      seen.push(...page.conversations.map((c) => c.id));
      cursor = page.next;
    }
    expect(seen.sort()).toEqual([id, ...made.map((m) => m.id)].sort());
    const bad = await call("/v1/conversations?before=yesterday", as(user));
    expect([bad.status, ((await bad.json()) as { error: { message: string } }).error.message]).toEqual([
      400,
      expect.stringMatching(/cursor/),
    ]);
  });

  it("renames and archives (only the owner), and a deleted conversation leaves the list", async () => {
    const erin = await mint("erin-inbox");
    const { id } = await create(erin);
    const renamed = await call(`/v1/conversations/${id}`, as(erin, { ...json({ title: "  Trip to Lisbon " }), method: "PATCH" }));
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ id, title: "Trip to Lisbon", archived: false });
    expect((await call(`/v1/conversations/${id}`, as(await mint("frank"), { ...json({ title: "mine" }), method: "PATCH" }))).status).toBe(
      404,
    );
    expect((await call(`/v1/conversations/${id}`, as(erin, { ...json({}), method: "PATCH" }))).status).toBe(400);
    expect((await list(erin)).conversations.map((c) => c.title)).toEqual(["Trip to Lisbon"]);
    await call(`/v1/conversations/${id}`, as(erin, { ...json({ archived: true }), method: "PATCH" }));
    expect((await list(erin)).conversations).toEqual([]);
    expect((await list(erin, "?archived=true")).conversations.map((c) => [c.id, c.archived])).toEqual([[id, true]]);
    // The object restarts: who owns it, its title, that it is archived and when it was made are read back from its storage.
    const { createdAt } = (await list(erin, "?archived=true")).conversations[0] as unknown as { createdAt: number };
    await evictDurableObject(env.CONVERSATIONS.getByName(id));
    expect((await call(`/v1/conversations/${id}`, as(erin))).status).toBe(200);
    const archivedOnly = await call(`/v1/conversations/${id}`, as(erin, { ...json({ archived: true }), method: "PATCH" }));
    expect(await archivedOnly.json()).toMatchObject({ id, title: "Trip to Lisbon", archived: true, createdAt });
    await evictDurableObject(env.CONVERSATIONS.getByName(id));
    const titleOnly = await call(`/v1/conversations/${id}`, as(erin, { ...json({ title: "Lisbon" }), method: "PATCH" }));
    expect(await titleOnly.json()).toMatchObject({ id, title: "Lisbon", archived: true, createdAt });
    expect((await call(`/v1/conversations/${id}`, as(erin, { method: "DELETE" }))).status).toBe(204);
    expect((await list(erin, "?archived=true")).conversations).toEqual([]);
  });

  it("heals by itself: an entry the inbox missed comes with the conversation's next write, one it kept after a delete goes when opened", async () => {
    const s = await scenario([{ text: "Noted." }]);
    const gus = await mint(`gus-${s.id}`);
    const { id } = await create(gus);
    const inbox = await inboxOf(env, `gus-${s.id}`);
    // The inbox missed the conversation (a crash between the two objects): the next turn tells it again, whole.
    await inbox!.remove(id);
    expect((await list(gus)).conversations).toEqual([]);
    await say(gus, id, s.tag("remember my seat 12A"));
    expect((await list(gus)).conversations.map((c) => [c.id, c.snippet])).toEqual([[id, "Noted."]]);
    // The inbox kept an entry whose conversation is gone: opening it answers 404, and the entry goes.
    await inbox!.record({
      id: "gone-conversation",
      title: "Gone",
      createdAt: 1,
      updatedAt: Date.now(),
      holder: "triage",
      status: "idle",
      snippet: "",
      archived: false,
    });
    expect((await list(gus)).conversations.map((c) => c.id)).toContain("gone-conversation");
    expect((await call("/v1/conversations/gone-conversation", as(gus))).status).toBe(404);
    expect((await list(gus)).conversations.map((c) => c.id)).not.toContain("gone-conversation");
  });

  it("an inbox made before search had every message's words gets the new index: each entry indexed again, its words with the next turn", async () => {
    const s = await scenario([{ text: "Noted." }, { text: "Again." }]);
    const hal = await mint(`hal-${s.id}`);
    const { id } = await create(hal);
    await say(hal, id, s.tag("my parcel has not arrived"));
    const inbox = (await inboxOf(env, `hal-${s.id}`))!;
    // The inbox as it was: an index of titles and last messages, every entry in it, no words kept.
    await runInDurableObject(inbox, (_instance, state) => {
      state.storage.sql.exec(`DROP TABLE inbox_text`);
      state.storage.sql.exec(`CREATE VIRTUAL TABLE inbox_search USING fts5(id UNINDEXED, title, snippet)`);
      state.storage.sql.exec(`INSERT INTO inbox_search (id, title, snippet) SELECT id, title, snippet FROM inbox`);
      state.storage.sql.exec(`UPDATE inbox SET indexed = 1, words = ''`);
    });
    // The object starts again, as after a deploy: its constructor brings the storage up to date.
    await evictDurableObject(inbox);
    const tables = await runInDurableObject(inbox, (_instance, state) =>
      state.storage.sql
        .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE name IN ('inbox_search', 'inbox_text')`)
        .toArray()
        .map((t) => t.name),
    );
    expect(tables).toEqual(["inbox_text"]);
    const found = async (q: string) => (await list(hal, `?q=${q}`)).conversations.map((c) => c.id);
    // The title is found again at once; the words of the messages come with the conversation's next write.
    expect(await found("parcel")).toEqual([id]);
    await say(hal, id, s.tag("still waiting"));
    expect(await found("arrived")).toEqual([id]);
  });
});

describe("per user", () => {
  it.skipIf(underMutation())(
    "limits new turns by the user's id, not the address: a user spread over many addresses is limited at 600; another user is not",
    async () => {
      const s = await scenario(Array.from({ length: 1260 }, () => ({ text: "ok" })));
      const send = (credential: string, id: string, i: number) =>
        call(`/v1/conversations/${id}/messages`, {
          ...as(credential, json({ message: s.tag(`turn ${i}`) })),
          headers: {
            authorization: `Bearer ${credential}`,
            "content-type": "application/json",
            "cf-connecting-ip": `198.51.100.${i % 250}`,
          },
        });
      const statuses = await inOneWindow(async () => {
        const user = await mint(`busy-${crypto.randomUUID()}`);
        // The limit comes after ownership: the user's own conversations, made first (making one is no turn).
        const ids: string[] = [];
        for (let batch = 0; batch < 625; batch += 25)
          ids.push(...(await Promise.all(Array.from({ length: 25 }, async () => (await create(user)).id))));
        const statuses: number[] = [];
        for (let batch = 0; batch < 625; batch += 25)
          statuses.push(
            ...(await Promise.all(
              Array.from({ length: 25 }, async (_, j) => {
                const res = await send(user, ids[batch + j]!, batch + j);
                await res.text();
                return res.status;
              }),
            )),
          );
        return statuses;
      });
      expect(statuses.filter((status) => status === 200)).toHaveLength(600);
      expect(statuses.filter((status) => status === 429)).toHaveLength(25);
      const calm = await mint(`calm-${crypto.randomUUID()}`);
      const theirs = await send(calm, (await create(calm)).id, 1);
      expect(theirs.status).toBe(200);
      await theirs.text();
    },
    200_000,
  );

  it("refuses new turns with user_budget_exhausted once the user's tokens today pass USER_DAILY_TOKENS, across their conversations", async () => {
    const s = await scenario([
      { text: "That was expensive.", usage: { promptTokens: 999_000, completionTokens: 1_500 } },
      { text: "Cheap." },
    ]);
    const payer = await mint(`payer-${s.id}`);
    const first = await create(payer);
    await (await call(`/v1/conversations/${first.id}/messages`, as(payer, json({ message: s.tag("hi") })))).text();
    // Another of the user's conversations is refused too: the budget is the user's, kept in their inbox.
    const second = await create(payer);
    const refused = await call(`/v1/conversations/${second.id}/messages`, as(payer, json({ message: s.tag("more") })));
    const body = (await refused.json()) as { error: { code: string; message: string; details: { spent: number; budget: number } } };
    expect([refused.status, body.error.code]).toEqual([429, "user_budget_exhausted"]);
    expect(body.error.message).toMatch(/1000500 of your 1000000 tokens for today \(UTC\).*accepted again from \d{4}-\d\d-\d\dT00:00:00/);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(86_400);
    const retry = await call(`/v1/conversations/${first.id}/retry`, as(payer, { method: "POST" }));
    expect(retry.status).toBe(429);
    // Nothing was stored by the refusals; another user goes on.
    const view = (await (await call(`/v1/conversations/${second.id}`, as(payer))).json()) as { messages: unknown[] };
    expect(view.messages).toEqual([]);
    const other = await mint(`other-${s.id}`);
    const theirs = await create(other);
    const answered = await call(`/v1/conversations/${theirs.id}/messages`, as(other, json({ message: s.tag("hello") })));
    expect(answered.status).toBe(200);
    await answered.text();
  });
});

describe("a background delegation of a signed-in user", () => {
  it("does not start while its owner's daily budget is spent: its entry waits for the next UTC day, and nothing is spent on it", async () => {
    const s = await scenario((tag) => [
      {
        toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "lost" }) }],
        usage: { promptTokens: 999_000, completionTokens: 1_500 },
      },
      { toolCalls: [{ id: "bg", name: "search_for_parcel", arguments: JSON.stringify({ request: tag("Find the parcel of A1002") }) }] },
      { text: "Started." },
      { text: "The search's answer, never asked for." },
    ]);
    const owner = await mint(`searcher-${s.id}`);
    const { id } = await create(owner);
    await (await call(`/v1/conversations/${id}/messages`, as(owner, json({ message: s.tag("my parcel is lost") })))).text();
    // The search waits for the turn that asked to end (its tokens are counted then), and the owner has spent the day's.
    const stub = env.CONVERSATIONS.getByName(id);
    await runInDurableObject(stub, (_o, state) => state.storage.setAlarm(Date.now() - 1));
    await runDurableObjectAlarm(stub);
    const entries = (
      (await (await call(`/v1/conversations/${id}/schedule`, as(owner))).json()) as { entries: Array<Record<string, unknown>> }
    ).entries;
    expect(entries).toMatchObject([{ kind: "delegation", agent: "parcel-search" }]);
    const midnight = new Date(new Date().toISOString().slice(0, 10)).getTime() + 86_400_000;
    expect(Math.abs(Date.parse(entries[0]!.dueAt as string) - midnight)).toBeLessThan(5_000);
    expect((await s.sent()).requests).toHaveLength(3);
    const runs = await runInDurableObject(stub, (_o, state) =>
      state.storage.sql.exec(`SELECT entry FROM runs WHERE mode = 'background'`).toArray(),
    );
    expect(runs).toEqual([]);
  });

  it("waits for its owner's answer in their list, and does not carry on once their daily budget is spent: the entry waits for the next UTC day", async () => {
    const s = await scenario((tag) => [
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "lost" }) }] },
      { toolCalls: [{ id: "bg", name: "search_for_parcel", arguments: JSON.stringify({ request: tag("Find A1002, redeliver it") }) }] },
      { text: "Started." },
      { toolCalls: [{ id: "rd1", name: "arrange_redelivery", arguments: JSON.stringify({ orderId: "A1002" }) }] },
      { text: "Noted.", usage: { promptTokens: 1_000_000, completionTokens: 500 } },
      { text: "The search's answer, never asked for." },
    ]);
    const owner = await mint(`redeliverer-${s.id}`);
    const { id } = await create(owner);
    await (await call(`/v1/conversations/${id}/messages`, as(owner, json({ message: s.tag("my parcel is lost") })))).text();
    const stub = env.CONVERSATIONS.getByName(id);
    const view = async () => (await (await call(`/v1/conversations/${id}`, as(owner))).json()) as { pendingRequests: unknown[] };
    await runInDurableObject(stub, (_o, state) => state.storage.setAlarm(Date.now() - 1));
    await runDurableObjectAlarm(stub);
    await until(view, (v) => v.pendingRequests.length === 1, "the search's question");
    // The owner's list says the conversation waits for them.
    const listed = async () =>
      (
        (await (await call("/v1/conversations", as(owner))).json()) as { conversations: Array<{ id: string; status: string }> }
      ).conversations.find((c) => c.id === id)?.status;
    expect(await until(listed, (status) => status === "awaiting_input", "the owner's list")).toBe("awaiting_input");
    // The owner's next turn spends the day's tokens; then they answer the search.
    await (await call(`/v1/conversations/${id}/messages`, as(owner, json({ message: s.tag("thanks") })))).text();
    const answered = await call(
      `/v1/conversations/${id}/decisions`,
      as(owner, json({ decisions: [{ toolCallId: "rd1", answer: { day: "2026-12-10", where: "front door" } }] })),
    );
    expect(answered.status).toBe(202);
    await until(listed, (status) => status === "completed", "the owner's list once answered");
    await runInDurableObject(stub, (_o, state) => state.storage.setAlarm(Date.now() - 1));
    await runDurableObjectAlarm(stub);
    const entries = (
      (await (await call(`/v1/conversations/${id}/schedule`, as(owner))).json()) as { entries: Array<Record<string, unknown>> }
    ).entries;
    const midnight = new Date(new Date().toISOString().slice(0, 10)).getTime() + 86_400_000;
    expect(entries).toMatchObject([{ kind: "delegation", agent: "parcel-search" }]);
    expect(Math.abs(Date.parse(entries[0]!.dueAt as string) - midnight)).toBeLessThan(5_000);
    expect((await s.sent()).requests).toHaveLength(5);
  });
});

describe("an operator who signs in", () => {
  it("answers and hands back under the name in their token, never one the client chooses, and the conversation records who", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "wants a person" }) }] },
    ]);
    const ada = await mint(`ada-${s.id}`);
    const { id } = await create(ada);
    const handed = await call(`/v1/conversations/${id}/messages`, as(ada, json({ message: s.tag("a person, please") })));
    await handed.text();
    const olga = await mint("olga", { claims: { roles: ["operator"] } });
    const base = `/v1/conversations/${id}/operator`;
    const chosen = await call(`${base}/messages`, as(olga, json({ message: "Hi", operator: "Someone Else" })));
    expect([chosen.status, ((await chosen.json()) as { error: { message: string } }).error.message]).toEqual([
      400,
      expect.stringMatching(/sign-in token/),
    ]);
    expect((await call(`${base}/messages`, as(olga, json({ message: "Hi, Olga here." })))).status).toBe(200);
    expect((await call(`${base}/handoff`, as(olga, json({ to: "triage", note: "sorted" })))).status).toBe(200);
    // The owner's view and replay say who answered and who handed back; the note was for triage, and only the desk reads it.
    const view = (await (await call(`/v1/conversations/${id}`, as(ada))).json()) as { handoffs: unknown[] };
    expect(view.handoffs.at(-1)).toMatchObject({ kind: "hand-back", by: { id: "olga", name: "User olga" } });
    expect(view.handoffs.at(-1)).not.toHaveProperty("note");
    const desk = (await (await call(`/v1/operator/conversations/${id}`, as(olga))).json()) as { handoffs: unknown[] };
    expect(desk.handoffs.at(-1)).toMatchObject({ kind: "hand-back", note: "sorted" });
    const replay = await (await call(`/v1/conversations/${id}/events`, as(ada, { headers: { "last-event-id": "0" } }))).text();
    const spoke = replay
      .split("\n\n")
      .filter((frame) => frame.includes("operator-message"))
      .map((frame) => JSON.parse(frame.slice(frame.indexOf("data: ") + 6)));
    expect(spoke).toMatchObject([{ text: "Hi, Olga here.", operator: "User olga", by: { id: "olga", name: "User olga" } }]);
  });

  it("is named on the desk while holding a conversation, and the view lists who answered, handed back, approved or denied, and when", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "wants a person" }) }] },
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      {
        toolCalls: [
          { id: "r1", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 10 }) },
          { id: "r2", name: "refund", arguments: JSON.stringify({ orderId: "A1002", amountUsd: 20 }) },
        ],
      },
      { text: "One refunded, one not." },
    ]);
    const ada = await mint(`ada-${s.id}`);
    const { id } = await create(ada);
    await (await call(`/v1/conversations/${id}/messages`, as(ada, json({ message: s.tag("a person, please") })))).text();
    const olga = await mint("olga", { claims: { roles: ["operator"] } });
    const base = `/v1/conversations/${id}`;
    const started = Date.now();
    // The card says what the conversation is and who waits, since when; no deadline, since this person has none.
    const waiting = (await (await call("/v1/operator/conversations", as(olga))).json()) as {
      conversations: Array<Record<string, unknown>>;
    };
    const card = waiting.conversations.find((c) => c.conversationId === id)!;
    expect(card).toMatchObject({
      status: "waiting",
      title: expect.stringMatching(/^a person, please/),
      user: { id: `ada-${s.id}`, name: `User ada-${s.id}` },
    });
    expect(card.since).toBeGreaterThan(started - 60_000);
    expect(card).not.toHaveProperty("answerBy");
    expect((await call(`${base}/operator/messages`, as(olga, json({ message: "Olga here." })))).status).toBe(200);
    const desk = (await (await call("/v1/operator/conversations", as(olga))).json()) as {
      conversations: Array<{ conversationId: string; status: string; operator?: unknown }>;
    };
    expect(desk.conversations.find((c) => c.conversationId === id)).toMatchObject({
      status: "held",
      operator: { id: "olga", name: "User olga" },
    });
    await call(`${base}/operator/handoff`, as(olga, json({ to: "triage", note: "over to you" })));
    await (await call(`${base}/messages`, as(ada, json({ message: s.tag("refund both") })))).text();
    // The owner approves one; an operator denies the other through the operator API.
    expect((await call(`${base}/approvals`, as(ada, json({ decisions: [{ toolCallId: "r1", approved: true }] })))).status).toBe(202);
    const denied = await call(`${base}/operator/approvals`, as(olga, json({ decisions: [{ toolCallId: "r2", approved: false }] })));
    expect(denied.status).toBe(200);
    await denied.text();
    const view = (await (await call(base, as(ada))).json()) as { activity: Array<{ at: string }> };
    expect(view.activity).toMatchObject([
      { kind: "answered", by: { id: "olga", name: "User olga" }, agent: "support-desk" },
      { kind: "handed-back", by: { id: "olga", name: "User olga" }, agent: "support-desk", to: "triage" },
      { kind: "approved", by: { id: `ada-${s.id}`, name: `User ada-${s.id}` }, agent: "billing", toolCallId: "r1", tool: "refund" },
      { kind: "denied", by: { id: "olga", name: "User olga" }, agent: "billing", toolCallId: "r2", tool: "refund" },
    ]);
    for (const act of view.activity) expect(Date.parse(act.at)).toBeGreaterThanOrEqual(started - 1000);
    // An operator without the role cannot decide through the operator API.
    const uma = await call(`${base}/operator/approvals`, as(await mint("uma"), json({ decisions: [] })));
    expect(uma.status).toBe(403);
  });

  it("names on the desk card the user whose message a leg answers, not an operator whose decision resumed it", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { toolCalls: [{ id: "r", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 10 }) }] },
      { toolCalls: [{ id: "b", name: "transfer_to_triage", arguments: JSON.stringify({ reason: "wants a person now" }) }] },
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "wants a person" }) }] },
    ]);
    const ada = await mint(`ada-${s.id}`);
    const { id } = await create(ada);
    const base = `/v1/conversations/${id}`;
    await (await call(`${base}/messages`, as(ada, json({ message: s.tag("refund A1001") })))).text();
    const olga = await mint("olga", { claims: { roles: ["operator"] } });
    const resumed = await call(`${base}/operator/approvals`, as(olga, json({ decisions: [{ toolCallId: "r", approved: true }] })));
    expect(parseSse(await resumed.text()).at(-1)).toMatchObject({ type: "done", status: "awaiting_human" });
    const desk = (await (await call("/v1/operator/conversations", as(olga))).json()) as {
      conversations: Array<Record<string, unknown>>;
    };
    const card = desk.conversations.find((c) => c.conversationId === id)!;
    expect(card).toMatchObject({ status: "waiting", person: "support-desk" });
    expect(card).not.toHaveProperty("user");
  });
});
