/**
 * One admission: every way a turn starts (a message over HTTP, the AI SDK chat route, retry, an
 * edit, decisions over HTTP and through the chat route, a socket's message and decision frames,
 * and A2A's SendMessage with a message or with decisions) × every refusal (over the daily budget, over the per-client limit, 16 streams
 * open, too long, a turn running, someone else's conversation) gets the same code, with the same details, over HTTP and
 * over the socket; and a refused request leaves the conversation as it was. The ways in no client starts (the alarm's turns, a
 * person's acts) are let past what they are meant to pass.
 */
import { importJWK, type JWK, SignJWT } from "jose";
import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { describe, expect, inject, it, vi } from "vitest";
import { inboxOf } from "../../src/inbox/inbox.ts";
import { scenario } from "../support/scenario.ts";
import { call, dueFollowUp } from "../support/worker.ts";

const { keys } = inject("jwks");
const BUDGET = 1_000_000;
const LONG = "y".repeat(8_001);

async function mint(user: string): Promise<string> {
  const jwk = keys.rs1 as JWK;
  const payload = { sub: user, iss: "https://idp.test", aud: "handoff-chat" };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: jwk.alg!, kid: "rs1" })
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(await importJWK(jwk, jwk.alg));
}

const post = (credential: string, body: unknown): RequestInit => ({
  method: "POST",
  headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
  body: JSON.stringify(body),
});

type Refusal = "over budget" | "over the limit" | "too many streams" | "too long" | "running" | "someone else's";
const EXPECTED: Record<Refusal, [number, string]> = {
  "over budget": [429, "user_budget_exhausted"],
  "over the limit": [429, "rate_limited"],
  "too many streams": [429, "too_many_streams"],
  "too long": [413, "message_too_long"],
  running: [409, "run_in_progress"],
  "someone else's": [404, "conversation_not_found"],
};

/**
 * A conversation of its own user, after one turn that completed (or, `suspended`, that waits on the refund's approval); `after`: the
 * model's answers from then on.
 */
