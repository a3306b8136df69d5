import { exports } from "cloudflare:workers";
import { DefaultChatTransport, readUIMessageStream, type UIMessage, validateUIMessages } from "ai";
import { describe, expect, it } from "vitest";
import { call, chat, scenario, stored } from "../support/worker.ts";

/** The AI SDK's own transport, pointed at the Worker's fetch handler; `answers` collects the responses' headers. */
function transport(conversationId: string, answers: Headers[] = []) {
  return new DefaultChatTransport<UIMessage>({
    api: `https://chat.test/v1/conversations/${conversationId}/chat`,
    fetch: async (input, init) => {
      const res = await exports.default.fetch(new Request(input as RequestInfo, init));
      answers.push(res.headers);
      return res;
    },
    prepareReconnectToStreamRequest: () => ({ api: `https://chat.test/v1/conversations/${conversationId}/chat/stream` }),
  });
}

type Chunks = Parameters<typeof readUIMessageStream>[0]["stream"];

/** Reads a stream to its final message; `continuing` is the assistant message a resumed leg extends, as useChat passes it. */
async function finalMessage(stream: Chunks, continuing?: UIMessage) {
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream<UIMessage>({
    stream,
    terminateOnError: true,
    ...(continuing ? { message: continuing } : {}),
  }))
    last = message;
  return last!;
}

const user = (text: string): UIMessage => ({ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text }] });

/** Triage hands over to billing, which looks the order up and asks to refund it; then it answers. Ids end with `suffix`. */
const refundScript = (suffix = "") => [
  {
    text: "Let me get billing.",
    toolCalls: [{ id: `t${suffix}`, name: "transfer_to_billing", arguments: JSON.stringify({ reason: "double charge" }) }],
  },
  {
    toolCalls: [
      { id: `look${suffix}`, name: "lookup_order", arguments: JSON.stringify({ orderId: "A1001" }) },
      { id: `ref${suffix}`, name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) },
    ],
  },
  { text: "Refunded." },
];

/** The assistant message with a person's answer to one approval, as useChat sends it back. */
function respond(message: UIMessage, toolCallId: string, approval: { approved: boolean; reason?: string }): UIMessage {
  return {
    ...message,
    parts: message.parts.map((p) =>
      "toolCallId" in p && p.toolCallId === toolCallId
        ? ({ ...p, state: "approval-responded", approval: { id: toolCallId, ...approval } } as typeof p)
        : p,
    ),
  };
}

