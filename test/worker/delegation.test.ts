/**
 * Delegation through the Worker in workerd (the fake provider speaks the real wire format): billing
 * asks the fraud checker as a tool. Its events reach the client nested under the call, as they come
 * and in the replay; its steps are in the object's own table for it, not in the conversation's
 * history; what it spent counts toward the conversation's spending; the AI SDK's stream shows it as
 * a `data-delegation` part that grows.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { describe, expect, inject, it } from "vitest";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { parseSse } from "../support/sse.ts";
import { call, chat, stored } from "../support/worker.ts";
import { TestChat } from "../support/ai-chat.ts";
import { until } from "../support/until.ts";

/**
 * A scenario whose script names its own id: the delegated agent's requests carry it in the request its caller sends it (the
 * fake provider finds a scenario by the id in a request's body), so its steps are this scenario's too.
 */
async function scripted(answers: (tag: (text: string) => string) => unknown[]) {
  const id = `scn${crypto.randomUUID().replaceAll("-", "")}`;
  const tag = (text: string) => `${text} [${id}]`;
  const res = await fetch(`${inject("fakeOpenAIUrl")}/__scenarios`, {
    method: "POST",
    body: JSON.stringify({ id, answers: answers(tag) }),
  });
  expect(res.ok).toBe(true);
  return { conversationId: `conv-${id}`, tag };
}

const script = (tag: (text: string) => string) => [
  { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "charge" }) }] },
  { toolCalls: [{ id: "fc", name: "ask_fraud_check", arguments: JSON.stringify({ request: tag("Check order A1001 for fraud.") }) }] },
  // The fraud checker's own steps: it looks the order up, then answers.
  { toolCalls: [{ id: "lk", name: "lookup_order", arguments: JSON.stringify({ orderId: "A1001" }) }] },
  { text: "Charged twice: a double charge, not fraud." },
  { text: "Our fraud check says it is a double charge." },
];

describe("a delegation through the Worker", () => {
  it("streams the child's events nested under the call, live and in the replay, and keeps its steps apart", async () => {
    const s2 = await scripted(script);
    const events = await chat(s2.conversationId, s2.tag("is this charge on A1001 fraud?"));
    const nested = events.filter((e) => e.type === "delegated") as Array<{ path: string[]; agent: string; event: { type: string } }>;
    expect(nested[0]).toMatchObject({ path: ["fc"], agent: "fraud-check", event: { type: "run-start" } });
    expect(nested.map((e) => e.event.type)).toContain("tool-result");
    expect(nested.at(-1)).toMatchObject({
      event: { type: "done", status: "completed", text: "Charged twice: a double charge, not fraud." },
    });
    expect(events.find((e) => e.type === "tool-result" && e.toolCallId === "fc")).toMatchObject({
      result: "Charged twice: a double charge, not fraud.",
    });
    // The replay is the stream: the same events, nested ones included.
    const replay = parseSse(
      await (await call(`/v1/conversations/${s2.conversationId}/events`, { headers: { "last-event-id": "0" } })).text(),
    );
    expect(replay.map((e) => e.id)).toEqual(events.map((e) => e.id));

    const view = await stored(s2.conversationId);
    expect(view.messages.filter((m) => m.role === "tool").map((m) => m.name)).toEqual(["transfer_to_billing", "ask_fraud_check"]);
    // Five model calls: three of billing and triage, two of the checker.
    expect(view.usage.modelCalls).toBe(5);
    const child = await runInDurableObject(env.CONVERSATIONS.getByName(s2.conversationId), (_o, state) =>
      new ConversationStore(state.storage).delegation(1, ["fc"]),
    );
    expect(child.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(child.find((m) => m.role === "tool")).toMatchObject({ name: "lookup_order", isError: false });
  });

  it("goes with a fork: the forked conversation holds the delegated agent's history of the turns it copies", async () => {
    const s2 = await scripted(script);
    await chat(s2.conversationId, s2.tag("is this charge on A1001 fraud?"));
    const res = await call(`/v1/conversations/${s2.conversationId}/fork`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ afterTurn: 1 }),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    const history = (conversationId: string) =>
      runInDurableObject(env.CONVERSATIONS.getByName(conversationId), (_o, state) =>
        new ConversationStore(state.storage).delegation(1, ["fc"]),
      );
    const original = await history(s2.conversationId);
    expect(original.length).toBe(4);
    expect(await history(id)).toEqual(original);
  });

  it("shows the child's work to useChat as a data-delegation part that grows to its answer", async () => {
    const s2 = await scripted(script);
    const transport = new DefaultChatTransport<UIMessage>({
      api: `https://chat.test/v1/conversations/${s2.conversationId}/chat`,
      fetch: (input, init) => exports.default.fetch(new Request(input as RequestInfo, init)),
    });
    const stream = await transport.sendMessages({
      chatId: s2.conversationId,
      messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: s2.tag("is this charge on A1001 fraud?") }] }],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream<UIMessage>({ stream, terminateOnError: true })) last = message;
    const parts = last!.parts.filter((p) => p.type === "data-delegation") as Array<{ id: string; data: Record<string, unknown> }>;
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({
      id: "delegation-fc",
      data: {
        path: ["fc"],
        agent: "fraud-check",
        status: "done",
        text: "Charged twice: a double charge, not fraud.",
        calls: [{ name: "lookup_order", isError: false }],
      },
    });
  });
});