async function conversation(suspended: boolean, after?: Array<{ text: string; holdAfter?: number }>) {
  const refund = [
    { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "double charge" }) }] },
    { toolCalls: [{ id: "ref", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
  ];
  // A turn that runs until released (the `running` refusal), then answers for anything admitted by mistake.
  const s = await scenario([
    ...(suspended ? refund : [{ text: "Hello." }]),
    ...(after ?? [{ text: "Held.", holdAfter: 1 }, { text: "Again." }]),
  ]);
  const user = `u-${crypto.randomUUID()}`;
  const credential = await mint(user);
  const created = (await (
    await call("/v1/conversations", { method: "POST", headers: { authorization: `Bearer ${credential}` } })
  ).json()) as {
    id: string;
  };
  const first = await call(`/v1/conversations/${created.id}/messages`, post(credential, { message: s.tag("refund A1001") }));
  await first.text();
  return { s, user, credential, id: created.id, text: (t: string) => s.tag(t) };
}

type Conv = Awaited<ReturnType<typeof conversation>>;

/** A way in: what it sends (`text` is the message it carries, when it carries one). */
interface Way {
  name: string;
  suspended: boolean;
  carriesText: boolean;
  /** Over HTTP: the response. Over a socket: the frame to send. */
  http?: (c: Conv, credential: string, text: string) => Promise<Response>;
  frame?: (text: string) => unknown;
  /** Over A2A: SendMessage's params (`turn`: the conversation's latest); the refusal is a JSON-RPC error with this API's code and details. */
  a2a?: (c: Conv, text: string, turn: number) => unknown;
}

const WAYS: Way[] = [
  {
    name: "POST …/messages",
    suspended: false,
    carriesText: true,
    http: (c, cr, t) => call(`/v1/conversations/${c.id}/messages`, post(cr, { message: t })),
  },
  {
    name: "POST …/chat",
    suspended: false,
    carriesText: true,
    http: (c, cr, t) =>
      call(`/v1/conversations/${c.id}/chat`, post(cr, { messages: [{ id: "m9", role: "user", parts: [{ type: "text", text: t }] }] })),
  },
  {
    name: "POST …/retry",
    suspended: false,
    carriesText: false,
    http: (c, cr) => call(`/v1/conversations/${c.id}/retry`, { method: "POST", headers: { authorization: `Bearer ${cr}` } }),
  },
  {
    name: "POST …/retry (an edit)",
    suspended: false,
    carriesText: true,
    http: (c, cr, t) => call(`/v1/conversations/${c.id}/retry`, post(cr, { message: t })),
  },
  {
    name: "POST …/approvals",
    suspended: true,
    carriesText: false,
    http: (c, cr) => call(`/v1/conversations/${c.id}/approvals`, post(cr, { decisions: [{ toolCallId: "ref", approved: true }] })),
  },
  {
    name: "POST …/chat (approval responses)",
    suspended: true,
    carriesText: false,
    http: (c, cr) =>
      call(
        `/v1/conversations/${c.id}/chat`,
        post(cr, {
          messages: [
            { role: "assistant", parts: [{ type: "tool-refund", state: "approval-responded", approval: { id: "ref", approved: true } }] },
          ],
        }),
      ),
  },
  {
    name: "A2A SendMessage",
    suspended: false,
    carriesText: true,
    a2a: (c, t) => ({ message: { messageId: "m1", role: "ROLE_USER", contextId: c.id, parts: [{ text: t }] } }),
  },
  {
    name: "A2A SendMessage with decisions",
    suspended: true,
    carriesText: false,
    // The task is the latest turn: the one waiting, or the retry running in its place.
    a2a: (c, _text, turn) => ({
      message: {
        messageId: "m2",
        role: "ROLE_USER",
        taskId: `${c.id}:${turn}`,
        parts: [{ data: { decisions: [{ toolCallId: "ref", approved: true }] } }],
      },
    }),
  },
  {
    name: "AG-UI run",
    suspended: false,
    carriesText: true,
    http: (c, cr, t) => call("/v1/ag-ui", post(cr, { threadId: c.id, runId: "r1", messages: [{ id: "m1", role: "user", content: t }] })),
  },
  {
    name: "AG-UI resume",
    suspended: true,
    carriesText: false,
    http: (c, cr) =>
      call(
        "/v1/ag-ui",
        post(cr, {
          threadId: c.id,
          runId: "r2",
          messages: [],
          resume: [{ interruptId: "ref", status: "resolved", payload: { approved: true } }],
        }),
      ),
  },
  { name: "socket message frame", suspended: false, carriesText: true, frame: (t) => ({ type: "message", message: t }) },
  {
    name: "socket decision frame",
    suspended: true,
    carriesText: false,
    frame: () => ({ type: "decision", decisions: [{ toolCallId: "ref", approved: true }] }),
  },
];

/** Spends the per-client limit of `key` (a user's, an address's) for this window of the binding. */
async function spendLimit(key: string): Promise<void> {
  // The binding's windows are epoch minutes: spend this one's 600 turns with time to spare.
  if (Date.now() % 60_000 > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 100));
  for (let spent = 0; spent < 700; spent++) if (!(await env.CLIENT_LIMITER!.limit({ key })).success) return;
}

/** The alarm's turns have no client: were they limited, it would be under this key. */
const ALARM_CLIENT = "address:local";

/** Streams of the conversation's events opened and never read: each holds one of the conversation's 16 until it is closed. */
const unread: Response[] = [];

async function holdStreams(c: Conv): Promise<void> {
  for (let i = 0; i < 16; i++) {
    const res = await call(`/v1/conversations/${c.id}/events?after=0`, { headers: { authorization: `Bearer ${c.credential}` } });
    expect(res.status).toBe(200);
    unread.push(res);
  }
}

const closeStreams = () => Promise.all(unread.splice(0).map((res) => res.body?.cancel()));

/** Puts the conversation in the refusal's way; the credential the way in is tried with. */
async function arrange(c: Conv, refusal: Refusal): Promise<string> {
  if (refusal === "over budget") {
    const entry = {
      id: `elsewhere-${c.user}`,
      title: "t",
      createdAt: 0,
      updatedAt: Date.now(),
      holder: "triage",
      status: "idle" as const,
      snippet: "",
      archived: false,
    };
    await (await inboxOf(env, c.user))!.record(entry, BUDGET);
  }
  if (refusal === "over the limit") await spendLimit(`user:${c.user}`);
  if (refusal === "too many streams") await holdStreams(c);
  if (refusal === "running") {
    // A retry that holds inside its model call: the turn runs until released.
    const held = await call(`/v1/conversations/${c.id}/retry`, { method: "POST", headers: { authorization: `Bearer ${c.credential}` } });
    const reader = held.body!.getReader();
    await reader.read();
    void reader.cancel();
  }
  return refusal === "someone else's" ? mint(`other-${crypto.randomUUID()}`) : c.credential;
}

