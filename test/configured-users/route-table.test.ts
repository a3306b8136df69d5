/**
 * Every route of the app × every kind of caller, generated from `app.routes` (a new route joins by
 * itself): the owner, another signed-in user, an operator, the master key, the conversation's
 * token, a forged token, nobody. Each cell is the answer a caller must get; for a refusal, the
 * conversation is the same afterwards (its view, its schedule and its owner's list). A route the
 * table has no request for fails the test, naming it.
 */
import { describe, expect, it } from "vitest";
import { MASTER, mint } from "../support/sign-in.ts";
import { createSupportNetwork } from "../../src/agents/index.ts";
import { createApp } from "../../src/http/app.ts";
import { a2a, agUi } from "../../src/cloudflare/index.ts";
import { scenario } from "../support/scenario.ts";
import { call } from "../support/worker.ts";

type Requester = "owner" | "another user" | "an operator" | "the master key" | "its token" | "a forged token" | "nobody";
const CALLERS: Requester[] = ["owner", "another user", "an operator", "the master key", "its token", "a forged token", "nobody"];

/**
 * What a caller gets: let through (any answer but a refusal of access), or refused with this status
 * and code, and a message with these words (what to send instead, or why not).
 */
type Cell = "through" | [status: number, code: string, words: string];
const THROUGH = "through" as const;
const NOBODY: Cell = [401, "unauthorized", "Send Authorization: Bearer <API key, your sign-in token or a conversation token>."];
const NOBODY_ON_OPERATOR_API: Cell = [401, "unauthorized", "Send Authorization: Bearer <OPERATOR_KEY or API key>."];
const FORGED: Cell = [401, "unauthorized", "The token's signature does not verify."];
/** Someone else's conversation is not found, as one that does not exist. */
const NOT_FOUND: Cell = [404, "conversation_not_found", "No conversation '"];
const NO_ROLE: Cell = [403, "forbidden", "The operator API needs the 'operator' role in your sign-in token."];
/** A conversation token opens its own conversation, the agents and the API description only: elsewhere it is refused. */
const TOKEN_ELSEWHERE: Cell = [403, "forbidden", "This conversation token does not grant access to this resource."];
/** The operator API never verifies a conversation token: it is a credential the operator API does not take. */
const TOKEN_ON_OPERATOR_API: Cell = [
  401,
  "unauthorized",
  "The operator API takes OPERATOR_KEY or the API key; a conversation token does not open it.",
];
const DEV_SIGN_IN_OFF: Cell = [404, "not_found", "The development sign-in is on only with DEV_SIGN_IN=true and ALLOW_ANONYMOUS=true"];

/** The refusals of access: an answer with one of these codes is not "through". */
const ACCESS_CODES = new Set(["unauthorized", "forbidden", "conversation_not_found", "token_revoked", "not_found"]);

/** The request each route is sent (a body that would be accepted), and who gets through. */
interface RouteCase {
  init?: (id: string) => RequestInit;
  path?: (id: string) => string;
  cells: Partial<Record<Requester, Cell>>;
}