describe("the AI SDK UI message stream protocol", () => {
  it("streams text, tools, handoffs and an approval request that readUIMessageStream assembles", async () => {
    const s = await scenario(refundScript());
    const res = await call(`/v1/conversations/${s.conversationId}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: "x", messages: [user(s.tag("charged twice"))], trigger: "submit-message" }),
    });
    expect(res.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    expect((await res.text()).trimEnd().endsWith("data: [DONE]")).toBe(true);

    // A second conversation, read through the transport itself.
    const s2 = await scenario(refundScript("2"));
    const chat2 = transport(s2.conversationId);
    const first = await finalMessage(
      await chat2.sendMessages({
        chatId: s2.conversationId,
        messages: [user(s2.tag("charged twice"))],
        trigger: "submit-message",
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    expect(first.role).toBe("assistant");
    expect(first.parts.find((p) => p.type === "text")).toMatchObject({ text: "Let me get billing.", state: "done" });
    expect(first.parts.find((p) => p.type === "data-handoff")).toMatchObject({
      data: { from: "triage", to: "billing", reason: "double charge", toolCallId: "t2" },
    });
    const tools = first.parts.filter((p) => "toolCallId" in p) as Array<{ toolCallId: string; state: string; output?: unknown }>;
    expect(tools.map((p) => [p.toolCallId, p.state])).toEqual([
      ["t2", "output-available"],
      ["look2", "output-available"],
      ["ref2", "approval-requested"],
    ]);
    expect(tools[1]!.output).toMatchObject({ orderId: "A1001", charges: 2 });

    // The approval travels back the way useChat sends it: the assistant message with the response.
    const responded = respond(first, "ref2", { approved: true });
    const second = await finalMessage(
      await chat2.sendMessages({
        chatId: s2.conversationId,
        messages: [user("charged twice"), responded],
        trigger: "submit-message",
        messageId: first.id,
        abortSignal: undefined,
      }),
      responded,
    );
    expect(second.parts.filter((p) => p.type === "text").map((p) => p.type === "text" && p.text)).toEqual([
      "Let me get billing.",
      "Refunded.",
    ]);
    expect(second.parts.find((p) => "toolCallId" in p && p.toolCallId === "ref2")).toMatchObject({
      state: "output-available",
      output: { refundedUsd: 129 },
    });
    expect((await stored(s2.conversationId)).messages.find((m) => m.role === "tool" && m.toolCallId === "ref2")).toMatchObject({
      isError: false,
    });
  });

  it("shows a declined approval as output-denied, the way useChat expects a refusal", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "double charge" }) }] },
      { toolCalls: [{ id: "ref", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "Understood, no refund." },
    ]);
    const answers: Headers[] = [];
    const chat = transport(s.conversationId, answers);
    const first = await finalMessage(
      await chat.sendMessages({
        chatId: s.conversationId,
        messages: [user(s.tag("refund please"))],
        trigger: "submit-message",
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    const declined = respond(first, "ref", { approved: false, reason: "refunded by phone" });
    const second = await finalMessage(
      await chat.sendMessages({
        chatId: s.conversationId,
        messages: [user("refund please"), declined],
        trigger: "submit-message",
        messageId: first.id,
        abortSignal: undefined,
      }),
      declined,
    );
    expect(second.parts.find((p) => "toolCallId" in p && p.toolCallId === "ref")).toMatchObject({ state: "output-denied" });
    // The decision's answer is a UI message stream too.
    expect(answers.map((h) => h.get("x-vercel-ai-ui-message-stream"))).toEqual(["v1", "v1"]);
    expect(second.parts.filter((p) => p.type === "text").map((p) => p.type === "text" && p.text)).toContain("Understood, no refund.");
    // The reason given reaches the model with the refusal.
    const toModel = (await s.sent()).requests.at(-1)!.messages.find((m) => m.role === "tool" && m.tool_call_id === "ref");
    expect(toModel?.content).toContain("refunded by phone");
  });

  it("decides only the new responses when the message useChat sends back also holds a call decided in an earlier step", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "two refunds" }) }] },
      { toolCalls: [{ id: "r1", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 10 }) }] },
      { toolCalls: [{ id: "r2", name: "refund", arguments: JSON.stringify({ orderId: "A1002", amountUsd: 5 }) }] },
      { text: "Both refunded." },
    ]);
    const chat = transport(s.conversationId);
    const send = (messages: UIMessage[], messageId?: string) =>
      chat.sendMessages({ chatId: s.conversationId, messages, trigger: "submit-message", messageId, abortSignal: undefined });
    const first = await finalMessage(await send([user(s.tag("two refunds"))]));
    const approvedOne = respond(first, "r1", { approved: true });
    const second = await finalMessage(await send([user("two refunds"), approvedOne], first.id), approvedOne);
    // r1 is answered and r2 waits, in the one assistant message useChat keeps.
    expect(second.parts.find((p) => "toolCallId" in p && p.toolCallId === "r1")).toMatchObject({ state: "output-available" });
    const approvedTwo = respond(second, "r2", { approved: true });
    const third = await finalMessage(await send([user("two refunds"), approvedTwo], second.id), approvedTwo);
    expect(third.parts.filter((p) => p.type === "text").map((p) => p.type === "text" && p.text)).toContain("Both refunded.");
    expect((await stored(s.conversationId)).messages.at(-1)).toMatchObject({ role: "assistant", content: "Both refunded." });
  });

  it("shows a call decided elsewhere while another of its step waits as approval-responded, and takes the message useChat sends back with both", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "two refunds" }) }] },
      {
        toolCalls: [
          { id: "r1", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 10 }) },
          { id: "r2", name: "refund", arguments: JSON.stringify({ orderId: "A1002", amountUsd: 5 }) },
        ],
      },
      { text: "One refunded, one not." },
    ]);
    const chat = transport(s.conversationId);
    const send = (messages: UIMessage[], messageId?: string) =>
      chat.sendMessages({ chatId: s.conversationId, messages, trigger: "submit-message", messageId, abortSignal: undefined });
    await finalMessage(await send([user(s.tag("two refunds"))]));
    // r1 is decided through the API (an operator, another tab); r2 still waits.
    const decided = await call(`/v1/conversations/${s.conversationId}/approvals`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decisions: [{ toolCallId: "r1", approved: true }] }),
    });
    expect(await decided.json()).toEqual({ status: "awaiting_approval", pending: ["r2"] });
    expect((await stored(s.conversationId)).pendingApprovals.map((p) => p.toolCallId)).toEqual(["r2"]);
    const loaded = (await (await call(`/v1/conversations/${s.conversationId}/ui-messages`)).json()) as UIMessage[];
    expect(await validateUIMessages({ messages: loaded })).toHaveLength(2);
    const part = (id: string) => loaded[1]!.parts.find((p) => "toolCallId" in p && p.toolCallId === id);
    expect(part("r1")).toMatchObject({ state: "approval-responded", approval: { id: "r1", approved: true } });
    expect(part("r2")).toMatchObject({ state: "approval-requested", approval: { id: "r2" } });
    // Sent back with no new response (r1's only, a repeat): refused as decided, r2 still waits.
    const repeated = await call(`/v1/conversations/${s.conversationId}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ id: s.conversationId, messages: loaded, trigger: "submit-message" }),
    });
    expect([repeated.status, ((await repeated.json()) as { error: { code: string } }).error.code]).toEqual([
      409,
      "request_already_decided",
    ]);
    expect((await stored(s.conversationId)).pendingApprovals.map((p) => p.toolCallId)).toEqual(["r2"]);
    // useChat sends the whole message back, r1's response with r2's: only r2 is a new decision.
    const denied = respond(loaded[1]!, "r2", { approved: false, reason: "not this one" });
    const resumed = await finalMessage(await send([loaded[0]!, denied], denied.id), denied);
    expect(resumed.parts.find((p) => "toolCallId" in p && p.toolCallId === "r1")).toMatchObject({ state: "output-available" });
    expect(resumed.parts.find((p) => "toolCallId" in p && p.toolCallId === "r2")).toMatchObject({ state: "output-denied" });
    expect((await stored(s.conversationId)).messages.at(-1)).toMatchObject({ role: "assistant", content: "One refunded, one not." });
  });

  it("gives the stored conversation as UIMessage[] with the parts the stream assembled, awaited approvals included", async () => {
    const s = await scenario(refundScript());
    const chat = transport(s.conversationId);
    const streamed = await finalMessage(
      await chat.sendMessages({
        chatId: s.conversationId,
        messages: [user(s.tag("charged twice"))],
        trigger: "submit-message",
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    const load = async () => (await (await call(`/v1/conversations/${s.conversationId}/ui-messages`)).json()) as UIMessage[];
    const waiting = await load();
    expect(await validateUIMessages({ messages: waiting })).toHaveLength(2);
    expect(waiting.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(waiting[0]!.parts).toEqual([{ type: "text", text: s.tag("charged twice"), state: "done" }]);
    expect(waiting[1]!.parts).toEqual(streamed.parts);
    // The stream named the answer as the history does, so a reload and a resume find the same message.
    expect(streamed.id).toBe(waiting[1]!.id);

    const responded = respond(waiting[1]!, "ref", { approved: true });
    const resumed = await finalMessage(
      await chat.sendMessages({
        chatId: s.conversationId,
        messages: [waiting[0]!, responded],
        trigger: "submit-message",
        messageId: responded.id,
        abortSignal: undefined,
      }),
      responded,
    );
    const done = await load();
    expect(await validateUIMessages({ messages: done })).toHaveLength(2);
    expect(done[1]!.parts).toEqual(resumed.parts);
    expect([resumed.id, done[1]!.id]).toEqual([streamed.id, streamed.id]);
  });

  it("answers the resume route with 204 when nothing runs, and resumes a running turn", async () => {
    const s = await scenario([{ text: "a slow answer arriving", holdAfter: 2 }]);
    const chat = transport(s.conversationId);
    expect(await chat.reconnectToStream({ chatId: s.conversationId })).toBeNull();
    const started = await chat.sendMessages({
      chatId: s.conversationId,
      messages: [user(s.tag("hi"))],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    const resumed = await chat.reconnectToStream({ chatId: s.conversationId });
    expect(resumed).not.toBeNull();
    const raw = await call(`/v1/conversations/${s.conversationId}/chat/stream`);
    expect(raw.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    await raw.body!.cancel();
    await s.release();
    const [a, b] = await Promise.all([finalMessage(started), finalMessage(resumed!)]);
    // Once the turn has ended there is nothing to resume, though its events are stored.
    expect(await chat.reconnectToStream({ chatId: s.conversationId })).toBeNull();
    expect(a.parts.find((p) => p.type === "text")).toMatchObject({ text: "a slow answer arriving" });
    expect(b.parts.find((p) => p.type === "text")).toMatchObject({ text: "a slow answer arriving" });
    // The resumed stream names the answer as the turn's own stream did, and as the stored conversation does: useChat
    // extends the one message, and a reload finds it under the same id.
    expect(b.id).toBe(a.id);
    const ui = (await (await call(`/v1/conversations/${s.conversationId}/ui-messages`)).json()) as UIMessage[];
    expect(ui.map((m) => [m.id, m.role])).toEqual([
      [expect.any(String), "user"],
      [a.id, "assistant"],
    ]);
  });
});

describe("any Unicode text arrives whole", () => {
  const TEXT = "Line\u2028separator, paragraph\u2029separator, \u0085next line, emoji 🧾 and \r\n breaks.";

  it("through /messages and /chat, line and paragraph separators included", async () => {
    const s = await scenario([
      { text: TEXT, chunkChars: 7 },
      { text: TEXT, chunkChars: 5 },
    ]);
    const events = await (await import("../support/worker.ts")).chat(s.conversationId, s.tag("first"));
    expect(
      events
        .filter((e) => e.type === "text-delta")
        .map((e) => e.delta)
        .join(""),
    ).toBe(TEXT);
    expect(events.at(-1)).toMatchObject({ type: "done", text: TEXT });

    const message = await finalMessage(
      await transport(s.conversationId).sendMessages({
        chatId: s.conversationId,
        messages: [user("second")],
        trigger: "submit-message",
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    expect(message.parts.find((p) => p.type === "text")).toMatchObject({ text: TEXT, state: "done" });
    expect(message.parts.at(-1)).toMatchObject({ type: "text" });
  });
});

describe("older AI SDK clients", () => {
  it("AI SDK 5's transport and readUIMessageStream accept the same stream (no approval in it: v5 has no approval chunk)", async () => {
    const { DefaultChatTransport: Transport5, readUIMessageStream: read5 } = await import("ai5");
    const s = await scenario([
      { text: "Routing.", toolCalls: [{ id: "t5", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "parcel" }) }] },
      { toolCalls: [{ id: "l5", name: "lookup_order", arguments: JSON.stringify({ orderId: "A1002" }) }] },
      { text: "It is processing." },
    ]);
    const transport5 = new Transport5({
      api: `https://chat.test/v1/conversations/${s.conversationId}/chat`,
      fetch: (input, init) => exports.default.fetch(new Request(input as RequestInfo, init)),
    });
    const stream = await transport5.sendMessages({
      chatId: s.conversationId,
      messages: [{ id: "u", role: "user", parts: [{ type: "text", text: s.tag("where is A1002") }] }],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    let last: { parts: Array<Record<string, unknown>> } | undefined;
    for await (const message of read5({ stream, terminateOnError: true }))
      last = message as unknown as { parts: Array<Record<string, unknown>> };
    expect(last!.parts.filter((p) => p.type === "text").map((p) => p.text)).toEqual(["Routing.", "It is processing."]);
    expect(last!.parts.find((p) => p.type === "data-handoff")).toMatchObject({
      data: { from: "triage", to: "shipping", reason: "parcel" },
    });
    expect(last!.parts.find((p) => p.toolCallId === "l5")).toMatchObject({ state: "output-available", output: { orderId: "A1002" } });
  });
});

describe("the chat route reads the newest user message", () => {
  it("takes its text parts, one per line, and sends it as a new message unless it edits the newest one", async () => {
    const s = await scenario([{ text: "First." }, { text: "Second." }, { text: "Third." }]);
    const send = async (body: object) => {
      const res = await call(`/v1/conversations/${s.conversationId}/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ trigger: "submit-message", ...body }),
      });
      expect(res.status).toBe(200);
      await res.text();
    };
    const text = (value: string) => ({ type: "text", text: value });
    // A client that names no message (no ids, no messageId): each message is a new one, never an edit.
    await send({ messages: [{ role: "user", parts: [text(s.tag("first"))] }] });
    const second = {
      role: "user",
      parts: [text("second, line one"), { type: "reasoning", text: "not the user's words" }, text(""), text("line two")],
    };
    await send({ messages: [{ role: "user", parts: [text("first")] }, { role: "assistant", parts: [text("First.")] }, second] });
    const newest = (await s.sent()).requests
      .at(-1)!
      .messages.filter((m) => m.role === "user")
      .at(-1);
    expect(newest?.content).toBe("second, line one\nline two");
    // A messageId that names an older message is no edit of the newest: sent as a new message too.
    await send({
      messages: [
        { id: "u1", role: "user", parts: [text("first")] },
        { id: "u3", role: "user", parts: [text("third")] },
      ],
      messageId: "u1",
    });
    expect((await stored(s.conversationId)).messages.map((m) => [m.role, m.content])).toEqual([
      ["user", s.tag("first")],
      ["assistant", "First."],
      ["user", "second, line one\nline two"],
      ["assistant", "Second."],
      ["user", "third"],
      ["assistant", "Third."],
    ]);
  });
});

describe("the chat route refuses", () => {
  it("a last message that is the assistant's with no approval responses, and a body with no user message's text", async () => {
    const s = await scenario([{ text: "Hello." }]);
    await chat(s.conversationId, s.tag("hello"));
    const send = (messages: unknown[]) =>
      call(`/v1/conversations/${s.conversationId}/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: s.conversationId, messages, trigger: "submit-message" }),
      });
    const user = { id: "u1", role: "user", parts: [{ type: "text", text: "hello" }] };
    const assistant = { id: "a1", role: "assistant", parts: [{ type: "text", text: "Hello." }] };
    const noDecisions = await send([user, assistant]);
    expect(noDecisions.status).toBe(400);
    expect(await noDecisions.json()).toMatchObject({
      error: { code: "invalid_request", message: expect.stringContaining("carries no approval responses") },
    });
    const empty = await send([{ ...user, parts: [{ type: "text", text: "  " }] }]);
    expect(empty.status).toBe(400);
    expect(await empty.json()).toMatchObject({ error: { code: "invalid_request", message: expect.stringContaining("has no text") } });
    // No user message at all: a system message's text is not the user's.
    const noUser = await send([{ id: "s1", role: "system", parts: [{ type: "text", text: "be brief" }] }]);
    expect(noUser.status).toBe(400);
    expect(await noUser.json()).toMatchObject({ error: { code: "invalid_request", message: expect.stringContaining("has no text") } });
    // Parts marked responded that carry no decision: an approval with no `approved`, or none at all.
    const undecided = await send([
      user,
      {
        ...assistant,
        parts: [
          { type: "tool-refund", toolCallId: "r", state: "approval-responded", approval: { id: "r" } },
          { type: "tool-refund", toolCallId: "q", state: "approval-responded" },
        ],
      },
    ]);
    expect(undecided.status).toBe(400);
    expect(await undecided.json()).toMatchObject({
      error: { code: "invalid_request", message: expect.stringContaining("carries no approval responses") },
    });
    // None of them started a turn.
    expect((await stored(s.conversationId)).messages).toHaveLength(2);
  });
});