/** What the conversation holds, as its owner sees it: compared before and after a refusal. */
async function snapshot(c: Conv) {
  const view = (await (await call(`/v1/conversations/${c.id}`, { headers: { authorization: `Bearer ${c.credential}` } })).json()) as {
    messages: unknown[];
    pendingApprovals: unknown[];
    activeAgent: string;
    turn: number;
  };
  return { messages: view.messages.length, pending: view.pendingApprovals.length, holder: view.activeAgent, turn: view.turn };
}

/** A way in over the socket: the upgrade's refusal, or the error frame its frame is answered with. */
async function overSocket(c: Conv, credential: string, frame: unknown): Promise<{ status: number; code: string; details?: unknown }> {
  const res = await call(`/v1/conversations/${c.id}/socket`, { headers: { upgrade: "websocket", authorization: `Bearer ${credential}` } });
  if (res.status !== 101) {
    const body = (await res.json()) as { error: { code: string; details?: unknown } };
    return { status: res.status, code: body.error.code, details: body.error.details };
  }
  const ws = res.webSocket!;
  ws.accept();
  const answer = new Promise<{ code: string; details?: unknown }>((resolve) =>
    ws.addEventListener("message", (event) => {
      const parsed = JSON.parse(event.data as string) as { type: string; data: { code: string; details?: unknown } };
      if (parsed.type === "error") resolve(parsed.data);
      if (parsed.type === "accepted") resolve({ code: "accepted" });
    }),
  );
  ws.send(JSON.stringify(frame));
  const data = await answer;
  ws.close();
  return { status: 0, ...data };
}

/** What each refusal says (the HTTP API's message may go on with what to do next). */
function wordsOf(refusal: Refusal, c: Conv, details: unknown): string {
  const { spent, resetsAt } = (details ?? {}) as { spent?: number; resetsAt?: string };
  return {
    "over budget": `You have used ${spent} of your ${BUDGET} tokens for today (UTC); new turns are accepted again from ${resetsAt}.`,
    "over the limit": "Too many new turns from this client; try again in a minute.",
    "too many streams": "This conversation already has 16 open streams; close one, or try again later.",
    "too long": `The message is ${LONG.length} characters; the limit is 8000.`,
    running: "A run is in progress for this conversation; wait for it to end, or cancel it.",
    "someone else's": `No conversation '${c.id}'.`,
  }[refusal];
}

describe("every way a turn starts, refused the same way", () => {
  const refusals = Object.keys(EXPECTED) as Refusal[];
  for (const way of WAYS)
    for (const refusal of refusals) {
      if (refusal === "too long" && !way.carriesText) continue;
      // A socket's turn opens no stream: the stream cap does not hold it back ("a socket's turn is not held to the stream cap" below).
      if (refusal === "too many streams" && way.frame) continue;
      it(`${way.name}: ${refusal}`, async () => {
        const c = await conversation(way.suspended);
        const credential = await arrange(c, refusal);
        const before = await snapshot(c);
        const text = refusal === "too long" ? LONG : c.text("one more");
        const [status, code] = EXPECTED[refusal];
        let details: unknown;
        if (way.a2a) {
          const res = await call("/v1/a2a", {
            ...post(credential, { jsonrpc: "2.0", id: 1, method: "SendMessage", params: way.a2a(c, text, before.turn) }),
            headers: { authorization: `Bearer ${credential}`, "content-type": "application/json", "a2a-version": "1.0" },
          });
          const body = (await res.json()) as { error: { code: number; data: { code: string; details?: unknown } } };
          // Someone else's context is the spec's task not found; every other refusal an invalid request.
          expect([res.status, body.error.code, body.error.data.code]).toEqual([200, status === 404 ? -32001 : -32600, code]);
          details = body.error.data.details;
        } else if (way.http) {
          const res = await way.http(c, credential, text);
          const body = (await res.json()) as { error: { code: string; message: string; details?: unknown } };
          expect([res.status, body.error.code]).toEqual([status, code]);
          expect(body.error.message).toContain(wordsOf(refusal, c, body.error.details));
          details = body.error.details;
        } else {
          const answered = await overSocket(c, credential, way.frame!(text));
          // Someone else's conversation: the socket is not even opened, with the HTTP refusal; else an error frame.
          expect(answered.code).toBe(code);
          if (refusal === "someone else's") expect(answered.status).toBe(404);
          details = answered.details;
        }
        if (refusal === "over budget") {
          expect(details).toMatchObject({ budget: BUDGET, resetsAt: expect.any(String), retryAfter: expect.any(Number) });
          expect((details as { spent: number }).spent).toBeGreaterThanOrEqual(BUDGET);
        }
        if (refusal === "over the limit") expect(details).toEqual({ retryAfter: 60 });
        if (refusal === "too many streams") expect(details).toEqual({ retryAfter: 5 });
        if (refusal === "too long") expect(details).toEqual({ length: LONG.length, limit: 8_000 });
        await c.s.release();
        await closeStreams();
        if (refusal !== "running") expect(await snapshot(c)).toEqual(before);
      });
    }
});

