/**
 * Handoffs to people through the Worker: the example network's `support-desk` person. The turn
 * that hands over ends `awaiting_human`, the desk lists the conversation, the user's messages start
 * no model call, a follower of the conversation receives the person's messages as they are sent,
 * and the person hands back to triage with a note triage reads. The operator API takes
 * OPERATOR_KEY or the API key, never a conversation token.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import worker from "../../src/index.ts";
import { parseSse } from "../support/sse.ts";
import { call, chat, scenario, stored } from "../support/worker.ts";

const json = { "content-type": "application/json" };

async function desk(status?: string): Promise<Array<{ conversationId: string; status: string; person: string; preview: string }>> {
  const res = await call(`/v1/operator/conversations${status ? `?status=${status}` : ""}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { conversations: Array<{ conversationId: string; status: string; person: string; preview: string }> })
    .conversations;
}

describe("a conversation handed to a person", () => {
  it("ends a follower's stream after five minutes, so no stream is held for ever; the follower reconnects after its last event", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "asked for a person" }) }] },
    ]);
    const first = await chat(s.conversationId, s.tag("a person, please"));
    expect(first.at(-1)).toMatchObject({ status: "awaiting_human" });
    const lastEventId = String(first.at(-1)!.id);
    const wait = globalThis.setTimeout;
    // The object runs in this isolate: its timers are the test's to move.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let ended: string;
    try {
      const follow = await call(`/v1/conversations/${s.conversationId}/events?follow=true`, { headers: { "last-event-id": lastEventId } });
      expect(follow.status).toBe(200);
      const reading = follow.text();
      // Moved from inside the object, where its stream may be touched.
      const object = env.CONVERSATIONS.getByName(s.conversationId);
      await runInDurableObject(object, () => vi.advanceTimersByTime(5 * 60_000 - 1));
      const early = await Promise.race([reading.then(() => "ended"), new Promise((resolve) => wait(resolve, 200, "open"))]);
      expect(early).toBe("open");
      await runInDurableObject(object, () => vi.advanceTimersByTime(1));
      ended = await reading;
    } finally {
      vi.useRealTimers();
    }
    expect(parseSse(ended)).toEqual([]);
    // The follower (an EventSource) reconnects with its last id, and gets what the person says next.
    const again = await call(`/v1/conversations/${s.conversationId}/events?follow=true`, { headers: { "last-event-id": lastEventId } });
    const reading = again.text();
    const answered = await call(`/v1/conversations/${s.conversationId}/operator/messages`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ message: "Sam here." }),
    });
    expect(answered.status).toBe(200);
    await call(`/v1/conversations/${s.conversationId}/operator/handoff`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ to: "triage" }),
    });
    expect(parseSse(await reading).map((e) => e.type)).toEqual(["operator-message", "handoff"]);
  });

  it("waits for the person, stores the user's messages without a model call, streams the person's answers, and goes back to triage", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "asked for a person" }) }] },
      { text: "Order A1001: the refund is on its way." },
      { text: "Triage here: glad it is sorted." },
    ]);
    const first = await chat(s.conversationId, s.tag("I want to talk to a person"));
    expect(first.at(-1)).toMatchObject({ type: "done", status: "awaiting_human", agent: "support-desk" });
    expect((await desk("waiting")).find((e) => e.conversationId === s.conversationId)).toMatchObject({
      status: "waiting",
      person: "support-desk",
      preview: expect.stringContaining("I want to talk to a person"),
    });

    const second = await chat(s.conversationId, "hello? is anyone there?");
    expect(second.map((e) => e.type)).toEqual(["run-start", "done"]);
    expect(second.at(-1)).toMatchObject({ status: "awaiting_human" });
    expect((await s.sent()).requests).toHaveLength(1);

    // Read to its end without following, a conversation a person holds has nothing more to send.
    const unfollowed = await call(`/v1/conversations/${s.conversationId}/events`, {
      headers: { "last-event-id": String(second.at(-1)!.id) },
    });
    expect(unfollowed.status).toBe(204);
    // The user's page follows the conversation (and an AI SDK client resumes its stream); the person answers.
    const follow = await call(`/v1/conversations/${s.conversationId}/events?follow=true`, {
      headers: { "last-event-id": String(second.at(-1)!.id) },
    });
    expect(follow.status).toBe(200);
    const reading = follow.text();
    const resumed = await call(`/v1/conversations/${s.conversationId}/chat/stream`);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    const resumedText = resumed.text();
    const answered = await call(`/v1/conversations/${s.conversationId}/operator/messages`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ text: "Hi, this is Sam from support. I can see your order." }),
    });
    expect(answered.status).toBe(200);
    // The answer names the event the followers get (its id) and the person who said it.
    const said = (await answered.json()) as { eventId: number; agent: string };
    expect(said).toEqual({ eventId: second.at(-1)!.id + 1, agent: "support-desk" });
    expect((await desk("held")).map((e) => e.conversationId)).toContain(s.conversationId);
    // The user writes again while the person holds it: no model call, and it stays held, with the new message shown.
    expect((await chat(s.conversationId, "one more thing: it is order A1001")).at(-1)).toMatchObject({ status: "awaiting_human" });
    expect((await desk("held")).find((e) => e.conversationId === s.conversationId)).toMatchObject({
      preview: "one more thing: it is order A1001",
    });
    const back = await call(`/v1/conversations/${s.conversationId}/operator/handoff`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ to: "triage", note: "refund promised for A1001" }),
    });
    expect(await back.json()).toEqual({ activeAgent: "triage" });
    // The customer's last message came after the person's answer: triage answers it at the hand-back, not at their next.
    const answeredAtHandBack = await stored(s.conversationId);
    expect(answeredAtHandBack.messages.at(-1)).toMatchObject({
      role: "assistant",
      agent: "triage",
      content: "Order A1001: the refund is on its way.",
    });
    expect(answeredAtHandBack.status).toBe("completed");
    const followed = parseSse(await reading);
    expect(followed.map((e) => e.type)).toEqual(["operator-message", "handoff"]);
    expect(followed[0]!.id).toBe(said.eventId);
    expect(followed[0]).toMatchObject({
      agent: "support-desk",
      text: "Hi, this is Sam from support. I can see your order.",
      operator: "Sam",
    });
    expect(followed[1]).toMatchObject({ kind: "hand-back", from: "support-desk", to: "triage" });
    // The note is for triage, never for the customer: their stream has none.
    expect(followed[1]).not.toHaveProperty("note");
    const chunks = (await resumedText)
      .split("\n\n")
      .filter((frame) => frame.startsWith("data: {"))
      .map((frame) => JSON.parse(frame.slice(6)) as { type: string; data?: unknown });
    expect(chunks.find((chunk) => chunk.type === "data-operator-message")).toMatchObject({
      data: { agent: "support-desk", text: "Hi, this is Sam from support. I can see your order.", operator: "Sam" },
    });
    expect((await desk()).map((e) => e.conversationId)).not.toContain(s.conversationId);
    // No one waits now: the customer's view says so (triage answers the next message).
    const customer = (await (await call(`/v1/conversations/${s.conversationId}`)).json()) as { status: string; activeAgent: string };
    expect(customer).toMatchObject({ status: "completed", activeAgent: "triage" });

    // The user's next message is answered by triage, which reads the person's words and note.
    const third = await chat(s.conversationId, "thanks!");
    expect(third.at(-1)).toMatchObject({ type: "done", status: "completed", agent: "triage", text: "Triage here: glad it is sorted." });
    const { requests } = await s.sent();
    expect(requests[1]!.messages[0]!.content).toMatch(/^You route customers/);
    // The hand-back's turn: the customer's message, the person's note and what the turn is for.
    expect(requests[1]!.messages.map((m) => m.content)).toEqual(
      expect.arrayContaining([
        "one more thing: it is order A1001",
        "The person at 'support-desk' handed the conversation back to 'triage': refund promised for A1001",
        expect.stringMatching(/^The customer's last message came while 'support-desk' held the conversation/),
      ]),
    );
    expect(requests[2]!.messages.map((m) => m.content)).toEqual(
      expect.arrayContaining([
        "Hi, this is Sam from support. I can see your order.",
        "The person at 'support-desk' handed the conversation back to 'triage': refund promised for A1001",
      ]),
    );
    const view = await stored(s.conversationId);
    expect(view).toMatchObject({ activeAgent: "triage", handoffs: [{ to: "support-desk" }, { from: "support-desk", to: "triage" }] });
    // The activity names the person as their sign-in does (the development sign-in's operator, here).
    const activity = view.activity.map(({ at: _at, ...act }) => act);
    expect(activity).toEqual([
      { kind: "answered", by: { id: "dev:sam", name: "Sam" }, agent: "support-desk" },
      { kind: "handed-back", by: { id: "dev:sam", name: "Sam" }, agent: "support-desk", to: "triage" },
    ]);
    // The AI SDK's view has the person's message as theirs.
    const ui = (await (await call(`/v1/conversations/${s.conversationId}/ui-messages`)).json()) as Array<{
      role: string;
      parts: unknown[];
    }>;
    expect(JSON.stringify(ui)).toContain("Hi, this is Sam from support.");
  });

  it("keeps the hand-back note off everything the customer reads, and shows it on the desk", async () => {
    const note = "Customer wants a refund for A1001, be careful";
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "asked for a person" }) }] },
      { text: "Triage here." },
    ]);
    await chat(s.conversationId, s.tag("a person, please"));
    const follow = await call(`/v1/conversations/${s.conversationId}/events?follow=true`, { headers: { "last-event-id": "0" } });
    const following = follow.text();
    const back = await call(`/v1/conversations/${s.conversationId}/operator/handoff`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ to: "triage", note }),
    });
    expect(back.status).toBe(200);
    const read = async (path: string, headers: Record<string, string> = {}) =>
      (await call(`/v1/conversations/${s.conversationId}${path}`, { headers })).text();
    const customer: Record<string, string> = {
      follower: await following,
      view: await read(""),
      replay: await read("/events", { "last-event-id": "0" }),
      turns: await read("/turns"),
      trace: await read("/turns/1/trace"),
      uiMessages: await read("/ui-messages"),
    };
    // The next turn's stream, and the view after it, as the customer's page reads them.
    customer.nextTurn = JSON.stringify(await chat(s.conversationId, "thanks!"));
    customer.viewAfter = await read("");
    for (const [where, text] of Object.entries(customer)) {
      expect(text, where).not.toContain("refund for A1001");
      expect(text, where).not.toContain("handed the conversation back");
    }
    // The hand-back itself still shows, without its note.
    const handedBack = JSON.parse(customer.view!).handoffs.at(-1);
    expect(handedBack).toMatchObject({ kind: "hand-back", from: "support-desk", to: "triage" });
    expect(handedBack).not.toHaveProperty("note");
    // The desk reads the note, and triage was sent it.
    const deskView = (await (await call(`/v1/operator/conversations/${s.conversationId}`)).json()) as {
      handoffs: Array<{ note?: string }>;
      messages: Array<{ role: string; content: string }>;
    };
    expect(deskView.handoffs.at(-1)!.note).toBe(note);
    expect(deskView.messages.find((m) => m.role === "system")!.content).toContain(note);
    expect((await s.sent()).requests[1]!.messages.map((m) => m.content)).toContain(
      `The person at 'support-desk' handed the conversation back to 'triage': ${note}`,
    );
  });

  it("keeps a person's words once in the history when the object restarted while it waited for them", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "asked for a person" }) }] },
      { text: "Triage again." },
    ]);
    await chat(s.conversationId, s.tag("a person, please"));
    const stub = env.CONVERSATIONS.getByName(s.conversationId);
    // The person answers hours later: the object that waited was evicted meanwhile, and so again before the hand back.
    await evictDurableObject(stub);
    const said = "Sam here: your refund is on its way.";
    const answered = await call(`/v1/conversations/${s.conversationId}/operator/messages`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ text: said }),
    });
    expect(answered.status).toBe(200);
    await evictDurableObject(stub);
    await call(`/v1/conversations/${s.conversationId}/operator/handoff`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ to: "triage", note: "refund sent" }),
    });
    await chat(s.conversationId, "thanks!");
    const { requests } = await s.sent();
    const sent = requests.at(-1)!.messages;
    expect(sent.filter((m) => m.content === said)).toHaveLength(1);
    expect(sent.filter((m) => typeof m.content === "string" && m.content.includes("refund sent"))).toHaveLength(1);
    expect((await stored(s.conversationId)).messages.filter((m) => m.content === said)).toHaveLength(1);
  });

  it("answers 409 to an operator message when no person holds the conversation, 400 to a hand back to an unknown agent", async () => {
    const s = await scenario([{ toolCalls: [{ name: "transfer_to_support_desk", arguments: "{}" }] }]);
    await chat(s.conversationId, s.tag("a person please"));
    const wrongAgent = await call(`/v1/conversations/${s.conversationId}/operator/handoff`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ to: "nobody" }),
    });
    expect(wrongAgent.status).toBe(400);
    // The person's own desk is not one to hand back to: the agents are listed, the people are not.
    expect(await wrongAgent.json()).toMatchObject({
      error: {
        code: "unknown_agent",
        message: "'nobody' is not an agent of this network to hand back to: one of triage, billing, shipping, calculator.",
      },
    });
    await call(`/v1/conversations/${s.conversationId}/operator/handoff`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ to: "billing" }),
    });
    // Handed back with no note: the history says so (as the desk reads it), and nothing more.
    const deskView = (await (await call(`/v1/operator/conversations/${s.conversationId}`)).json()) as { messages: unknown[] };
    expect(deskView.messages.at(-1)).toMatchObject({
      content: "The person at 'support-desk' handed the conversation back to 'billing'.",
    });
    const notHeld = await call(`/v1/conversations/${s.conversationId}/operator/messages`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ text: "hello" }),
    });
    expect(notHeld.status).toBe(409);
    expect(await notHeld.json()).toMatchObject({
      error: { code: "not_held_by_person", message: "No person holds this conversation: 'billing' does." },
    });
  });

  it("leaves the desk when the conversation is deleted", async () => {
    const s = await scenario([{ toolCalls: [{ name: "transfer_to_support_desk", arguments: "{}" }] }]);
    await chat(s.conversationId, s.tag("a human, now"));
    expect((await desk()).map((e) => e.conversationId)).toContain(s.conversationId);
    expect((await call(`/v1/conversations/${s.conversationId}`, { method: "DELETE" })).status).toBe(204);
    expect((await desk()).map((e) => e.conversationId)).not.toContain(s.conversationId);
  });
});

describe("operator access", () => {
  const API_KEY = "test-master-key-0123456789";
  const OPERATOR_KEY = "operator-key-0123456789abcdef";
  const keyed = { ...env, API_KEY, OPERATOR_KEY, ALLOW_ANONYMOUS: "false" };
  const request = (path: string, init: RequestInit = {}) => Promise.resolve(worker.request(`https://chat.test${path}`, init, keyed));
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it("takes OPERATOR_KEY or the API key, and refuses a conversation token and no key", async () => {
    expect((await request("/v1/operator/conversations", { headers: bearer(OPERATOR_KEY) })).status).toBe(200);
    expect((await request("/v1/operator/conversations", { headers: bearer(API_KEY) })).status).toBe(200);
    expect((await request("/v1/operator/conversations")).status).toBe(401);
    const created = (await (await request("/v1/conversations", { method: "POST", headers: bearer(API_KEY) })).json()) as {
      id: string;
      token: string;
    };
    const withToken = await request(`/v1/conversations/${created.id}/operator/messages`, {
      method: "POST",
      headers: { ...bearer(created.token), ...json },
      body: JSON.stringify({ text: "I am not an operator" }),
    });
    expect(withToken.status).toBe(401);
    // The operator key opens the operator API only.
    expect((await request(`/v1/conversations/${created.id}`, { headers: bearer(OPERATOR_KEY) })).status).toBe(401);
    expect((await request(`/v1/operator/conversations/${created.id}`, { headers: bearer(OPERATOR_KEY) })).status).toBe(200);
  });
});

describe("bodies the person's routes refuse", () => {
  it.each([
    ["a blank answer", { message: "   " }, "`message` must not be empty."],
    ["both message and text", { message: "a", text: "b" }, "Send the person's answer as `message` (one field)."],
    ["neither", { operator: "Sam" }, "Send the person's answer as `message` (one field)."],
  ])("an operator message with %s: 400, nothing said", async (_what, body, message) => {
    const s = await scenario([
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "a person" }) }] },
    ]);
    await chat(s.conversationId, s.tag("a person, please"));
    const before = await stored(s.conversationId);
    const res = await call(`/v1/conversations/${s.conversationId}/operator/messages`, {
      method: "POST",
      headers: json,
      body: JSON.stringify(body),
    });
    const refused = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, refused.error.code]).toEqual([400, "invalid_request"]);
    expect(refused.error.message).toContain(message);
    expect((await stored(s.conversationId)).messages).toEqual(before.messages);
  });

  it("approvals that decide one call twice: 400, nothing decided", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
    ]);
    await chat(s.conversationId, s.tag("refund A1001"));
    const twice = [
      { toolCallId: "rf", approved: true },
      { toolCallId: "rf", approved: false },
    ];
    const res = await call(`/v1/conversations/${s.conversationId}/approvals`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ decisions: twice }),
    });
    const refused = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, refused.error.code]).toEqual([400, "invalid_request"]);
    expect(refused.error.message).toContain("Each toolCallId may be decided once.");
    expect(await stored(s.conversationId)).toMatchObject({ status: "awaiting_approval", pendingApprovals: [{ toolCallId: "rf" }] });
  });
});