const json = (body: unknown, method = "POST"): RequestInit => ({
  method,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** A conversation's own route: its owner, the master key and its token get through; another user or an operator finds nothing. */
const own: RouteCase["cells"] = {
  owner: THROUGH,
  "another user": NOT_FOUND,
  "an operator": NOT_FOUND,
  "the master key": THROUGH,
  "its token": THROUGH,
};
/** What an operator does on a conversation: an operator and the master key; the owner, another user and the token are refused. */
const operatorOnly: RouteCase["cells"] = {
  owner: NO_ROLE,
  "another user": NO_ROLE,
  "an operator": THROUGH,
  "the master key": THROUGH,
  "its token": TOKEN_ON_OPERATOR_API,
  nobody: NOBODY_ON_OPERATOR_API,
};
/** Open to every good credential. */
const anyone: RouteCase["cells"] = {
  owner: THROUGH,
  "another user": THROUGH,
  "an operator": THROUGH,
  "the master key": THROUGH,
  "its token": THROUGH,
};

/** A signed-in user's own memory: every signed-in user (an operator too) reaches their own; no key or token reads one. */
const MEMORY_NOT_YOURS: Cell = [403, "forbidden", "A memory is its user's alone"];
const ownMemory: RouteCase["cells"] = {
  owner: THROUGH,
  "another user": THROUGH,
  "an operator": THROUGH,
  "the master key": MEMORY_NOT_YOURS,
  "its token": TOKEN_ELSEWHERE,
};
const aMemory = { path: () => "/v1/me/memory/no-such-memory", cells: ownMemory };

const ROUTES: Record<string, RouteCase> = {
  "GET /v1/openapi.json": { cells: anyone },
  "GET /v1/agents": { cells: anyone },
  "GET /v1/me": { cells: { ...anyone, "its token": TOKEN_ELSEWHERE } },
  "GET /v1/me/memory": { cells: ownMemory },
  "DELETE /v1/me/memory": { init: () => ({ method: "DELETE" }), cells: ownMemory },
  "PATCH /v1/me/memory/:memoryId": { ...aMemory, init: () => json({ text: "Corrected." }, "PATCH") },
  "DELETE /v1/me/memory/:memoryId": { ...aMemory, init: () => ({ method: "DELETE" }) },
  // The development sign-in is off where an identity provider is configured: no one gets a token from it.
  "POST /v1/dev/sign-in": {
    init: () => json({ name: "Eve" }),
    cells: {
      owner: DEV_SIGN_IN_OFF,
      "another user": DEV_SIGN_IN_OFF,
      "an operator": DEV_SIGN_IN_OFF,
      "the master key": DEV_SIGN_IN_OFF,
      "its token": TOKEN_ELSEWHERE,
    },
  },
  "GET /v1/operator/conversations": { cells: operatorOnly },
  "GET /v1/operator/conversations/:id": { cells: operatorOnly },
  // While no person holds the conversation, an operator is told so (409), not shown the customer's memory.
  "GET /v1/operator/conversations/:id/memory": { cells: operatorOnly },
  // While no person holds the conversation, even an operator finds no file (files-access.test.ts reads one a person holds).
  "GET /v1/operator/conversations/:id/files/:fileId": {
    path: (id) => `/v1/operator/conversations/${id}/files/no-such-file`,
    cells: operatorOnly,
  },
  // Lists are a signed-in user's own; the master key and a token have none.
  "GET /v1/conversations": {
    cells: {
      owner: THROUGH,
      "another user": THROUGH,
      "an operator": THROUGH,
      "the master key": [403, "forbidden", "Listing conversations is for a signed-in user: send your sign-in token."],
      "its token": TOKEN_ELSEWHERE,
    },
  },
  "POST /v1/conversations": {
    init: () => ({ method: "POST" }),
    cells: { owner: THROUGH, "another user": THROUGH, "an operator": THROUGH, "the master key": THROUGH, "its token": TOKEN_ELSEWHERE },
  },
  "GET /v1/conversations/:id": { cells: own },
  "PATCH /v1/conversations/:id": { init: () => json({ title: "Renamed" }, "PATCH"), cells: own },
  "DELETE /v1/conversations/:id": { init: () => ({ method: "DELETE" }), cells: own },
  "POST /v1/conversations/:id/messages": { init: () => json({ message: "one more [TAG]" }), cells: own },
  "POST /v1/conversations/:id/retry": { init: () => ({ method: "POST" }), cells: own },
  "POST /v1/conversations/:id/files": {
    path: (id) => `/v1/conversations/${id}/files?name=a.png`,
    init: () => ({
      method: "POST",
      headers: { "content-type": "image/png" },
      body: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10, 0]),
    }),
    cells: own,
  },
  // A file of the conversation's is read as the conversation is (test/configured-users/files-access.test.ts reads real ones).
  "GET /v1/conversations/:id/files/:fileId": { path: (id) => `/v1/conversations/${id}/files/no-such-file`, cells: own },
  "POST /v1/conversations/:id/approvals": { init: () => json({ decisions: [{ toolCallId: "none", approved: true }] }), cells: own },
  "POST /v1/conversations/:id/decisions": {
    init: () => json({ decisions: [{ toolCallId: "none", answer: { slot: "Mon" } }] }),
    cells: own,
  },
  "POST /v1/conversations/:id/cancel": { init: () => ({ method: "POST" }), cells: own },
  "GET /v1/conversations/:id/events": { init: () => ({ headers: { "last-event-id": "0" } }), cells: own },
  "GET /v1/conversations/:id/turns": { cells: own },
  "GET /v1/conversations/:id/turns/:turn/trace": { path: (id) => `/v1/conversations/${id}/turns/1/trace`, cells: own },
  "GET /v1/conversations/:id/turns/:turn/delegations": { path: (id) => `/v1/conversations/${id}/turns/1/delegations`, cells: own },
  "GET /v1/conversations/:id/schedule": { cells: own },
  "DELETE /v1/conversations/:id/schedule": { init: () => ({ method: "DELETE" }), cells: own },
  "DELETE /v1/conversations/:id/schedule/:entry": {
    path: (id) => `/v1/conversations/${id}/schedule/no-such-entry`,
    init: () => ({ method: "DELETE" }),
    cells: own,
  },
  "GET /v1/conversations/:id/socket": { init: () => ({ headers: { upgrade: "websocket" } }), cells: own },
  "POST /v1/conversations/:id/chat": {
    init: () => json({ id: "chat", messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "over chat [TAG]" }] }] }),
    cells: own,
  },
  // useChat's resume answers 204 where nothing runs, a conversation someone else holds included (its existence is not told).
  "GET /v1/conversations/:id/chat/stream": { cells: { ...own, "another user": [204, "", ""], "an operator": [204, "", ""] } },
  "GET /v1/conversations/:id/ui-messages": { cells: own },
  "POST /v1/conversations/:id/fork": { init: () => json({ afterTurn: 1 }), cells: own },
  "POST /v1/conversations/:id/tokens": {
    init: () => json({}),
    cells: { ...own, "its token": [403, "forbidden", "Issuing tokens needs the API key, not a conversation token."] },
  },
  // A2A's JSON-RPC answers 200 with an error in its body: someone else's context is the spec's task not found.
  "POST /v1/a2a": {
    init: (id) => ({
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: `${id}:1` } }),
    }),
    cells: {
      ...own,
      "another user": [200, "conversation_not_found", "No such task."],
      "an operator": [200, "conversation_not_found", "No such task."],
      "its token": TOKEN_ELSEWHERE,
    },
  },
  // AG-UI names the conversation in its body (threadId): someone else's thread is not found, as over HTTP.
  "POST /v1/ag-ui": {
    init: (id) => json({ threadId: id, runId: "r1", messages: [{ id: "m1", role: "user", content: "one more [TAG]" }] }),
    cells: { ...own, "its token": TOKEN_ELSEWHERE },
  },
  "POST /v1/conversations/:id/operator/messages": { init: () => json({ message: "An operator here." }), cells: operatorOnly },
  "POST /v1/conversations/:id/operator/approvals": {
    init: () => json({ decisions: [{ toolCallId: "none", approved: true }] }),
    cells: operatorOnly,
  },
  "POST /v1/conversations/:id/operator/decisions": {
    init: () => json({ decisions: [{ toolCallId: "none", answer: "an answer" }] }),
    cells: operatorOnly,
  },
  "POST /v1/conversations/:id/operator/handoff": { init: () => json({ to: "triage" }), cells: operatorOnly },
};

