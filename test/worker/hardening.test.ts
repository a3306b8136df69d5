import { env } from "cloudflare:workers";
import { decideTurn } from "../support/waits.ts";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import { INTERRUPTED_CALL } from "../../src/runtime/wait/suspension.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { MAX_STREAMS } from "../../src/conversation/index.ts";
import { parseSse, readSse } from "../support/sse.ts";
import { call, chat, postMessage, scenario, stored } from "../support/worker.ts";

const API_KEY = "test-master-key-0123456789";
const keyed = { ...env, API_KEY, ALLOW_ANONYMOUS: "false" };
const json = { "content-type": "application/json" };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const args = (value: unknown) => JSON.stringify(value);

function request(path: string, init: RequestInit = {}): Promise<Response> {
  return Promise.resolve(worker.request(`https://chat.test${path}`, init, keyed));
}

async function errorOf(res: Response): Promise<[number, string]> {
  return [res.status, ((await res.json()) as { error: { code: string } }).error.code];
}

async function created(): Promise<{ id: string; token: string }> {
  return (await (await request("/v1/conversations", { method: "POST", headers: bearer(API_KEY) })).json()) as { id: string; token: string };
}

describe("deleting a conversation revokes its tokens", () => {
  it("a deleted conversation's token can neither talk, nor recreate it, nor read what the master key creates under its id", async () => {
    const s = await scenario([{ text: "first life" }, { text: "second life" }]);
    const { id, token } = await created();
    const talk = (t: string, message: string) =>
      request(`/v1/conversations/${id}/messages`, { method: "POST", headers: { ...json, ...bearer(t) }, body: args({ message }) });
    expect(parseSse(await (await talk(token, s.tag("hi"))).text()).at(-1)).toMatchObject({ type: "done" });
    expect((await request(`/v1/conversations/${id}`, { method: "DELETE", headers: bearer(token) })).status).toBe(204);

    const revoked = await talk(token, "hello again");
    expect(revoked.headers.get("www-authenticate")).toMatch(/invalid_token/);
    expect(await revoked.clone().json()).toMatchObject({
      error: {
        message: "This conversation token was revoked: the conversation was deleted or its tokens were rotated. Ask for a new token.",
      },
    });
    expect(await errorOf(revoked)).toEqual([401, "token_revoked"]);
    expect(await errorOf(await request(`/v1/conversations/${id}`, { headers: bearer(API_KEY) }))).toEqual([404, "conversation_not_found"]);

    // The master key recreates the id; the old token passes for nothing in it.
    expect(parseSse(await (await talk(API_KEY, s.tag("new owner"))).text()).at(-1)).toMatchObject({ type: "done" });
    for (const path of ["", "/events?after=0", "/chat/stream"]) {
      expect(await errorOf(await request(`/v1/conversations/${id}${path}`, { headers: bearer(token) }))).toEqual([401, "token_revoked"]);
    }
    expect(await errorOf(await request(`/v1/conversations/${id}`, { method: "DELETE", headers: bearer(token) }))).toEqual([
      401,
      "token_revoked",
    ]);
    const fresh = (await (await request(`/v1/conversations/${id}/tokens`, { method: "POST", headers: bearer(API_KEY) })).json()) as {
      token: string;
    };
    expect(fresh.token).not.toBe(token);
    expect((await request(`/v1/conversations/${id}`, { headers: bearer(fresh.token) })).status).toBe(200);
  });

  it("rotating revokes every token issued before; only the master key issues tokens", async () => {
    const { id, token } = await created();
    expect(await errorOf(await request(`/v1/conversations/${id}/tokens`, { method: "POST", headers: bearer(token) }))).toEqual([
      403,
      "forbidden",
    ]);
    const same = (await (await request(`/v1/conversations/${id}/tokens`, { method: "POST", headers: bearer(API_KEY) })).json()) as {
      token: string;
    };
    expect((await request(`/v1/conversations/${id}`, { headers: bearer(same.token) })).status).toBe(200);
    expect((await request(`/v1/conversations/${id}`, { headers: bearer(token) })).status).toBe(200);
    const rotated = await request(`/v1/conversations/${id}/tokens`, {
      method: "POST",
      headers: { ...json, ...bearer(API_KEY) },
      body: args({ rotate: true }),
    });
    const { token: next } = (await rotated.json()) as { token: string };
    for (const old of [token, same.token])
      expect(await errorOf(await request(`/v1/conversations/${id}`, { headers: bearer(old) }))).toEqual([401, "token_revoked"]);
    expect((await request(`/v1/conversations/${id}`, { headers: bearer(next) })).status).toBe(200);
    expect(await errorOf(await request(`/v1/conversations/never-made/tokens`, { method: "POST", headers: bearer(API_KEY) }))).toEqual([
      404,
      "conversation_not_found",
    ]);
  });

  it("a token never creates a conversation", async () => {
    const { id, token } = await created();
    await request(`/v1/conversations/${id}`, { method: "DELETE", headers: bearer(API_KEY) });
    await request(`/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: { ...json, ...bearer(token) },
      body: args({ message: "recreate?" }),
    });
    expect((await request(`/v1/conversations/${id}`, { headers: bearer(API_KEY) })).status).toBe(404);
  });

  it("a malformed escape in the path with a token is a 400, not a 500", async () => {
    const { token } = await created();
    for (const path of ["/v1/conversations/%ZZ", "/v1/conversations/%E0%A4%A/events", "/v1/conversations/a%2Fb"]) {
      expect(await errorOf(await request(path, { headers: bearer(token) }))).toEqual([400, "invalid_conversation_id"]);
    }
  });
});

describe("event cursors", () => {
  it("answers 204 at or past the end of a finished turn, 409 past every id, and reads only decimal cursors", async () => {
    const s = await scenario([{ text: "done here" }]);
    const events = await chat(s.conversationId, s.tag("hi"));
    const last = events.at(-1)!.id;
    const events_ = (cursor: string, header = false) =>
      call(
        `/v1/conversations/${s.conversationId}/events${header ? "" : `?after=${encodeURIComponent(cursor)}`}`,
        header ? { headers: { "last-event-id": cursor } } : {},
      );
    expect((await events_(String(last))).status).toBe(204);
    expect((await events_(String(last), true)).status).toBe(204);
    expect(parseSse(await (await events_(String(last - 1))).text()).map((e) => e.id)).toEqual([last]);
    const stale = await events_(String(last + 5));
    expect([stale.status, await stale.json()]).toEqual([
      409,
      {
        error: {
          code: "event_id_unknown",
          message: `Event ${last + 5} is past this conversation's last event (${last}); it may belong to a deleted conversation of the same id. Reconnect without Last-Event-ID.`,
          details: { lastEventId: last },
        },
      },
    ]);
    for (const bad of ["0x10", "1e1", " 5 ", "5.0", "-1", "+3", "99999999999999999"]) {
      expect(await errorOf(await events_(bad)), bad).toEqual([400, "invalid_request"]);
    }
    expect(await (await events_("0x10")).json()).toMatchObject({
      error: { message: "Last-Event-ID (or ?after=) must be an event id in decimal digits, such as 42." },
    });
    const fresh = await scenario([]);
    await call(`/v1/conversations`, { method: "POST" });
    expect((await call(`/v1/conversations/${fresh.conversationId}/events`)).status).toBe(404);
  });

  it("a cursor at or past the end during a live run still ends with the turn's terminal event", async () => {
    const s = await scenario([{ text: "slowly streamed answer", holdAfter: 2 }]);
    const res = await postMessage(s.conversationId, s.tag("hi"));
    const reader = readSse(res.body!);
    let seen = 0;
    for await (const event of reader) {
      seen = event.id;
      if (event.type === "text-delta") break;
    }
    const ahead = call(`/v1/conversations/${s.conversationId}/events`, { headers: { "last-event-id": String(seen + 1_000) } });
    await s.release();
    const late = parseSse(await (await ahead).text());
    expect(late.at(-1)).toMatchObject({ type: "done", text: "slowly streamed answer" });
    for await (const _ of reader);
  });
});