describe("the checks' order and edges", () => {
  const send = (c: Conv, credential: string, message: string) => call(`/v1/conversations/${c.id}/messages`, post(credential, { message }));
  const codeOf = async (res: Response) => [res.status, ((await res.json()) as { error: { code: string } }).error.code];

  it("answers who may come in before anything about the message, and the conversation's own checks before the budget", async () => {
    const c = await conversation(false);
    expect(await codeOf(await send(c, await mint(`other-${crypto.randomUUID()}`), LONG))).toEqual([404, "conversation_not_found"]);
    await arrange(c, "over budget");
    expect(await codeOf(await send(c, c.credential, LONG))).toEqual([413, "message_too_long"]);
    await c.s.release();
  });

  it("takes a message of exactly MAX_MESSAGE_CHARS, and refuses a turn once exactly the day's budget is spent", async () => {
    const c = await conversation(false);
    const taken = await send(c, c.credential, "z".repeat(8_000));
    expect(taken.status).toBe(200);
    await c.s.release();
    await taken.text();
    const inbox = (await inboxOf(env, c.user))!;
    const spent = await inbox.tokensToday();
    const entry = { id: `elsewhere-${c.user}`, title: "t", createdAt: 0, updatedAt: Date.now(), holder: "triage", status: "idle" as const };
    await inbox.record({ ...entry, snippet: "", archived: false }, BUDGET - spent);
    expect(await inbox.tokensToday()).toBe(BUDGET);
    expect(await codeOf(await send(c, c.credential, c.text("one more")))).toEqual([429, "user_budget_exhausted"]);
  });
});

describe("a socket's turn", () => {
  it("is not held to the stream cap, and opens no stream: with 16 open, the frame's turn runs, and an HTTP turn after it is still refused", async () => {
    const c = await conversation(false, [{ text: "Over the socket." }]);
    await holdStreams(c);
    const before = await snapshot(c);
    expect(await overSocket(c, c.credential, { type: "message", message: c.text("over the socket") })).toEqual({
      status: 0,
      code: "accepted",
    });
    await c.s.release();
    // The turn ran to its end, stored, while the 16 streams stayed open and no 17th was taken by it.
    await vi.waitFor(async () => {
      const view = (await (await call(`/v1/conversations/${c.id}`, { headers: { authorization: `Bearer ${c.credential}` } })).json()) as {
        status: string;
        turn: number;
      };
      expect(view.turn).toBe(before.turn + 1);
      expect(view.status).toBe("completed");
    });
    const after = await call(`/v1/conversations/${c.id}/messages`, post(c.credential, { message: c.text("over HTTP") }));
    expect([after.status, ((await after.json()) as { error: { code: string } }).error.code]).toEqual([429, "too_many_streams"]);
    await closeStreams();
  });
});

describe("a person's turn", () => {
  it("is held to none of the owner's daily budget, the person's per-client limit and the stream cap: a person answering calls no model", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "asked for a person" }) }] },
    ]);
    const user = `u-${crypto.randomUUID()}`;
    const credential = await mint(user);
    const { id } = (await (
      await call("/v1/conversations", { method: "POST", headers: { authorization: `Bearer ${credential}` } })
    ).json()) as {
      id: string;
    };
    await (await call(`/v1/conversations/${id}/messages`, post(credential, { message: s.tag("a person please") }))).text();
    const c = { s, user, credential, id, text: (t: string) => s.tag(t) };
    await arrange(c, "over budget");
    // An operator is limited as a client by their address (a user's id is only a signed-in user's key).
    const address = `2001:db8::${crypto.randomUUID().slice(0, 4)}`;
    await spendLimit(`address:${address}`);
    await holdStreams(c);
    const jwk = keys.rs1 as JWK;
    const operator = await new SignJWT({
      sub: `op-${user}`,
      name: "Sam",
      roles: ["operator"],
      iss: "https://idp.test",
      aud: "handoff-chat",
    })
      .setProtectedHeader({ alg: jwk.alg!, kid: "rs1" })
      .setExpirationTime("10m")
      .sign(await importJWK(jwk, jwk.alg));
    const asOperator = (body: unknown): RequestInit => {
      const init = post(operator, body);
      return { ...init, headers: { ...(init.headers as Record<string, string>), "cf-connecting-ip": address } };
    };
    const answered = await call(`/v1/conversations/${id}/operator/messages`, asOperator({ text: "Sam here, looking into it." }));
    expect(answered.status).toBe(200);
    await answered.text();
    const back = await call(`/v1/conversations/${id}/operator/handoff`, asOperator({ to: "triage", note: "looked into it" }));
    expect(await back.json()).toEqual({ activeAgent: "triage" });
    // The owner's own next message is still over the budget.
    const own = await call(`/v1/conversations/${id}/messages`, post(credential, { message: "thanks" }));
    expect([own.status, ((await own.json()) as { error: { code: string } }).error.code]).toEqual([429, "user_budget_exhausted"]);
    await closeStreams();
  });
});