function servedRoutes(): string[] {
  const app = createApp(() => createSupportNetwork(), [a2a(), agUi()]);
  return [...new Set(app.routes.filter((r) => r.method !== "ALL" && r.path.startsWith("/v1/")).map((r) => `${r.method} ${r.path}`))];
}

/** What a refusal must leave as it was: the conversation's view, its schedule and its owner's list. */
async function snapshot(id: string, owner: string): Promise<string> {
  const master = { headers: { authorization: `Bearer ${MASTER}` } };
  const view = (await (await call(`/v1/conversations/${id}`, master)).json()) as Record<string, unknown>;
  const schedule = await (await call(`/v1/conversations/${id}/schedule`, master)).text();
  const list = await (await call("/v1/conversations", { headers: { authorization: `Bearer ${owner}` } })).text();
  const { lastTurnStorage: _storage, ...stable } = view;
  return JSON.stringify({ stable, schedule, list: JSON.parse(list).conversations.map((c: { id: string; updatedAt: number }) => c.id) });
}

describe("every route × every caller", () => {
  it("has a case for every route the app serves, and none it does not", () => {
    const served = servedRoutes();
    expect(
      served.filter((route) => !ROUTES[route]),
      "routes with no case: add one to ROUTES",
    ).toEqual([]);
    expect(Object.keys(ROUTES).filter((route) => !served.includes(route))).toEqual([]);
  });

  for (const route of Object.keys(ROUTES)) {
    it(route, async () => {
      const { init, path, cells } = ROUTES[route]!;
      const s = await scenario(Array.from({ length: 40 }, (_, i) => ({ text: `Answer ${i + 1}.` })));
      const owner = await mint(`owner-${s.id}`);
      const others: Record<Exclude<Requester, "owner" | "its token">, string | undefined> = {
        "another user": await mint(`other-${s.id}`),
        "an operator": await mint(`operator-${s.id}`, { roles: ["operator"] }),
        "the master key": MASTER,
        // The owner's claims, signed with another key than the published one its header names.
        "a forged token": await mint(`owner-${s.id}`, {}, "rs2"),
        nobody: undefined,
      };
      const [method, template] = route.split(" ") as [string, string];
      // Each caller meets a conversation of its own (so a DELETE let through leaves the next caller one to reach).
      for (const caller of CALLERS) {
        const expected = cellOf(cells, caller);
        const { id, token } = await conversationOf(owner, s.tag("hello"));
        const credential = caller === "owner" ? owner : caller === "its token" ? token : others[caller];
        const before = expected === THROUGH ? "" : await snapshot(id, owner);
        const base = init?.(id) ?? {};
        const body = typeof base.body === "string" ? base.body.replace("[TAG]", s.tag("")) : base.body;
        const res = await call(path ? path(id) : template.replace(":id", id), {
          ...base,
          method,
          ...(body === undefined ? {} : { body }),
          headers: { ...(base.headers as Record<string, string>), ...(credential ? { authorization: `Bearer ${credential}` } : {}) },
        });
        if (res.webSocket) {
          res.webSocket.accept();
          res.webSocket.close();
        }
        const text = res.status === 101 ? "" : await res.text();
        const code = /"code":"([a-z_]+)"/.exec(text)?.[1] ?? "";
        const where = `${caller}: ${route} → ${res.status} ${text.slice(0, 160)}`;
        if (expected === THROUGH) {
          expect(ACCESS_CODES.has(code), where).toBe(false);
          expect(res.status, where).toBeLessThan(500);
        } else {
          const [status, refusal, words] = expected;
          expect([res.status, code], where).toEqual([status, refusal]);
          expect(text, where).toContain(words);
          // RFC 6750 §3.1: a bare challenge when no credential came, `invalid_token` when a bad one did.
          const challenge = res.headers.get("www-authenticate");
          if (status !== 401) expect(challenge, where).toBeNull();
          else if (caller === "nobody") expect(challenge, where).toBe('Bearer realm="handoff-runtime"');
          else expect(challenge, where).toContain(`error="invalid_token", error_description="${words}"`);
          expect(await snapshot(id, owner), `${where}: the conversation changed`).toBe(before);
        }
      }
    });
  }
});

/** A conversation `owner` created, with one turn answered. */
async function conversationOf(owner: string, message: string): Promise<{ id: string; token: string }> {
  const auth = { authorization: `Bearer ${owner}` };
  const created = (await (await call("/v1/conversations", { method: "POST", headers: auth })).json()) as { id: string; token: string };
  const first = await call(`/v1/conversations/${created.id}/messages`, {
    ...json({ message }),
    headers: { "content-type": "application/json", ...auth },
  });
  await first.text();
  return created;
}

function cellOf(cells: RouteCase["cells"], caller: Requester): Cell {
  // A forged token and no credential are refused everywhere, before any route is reached.
  return cells[caller] ?? (caller === "a forged token" ? FORGED : NOBODY);
}