describe("bounded readers", () => {
  it(`refuses a stream past ${MAX_STREAMS} open on one conversation with 429, and takes one again once a stream closes`, async () => {
    const s = await scenario([{ text: "held answer", holdAfter: 2 }]);
    const opened = [await postMessage(s.conversationId, s.tag("hi"))];
    for (let i = 1; i < MAX_STREAMS; i++) opened.push(await call(`/v1/conversations/${s.conversationId}/events?after=0`));
    expect(opened.map((r) => r.status)).toEqual(opened.map(() => 200));
    const refused = await call(`/v1/conversations/${s.conversationId}/events?after=0`);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(await errorOf(refused)).toEqual([429, "too_many_streams"]);
    await s.release();
    const ends = await Promise.all(opened.map(async (r) => parseSse(await r.text()).at(-1)));
    expect(ends.every((e) => e?.type === "done")).toBe(true);
    expect((await call(`/v1/conversations/${s.conversationId}/events?after=0`)).status).toBe(200);
  });
});

describe("bad input gets bounded errors", () => {
  it("lists at most 10 problems of a large invalid body, with a count of the rest", async () => {
    const decisions = Array.from({ length: 1_200 }, (_, i) => ({ toolCallId: `c${i}`, approved: "yes" }));
    const res = await call(`/v1/conversations/any-id/approvals`, { method: "POST", headers: json, body: args({ decisions }) });
    const text = await res.text();
    expect(res.status).toBe(400);
    expect(text.length).toBeLessThan(3_000);
    expect(text).toContain("and 1190 more problems");
  });

  it("lists exactly 10 problems with no count of the rest", async () => {
    const decisions = Array.from({ length: 10 }, (_, i) => ({ toolCallId: `c${i}`, approved: "yes" }));
    const res = await call(`/v1/conversations/any-id/approvals`, { method: "POST", headers: json, body: args({ decisions }) });
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, error.code]).toEqual([400, "invalid_request"]);
    expect(error.message.match(/✖/g)).toHaveLength(10);
    expect(error.message).not.toContain("more problems");
  });

  it("keeps a message of 2,000 characters whole and cuts a longer one there, saying so", async () => {
    // One problem, an unknown key quoted in 22 characters of its own: the message is the key's length and 22.
    const messageFor = async (keyLength: number) => {
      const body = { message: "hi", ["k".repeat(keyLength)]: 1 };
      const res = await call(`/v1/conversations/any-id/messages`, { method: "POST", headers: json, body: args(body) });
      expect(res.status).toBe(400);
      return ((await res.json()) as { error: { message: string } }).error.message;
    };
    const whole = await messageFor(1_978);
    expect(whole).toBe(`✖ Unrecognized key: "${"k".repeat(1_978)}"`);
    const cut = await messageFor(1_979);
    expect(cut).toBe(`✖ Unrecognized key: "${"k".repeat(1_979)}… (cut: fix the problems above first)`);
  });
});