/** Billing asks the fraud checker, which flags the order: a flag a person approves, asked of the user through billing. */
const flagging = (tag: (text: string) => string) => [
  { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "charge" }) }] },
  { toolCalls: [{ id: "fc", name: "ask_fraud_check", arguments: JSON.stringify({ request: tag("Flag order A1001.") }) }] },
  { toolCalls: [{ id: "fl", name: "flag_order", arguments: JSON.stringify({ orderId: "A1001" }) }] },
  { text: "Flagged A1001." },
  { text: "The fraud team has order A1001 now." },
];

describe("what a delegated agent asks the user", () => {
  it("waits for the inner call's approval (its name, arguments and path), decided over HTTP: the child resumes, then billing", async () => {
    const s = await scripted(flagging);
    const events = await chat(s.conversationId, s.tag("flag the charge on A1001 as fraud"));
    expect(events.find((e) => e.type === "approval-required")).toMatchObject({
      toolCallId: "fc",
      name: "flag_order",
      args: { orderId: "A1001" },
      agent: "fraud-check",
      delegated: { path: ["fc"], toolCallId: "fl" },
    });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "awaiting_approval", agent: "billing" });
    const view = (await (await call(`/v1/conversations/${s.conversationId}`)).json()) as { pendingRequests: unknown[] };
    expect(view.pendingRequests).toMatchObject([{ kind: "approval", toolCallId: "fc", name: "flag_order", delegated: { path: ["fc"] } }]);
    const res = await call(`/v1/conversations/${s.conversationId}/decisions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decisions: [{ toolCallId: "fc", approved: true }] }),
    });
    const resumed = parseSse(await res.text());
    const inner = resumed.find((e) => e.type === "delegated" && (e as { event: { type: string } }).event.type === "tool-result");
    expect(inner).toMatchObject({ path: ["fc"], event: { toolCallId: "fl", name: "flag_order", isError: false } });
    expect(resumed.find((e) => e.type === "tool-result" && e.toolCallId === "fc")).toMatchObject({ result: "Flagged A1001." });
    expect(resumed.at(-1)).toMatchObject({ type: "done", status: "completed", text: "The fraud team has order A1001 now." });
    const stored = await runInDurableObject(env.CONVERSATIONS.getByName(s.conversationId), (_o, state) =>
      new ConversationStore(state.storage).delegation(1, ["fc"]),
    );
    expect(stored.filter((m) => m.role === "tool").map((m) => m.name)).toEqual(["flag_order"]);
  });

  it("the same approval through useChat's own client: addToolApprovalResponse on the delegating call resumes both", async () => {
    const s = await scripted(flagging);
    const chat = new TestChat(s.conversationId);
    await chat.sendMessage({ text: s.tag("flag the charge on A1001 as fraud") });
    const part = chat.last.parts.find((p) => "toolCallId" in p && p.toolCallId === "fc") as { state: string; approval?: { id: string } };
    expect(part).toMatchObject({ state: "approval-requested", approval: { id: "fc" } });
    await chat.addToolApprovalResponse({ id: "fc", approved: true });
    await until(
      async () => chat.last,
      () => chat.status === "ready" && chat.last.parts.some((p) => p.type === "text" && p.text === "The fraud team has order A1001 now."),
      "the resumed turn's answer",
    );
    const delegation = chat.last.parts.find((p) => p.type === "data-delegation") as { data: { calls: unknown[]; status: string } };
    expect(delegation.data).toMatchObject({ status: "done", calls: [{ name: "flag_order", isError: false }] });
  });
});

describe("a delegation over A2A and AG-UI", () => {
  it("A2A's SendStreamingMessage tells the delegated agent's answer as a working status update, with its agent and path", async () => {
    const s = await scripted(script);
    const res = await call("/v1/a2a", {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: "d1",
        method: "SendStreamingMessage",
        params: {
          message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text: s.tag("is this charge on A1001 fraud?") }] },
        },
      }),
    });
    const results = (await res.text())
      .split("\n\n")
      .filter((frame) => frame.startsWith("data: "))
      .map((frame) => JSON.parse(frame.slice(6)) as { result: { statusUpdate?: { status: { state: string; message?: unknown } } } });
    const delegated = results.find(
      (r) => (r.result.statusUpdate?.status.message as { metadata?: { delegation?: unknown } } | undefined)?.metadata?.delegation,
    );
    expect(delegated?.result.statusUpdate?.status).toMatchObject({
      state: "TASK_STATE_WORKING",
      message: {
        role: "ROLE_AGENT",
        parts: [{ text: "Charged twice: a double charge, not fraud." }],
        metadata: { agent: "fraud-check", delegation: { path: ["fc"] } },
      },
    });
  });
});