describe("the alarm's turn, which has no client", () => {
  it("passes the same admission: its owner over budget, a due follow-up runs no turn and waits for the next UTC day", async () => {
    const c = await conversation(false);
    await arrange(c, "over budget");
    const stub = await dueFollowUp(c.id, "triage");
    const before = await snapshot(c);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await snapshot(c)).toEqual(before);
    const { entries } = (await (
      await call(`/v1/conversations/${c.id}/schedule`, { headers: { authorization: `Bearer ${c.credential}` } })
    ).json()) as { entries: Array<{ kind: string; dueAt: string }> };
    const midnight = new Date(new Date().toISOString().slice(0, 10));
    midnight.setUTCDate(midnight.getUTCDate() + 1);
    expect(entries).toHaveLength(1);
    expect(Math.abs(Date.parse(entries[0]!.dueAt) - midnight.getTime())).toBeLessThan(5_000);
    await c.s.release();
  });
});

describe("the alarm's turns, past what holds a client back", () => {
  it("runs a due follow-up with the alarm's client over its limit and 16 streams open: only the owner's budget holds it", async () => {
    const c = await conversation(false, [{ text: "Checking in, as promised." }]);
    const stub = await dueFollowUp(c.id, "triage");
    await spendLimit(ALARM_CLIENT);
    await holdStreams(c);
    const before = await snapshot(c);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const view = (await (await call(`/v1/conversations/${c.id}`, { headers: { authorization: `Bearer ${c.credential}` } })).json()) as {
      messages: Array<{ role: string; content: string | null }>;
      turn: number;
    };
    expect(view.turn).toBe(before.turn + 1);
    expect(view.messages.at(-1)).toMatchObject({ role: "assistant", content: "Checking in, as promised." });
    await closeStreams();
  });

  it("declines a call past its deadline and resumes whatever holds turns back: the owner over budget, the alarm's client over its limit, 16 streams open", async () => {
    const c = await conversation(true, [{ text: "That refund waited too long; ask me again." }]);
    const stub = env.CONVERSATIONS.getByName(c.id);
    // This Worker sets no deadline on approvals: the call's is written as passed, with its entry, as time would.
    await runInDurableObject(stub, async (_instance, state) => {
      const past = Date.now() - 1;
      // The turn's wait is its own run's (the ledger's root, path '').
      const row = state.storage.sql.exec<{ state: string }>(`SELECT state FROM runs WHERE path = '' AND decisions IS NOT NULL`).one();
      const data = JSON.parse(row.state) as { suspension: { pending: Array<{ expiresAt?: string }> } };
      for (const pending of data.suspension.pending) pending.expiresAt = new Date(past).toISOString();
      state.storage.sql.exec(`UPDATE runs SET state = ? WHERE path = '' AND decisions IS NOT NULL`, JSON.stringify(data));
      new ConversationStore(state.storage).schedule.add({ kind: "request-expiry", dueAt: past });
      // Set an hour on, the alarm never fires by itself while the test prepares: runDurableObjectAlarm runs it.
      await state.storage.setAlarm(Date.now() + 3_600_000);
    });
    await evictDurableObject(stub);
    await arrange(c, "over budget");
    await spendLimit(ALARM_CLIENT);
    await holdStreams(c);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const view = (await (await call(`/v1/conversations/${c.id}`, { headers: { authorization: `Bearer ${c.credential}` } })).json()) as {
      messages: Array<{ role: string; toolCallId?: string; content: string | null; isError?: boolean }>;
      pendingApprovals: unknown[];
    };
    expect(view.pendingApprovals).toEqual([]);
    expect(view.messages.find((m) => m.role === "tool" && m.toolCallId === "ref")).toMatchObject({
      isError: true,
      content: expect.stringMatching(/expired and did not run/),
    });
    expect(view.messages.at(-1)).toMatchObject({ role: "assistant", content: "That refund waited too long; ask me again." });
    await closeStreams();
  });
});