describe("bodies that may be left out", () => {
  it("are left out by an empty body sent with Content-Length: 0, as `curl -X POST` sends one", async () => {
    const empty = (): RequestInit => ({ method: "POST", headers: { "content-length": "0" }, body: "" });
    const created = await call("/v1/conversations", empty());
    expect(created.status).toBe(201);
    const s = await scenario([{ text: "First." }, { text: "Again." }]);
    await chat(s.conversationId, s.tag("hello"));
    const retried = await call(`/v1/conversations/${s.conversationId}/retry`, empty());
    expect(retried.status).toBe(200);
    expect(parseSse(await retried.text()).at(-1)).toMatchObject({ type: "done", text: "Again." });
  });
});

describe("durability order", () => {
  it("stores the user's message before the model is asked", async () => {
    const s = await scenario([{ text: "an answer held at the provider", holdAfter: 1 }]);
    const res = await postMessage(s.conversationId, s.tag("remember me"));
    const reader = readSse(res.body!);
    for await (const event of reader) if (event.type === "step-start") break;
    for (let i = 0; i < 50 && (await s.sent()).requests.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const during = await stored(s.conversationId);
    expect(during.status).toBe("running");
    expect(during.messages).toEqual([{ role: "user", content: s.tag("remember me") }]);
    await s.release();
    for await (const _ of reader);
  });
});

describe("a crash while an approved tool runs", () => {
  it("settles the approved call as interrupted on the next start, keeps the step whole, and takes messages again", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: args({ reason: "double charge" }) }] },
      {
        toolCalls: [
          { id: "look", name: "lookup_order", arguments: args({ orderId: "A1001" }) },
          { id: "ref", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 129 }) },
        ],
      },
      { text: "Let me look the order up to see whether the refund went through." },
    ]);
    await chat(s.conversationId, s.tag("charged twice for A1001"));
    // What the resumed leg has stored when the process dies inside the approved refund.
    await runInDurableObject(env.CONVERSATIONS.getByName(s.conversationId), (_instance, state) => {
      decideTurn(new ConversationStore(state.storage), [{ toolCallId: "ref", approved: true }], true);
    });
    await evictDurableObject(env.CONVERSATIONS.getByName(s.conversationId));

    const after = await stored(s.conversationId);
    expect(after).toMatchObject({ status: "failed", activeAgent: "billing", pendingApprovals: [] });
    expect(after.messages.at(-1)).toMatchObject({ role: "tool", toolCallId: "ref", isError: true, content: INTERRUPTED_CALL });
    const replay = parseSse(await (await call(`/v1/conversations/${s.conversationId}/events?after=0`)).text());
    expect(replay.slice(-2)).toMatchObject([
      { type: "tool-result", toolCallId: "ref", isError: true, result: INTERRUPTED_CALL },
      {
        type: "error",
        code: "interrupted",
        message: "The run was interrupted (the conversation's process restarted); send the message again.",
      },
    ]);
    // Approved and cut off is not declined.
    expect(replay.at(-2)).not.toHaveProperty("denied");
    const approveAgain = await call(`/v1/conversations/${s.conversationId}/approvals`, {
      method: "POST",
      headers: json,
      body: args({ decisions: [{ toolCallId: "ref", approved: true }] }),
    });
    expect(await errorOf(approveAgain)).toEqual([409, "request_already_decided"]);

    const next = await chat(s.conversationId, "did it work?");
    expect(next.at(-1)).toMatchObject({ type: "done", agent: "billing" });
    const sent = (await s.sent()).requests.at(-1)!;
    expect(sent.messages.find((m) => m.role === "tool" && m.tool_call_id === "ref")?.content).toBe(INTERRUPTED_CALL);
  });

  it("settles a declined call as a denial, announced as denied, with the person's reason", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: args({ reason: "double charge" }) }] },
      { toolCalls: [{ id: "ref", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 129 }) }] },
    ]);
    await chat(s.conversationId, s.tag("charged twice for A1001"));
    await runInDurableObject(env.CONVERSATIONS.getByName(s.conversationId), (_instance, state) => {
      decideTurn(new ConversationStore(state.storage), [{ toolCallId: "ref", approved: false, reason: "refunded by phone" }], true);
    });
    await evictDurableObject(env.CONVERSATIONS.getByName(s.conversationId));

    const after = await stored(s.conversationId);
    expect(after.messages.at(-1)).toMatchObject({
      role: "tool",
      toolCallId: "ref",
      approval: { approved: false, reason: "refunded by phone" },
    });
    const replay = parseSse(await (await call(`/v1/conversations/${s.conversationId}/events?after=0`)).text());
    expect(replay.at(-2)).toMatchObject({
      type: "tool-result",
      toolCallId: "ref",
      denied: true,
      result: "A person declined this call: refunded by phone",
    });
  });
});
