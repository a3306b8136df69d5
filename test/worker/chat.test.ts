import { describe, expect, it } from "vitest";
import { readSse } from "../support/sse.ts";
import { call, chat, postMessage, scenario, stored } from "../support/worker.ts";

const args = (value: unknown) => JSON.stringify(value);

describe("POST /v1/conversations/:id/messages through the Worker, the real openai client and a fake provider", () => {
  it("hands off from triage to billing, streams every event, and stores the conversation", async () => {
    const s = await scenario([
      { text: "Routing you.", toolCalls: [{ id: "call_t", name: "transfer_to_billing", arguments: args({ reason: "double charge" }) }] },
      { toolCalls: [{ id: "call_l", name: "lookup_order", arguments: args({ orderId: "A1001" }) }] },
      { text: "Order A1001 was charged twice; I can refund one charge." },
    ]);
    const events = await chat(s.conversationId, s.tag("I was charged twice for order A1001"));

    expect(events.map((e) => e.type).filter((t) => t !== "text-delta")).toEqual([
      "run-start",
      "step-start",
      "tool-call",
      "tool-result",
      "handoff",
      "step-finish",
      "step-start",
      "tool-call",
      "tool-result",
      "step-finish",
      "step-start",
      "step-finish",
      "done",
    ]);
    expect(events[0]).toMatchObject({ type: "run-start", conversationId: s.conversationId, agent: "triage", model: "gpt-4o-mini" });
    expect(events.find((e) => e.type === "handoff")).toMatchObject({
      from: "triage",
      to: "billing",
      toolCallId: "call_t",
      reason: "double charge",
      stepIndex: 0,
    });
    expect(events.find((e) => e.type === "tool-result" && e.name === "lookup_order")).toMatchObject({
      isError: false,
      result: { orderId: "A1001", charges: 2 },
    });
    expect(events.find((e) => e.type === "step-finish")).toMatchObject({
      finishReason: "tool_calls",
      usage: { inputTokens: 42, outputTokens: 7 },
    });
    const text = events.flatMap((e) => (e.type === "text-delta" ? [e.delta] : [])).join("");
    expect(text).toBe("Routing you.Order A1001 was charged twice; I can refund one charge.");
    expect(events.at(-1)).toMatchObject({
      type: "done",
      status: "completed",
      agent: "billing",
      handoffCount: 1,
      text: "Order A1001 was charged twice; I can refund one charge.",
    });

    const { requests } = await s.sent();
    expect(requests).toHaveLength(3);
    expect(requests[0]!.stream).toBe(true);
    expect(requests[0]!.messages[0]).toMatchObject({ role: "system", content: expect.stringMatching(/^You route customers/) });
    expect(requests[0]!.tools!.map((t) => t.function.name)).toEqual([
      "remember",
      "transfer_to_billing",
      "transfer_to_shipping",
      "transfer_to_calculator",
      "transfer_to_support_desk",
    ]);
    // After the swap: the billing prompt replaces triage's, billing's tools, every transfer but its own.
    expect(requests[1]!.messages.filter((m) => m.role === "system")).toEqual([
      { role: "system", content: expect.stringMatching(/^You are the billing specialist/) },
    ]);
    expect(requests[1]!.tools!.map((t) => t.function.name)).toEqual([
      "lookup_order",
      "refund",
      "ask_fraud_check",
      "remember",
      "transfer_to_triage",
      "transfer_to_calculator",
      "transfer_to_shipping",
      "transfer_to_support_desk",
    ]);
    expect(requests[1]!.messages.slice(1).map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(requests[1]!.messages[2]).toMatchObject({ tool_calls: [{ id: "call_t", function: { name: "transfer_to_billing" } }] });
    expect(requests[1]!.messages[3]).toMatchObject({ tool_call_id: "call_t", content: "Transferred to 'billing'. double charge" });

    const conversation = await stored(s.conversationId);
    expect(conversation).toMatchObject({ id: s.conversationId, activeAgent: "billing", handoffCount: 1 });
    expect(conversation.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool", "assistant"]);
    expect(conversation.handoffs).toEqual([
      { turn: 1, kind: "transfer", from: "triage", to: "billing", toolCallId: "call_t", reason: "double charge", stepIndex: 0 },
    ]);
  });

  it("solves seed 000's quadratic with the calculator's tools", async () => {
    const c = (name: string, a: number, b?: number) => ({ name, arguments: args(b === undefined ? { a } : { a, b }) });
    const s = await scenario([
      { toolCalls: [{ name: "transfer_to_calculator", arguments: args({ reason: "Solve the quadratic equation" }) }] },
      { toolCalls: [c("power", -5, 2), c("multiply_numbers", 4, 6)] },
      { toolCalls: [c("subtract_numbers", 25, 24)] },
      { toolCalls: [c("square_root", 1)] },
      { toolCalls: [c("sum_numbers", 5, 1), c("subtract_numbers", 5, 1)] },
      { toolCalls: [c("divide_numbers", 6, 2), c("divide_numbers", 4, 2)] },
      { text: "The solutions are x = 2 and x = 3." },
    ]);
    const events = await chat(s.conversationId, s.tag("Solve x^2 - 5x + 6 = 0."));
    const results = events.flatMap((e) => (e.type === "tool-result" && e.name !== "transfer_to_calculator" ? [e.result] : []));
    expect(results).toEqual([25, 24, 1, 1, 6, 4, 3, 2]);
    // The calculator answers, then gives the conversation back to triage, which handed it over.
    expect(events.at(-1)).toMatchObject({ type: "done", agent: "triage", text: "The solutions are x = 2 and x = 3." });
    expect(events.filter((e) => e.type === "handoff")).toMatchObject([
      { from: "triage", to: "calculator" },
      { from: "calculator", to: "triage", kind: "return" },
    ]);
    // The return spends no handoff budget: only the transfer counts.
    expect(await stored(s.conversationId)).toMatchObject({ activeAgent: "triage", callers: [], handoffCount: 1 });
    // The AI SDK's view closes the turn with the return, after the calculator's answer.
    const ui = (await (await call(`/v1/conversations/${s.conversationId}/ui-messages`)).json()) as Array<{
      parts: Array<{ type: string; data?: { kind?: string } }>;
    }>;
    const handoffParts = ui.at(-1)!.parts.filter((p) => p.type === "data-handoff");
    expect(handoffParts.map((p) => p.data?.kind ?? "transfer")).toEqual(["transfer", "return"]);
    expect(ui.at(-1)!.parts.at(-1)).toBe(handoffParts[1]);
    const { requests } = await s.sent();
    expect(requests[1]!.tools!.map((t) => t.function.name).slice(0, 6)).toEqual([
      "sum_numbers",
      "multiply_numbers",
      "subtract_numbers",
      "divide_numbers",
      "power",
      "square_root",
    ]);
    await stored(s.conversationId);
  });

  it("answers two transfers in one step: the first is taken, the second is an error result", async () => {
    const s = await scenario([
      {
        toolCalls: [
          { id: "a", name: "transfer_to_shipping", arguments: "{}" },
          { id: "b", name: "transfer_to_billing", arguments: "{}" },
        ],
      },
      { text: "Shipping here." },
    ]);
    const events = await chat(s.conversationId, s.tag("both"));
    expect(events.filter((e) => e.type === "handoff").map((e) => e.type === "handoff" && e.to)).toEqual(["shipping"]);
    expect(events.filter((e) => e.type === "tool-result").map((e) => e.type === "tool-result" && [e.toolCallId, e.isError])).toEqual([
      ["a", false],
      ["b", true],
    ]);
    const { requests } = await s.sent();
    expect(requests[1]!.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["a", "b"]);
    expect((await stored(s.conversationId)).activeAgent).toBe("shipping");
  });

  it("runs a regular tool called beside a transfer", async () => {
    const s = await scenario([
      {
        toolCalls: [
          { id: "l", name: "lookup_order", arguments: args({ orderId: "A1002" }) },
          { id: "t", name: "transfer_to_triage", arguments: "{}" },
        ],
      },
      { text: "Back at triage." },
    ]);
    // Start in billing: a first turn hands the conversation over.
    const setup = await scenario([{ toolCalls: [{ id: "t0", name: "transfer_to_billing", arguments: "{}" }] }, { text: "billing" }]);
    await chat(s.conversationId, setup.tag("bill me"));
    const events = await chat(s.conversationId, s.tag("order A1002, then triage"));
    expect(events.filter((e) => e.type === "tool-result").map((e) => e.type === "tool-result" && [e.name, e.isError])).toEqual([
      ["lookup_order", false],
      ["transfer_to_triage", false],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "done", agent: "triage", handoffs: [{ from: "billing", to: "triage" }], handoffCount: 2 });
  });

  it("refuses an unknown target and the current agent carries on", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "u", name: "transfer_to_refunds", arguments: "{}" }] },
      { text: "Let me help you myself." },
    ]);
    const events = await chat(s.conversationId, s.tag("refund team please"));
    expect(events.find((e) => e.type === "tool-result")).toMatchObject({
      isError: true,
      result: expect.stringContaining("transfer_to_billing (billing)"),
    });
    expect(events.at(-1)).toMatchObject({ type: "done", agent: "triage", handoffCount: 0 });
  });

  it("stops transfers at the per-turn limit", async () => {
    const hop = (name: string) => ({ toolCalls: [{ name, arguments: "{}" }] });
    const s = await scenario([
      hop("transfer_to_billing"),
      hop("transfer_to_triage"),
      hop("transfer_to_billing"),
      hop("transfer_to_triage"),
      hop("transfer_to_billing"),
      hop("transfer_to_triage"),
      { text: "I will stay." },
    ]);
    const events = await chat(s.conversationId, s.tag("loop"));
    expect(events.filter((e) => e.type === "handoff")).toHaveLength(5);
    expect(events.filter((e) => e.type === "tool-result").at(-1)).toMatchObject({
      isError: true,
      result: "Handoff limit (5) reached; continue yourself.",
    });
    expect(events.at(-1)).toMatchObject({ type: "done", agent: "billing", handoffCount: 5 });
  });

  it("sends the next message to the agent that holds the conversation now", async () => {
    const s = await scenario([
      { toolCalls: [{ name: "transfer_to_shipping", arguments: args({ reason: "delivery" }) }] },
      { text: "Shipping speaking." },
      { text: "Still shipping." },
    ]);
    await chat(s.conversationId, s.tag("where is my parcel"));
    const events = await chat(s.conversationId, "and when will it arrive?");
    expect(events[0]).toMatchObject({ type: "run-start", agent: "shipping" });
    const { requests } = await s.sent();
    expect(requests[2]!.messages[0]!.content).toMatch(/^You are the shipping specialist/);
    expect(requests[2]!.messages.slice(1).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect((await stored(s.conversationId)).messages).toHaveLength(6);
  });

  it("forwards text deltas as the model produces them", async () => {
    const s = await scenario([{ text: "one two three four five six", holdAfter: 3 }]);
    const res = await postMessage(s.conversationId, s.tag("stream please"));
    const seen: string[] = [];
    for await (const event of readSse(res.body!)) {
      seen.push(event.type);
      // The provider is paused mid-answer: a delta can only be here if it was forwarded unbuffered.
      if (event.type === "text-delta" && seen.filter((t) => t === "text-delta").length === 1) await s.release();
    }
    expect(seen.at(-1)).toBe("done");
  });

  it("ends the turn with an error event when the provider fails, without a stack or the key", async () => {
    const s = await scenario([{ status: 401, error: { message: "Incorrect API key provided: sk-test-secret-key-never-shown" } }]);
    const res = await postMessage(s.conversationId, s.tag("hello"));
    const body = await res.text();
    expect(body).toContain("event: error");
    expect(body).toContain('"code":"model_auth_failed"');
    expect(body).not.toContain("sk-test-secret");
    expect(body).not.toMatch(/at .*\.ts:\d+/);
    const conversation = await stored(s.conversationId);
    expect(conversation.messages.map((m) => m.role)).toEqual(["user"]);
  });
});

describe("bad requests", () => {
  const post = (id: string, body: string, contentType = "application/json") =>
    call(`/v1/conversations/${id}/messages`, { method: "POST", headers: { "content-type": contentType }, body });

  it.each([
    ["body not JSON", () => post("ok-id", "{nope"), 400, "bad_json"],
    ["missing message", () => post("ok-id", "{}"), 400, "invalid_request"],
    ["empty message", () => post("ok-id", JSON.stringify({ message: "  " })), 400, "invalid_request"],
    ["message not a string", () => post("ok-id", JSON.stringify({ message: 42 })), 400, "invalid_request"],
    ["unknown field", () => post("ok-id", JSON.stringify({ message: "hi", extra: 1 })), 400, "invalid_request"],
    ["bad id", () => post("bad%20id", JSON.stringify({ message: "hi" })), 400, "invalid_conversation_id"],
    ["id too long", () => post("x".repeat(129), JSON.stringify({ message: "hi" })), 400, "invalid_conversation_id"],
    ["unknown route", () => call("/v1/nothing"), 404, "not_found"],
    ["unknown conversation", () => call("/v1/conversations/never-used"), 404, "conversation_not_found"],
  ])("%s gets a JSON error", async (_name, send, status, code) => {
    const res = await send();
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe(code);
    expect(body.error.message.length).toBeGreaterThan(5);
  });

  it("leaves nothing stored for a rejected message", async () => {
    await post("rejected-only", "{}");
    expect((await call("/v1/conversations/rejected-only")).status).toBe(404);
  });
});

describe("GET /v1/agents", () => {
  it("describes the network: names, descriptions, tools and handoff targets", async () => {
    const body = (await (await call("/v1/agents")).json()) as {
      entry: string;
      agents: Array<{ name: string; tools: string[]; handoffs: string[] }>;
    };
    expect(body.entry).toBe("triage");
    expect(body.agents.map((a) => [a.name, a.tools, a.handoffs])).toEqual([
      ["triage", ["remember"], ["billing", "shipping", "calculator", "support-desk"]],
      ["billing", ["lookup_order", "refund", "ask_fraud_check", "remember"], ["triage", "calculator", "shipping", "support-desk"]],
      [
        "shipping",
        [
          "lookup_order",
          "change_address",
          "arrange_redelivery",
          "choose_safe_place",
          "choose_delivery_slot",
          "open_damage_claim",
          "schedule_followup",
          "remember",
          "search_for_parcel",
        ],
        ["triage", "calculator", "billing", "support-desk"],
      ],
      [
        "calculator",
        ["sum_numbers", "multiply_numbers", "subtract_numbers", "divide_numbers", "power", "square_root"],
        ["triage", "billing", "shipping", "support-desk"],
      ],
      ["support-desk", [], []],
    ]);
  });
});

describe("provider faults through the Worker", () => {
  it("reaches the client as an error event with the code and the provider's status, and runs no partial tool call", async () => {
    const s = await scenario([{ toolCalls: [{ name: "lookup_order", arguments: '{"orderId":"A1001"}' }], endAfter: 3 }]);
    const events = await chat(s.conversationId, s.tag("where is A1001"));
    expect(events.filter((e) => e.type === "tool-call" || e.type === "tool-result")).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "error", code: "model_stream_interrupted" });
    expect((await stored(s.conversationId)).messages.map((m) => m.role)).toEqual(["user"]);

    const limited = await scenario([{ status: 429, error: { message: "rate limited" } }]);
    const rateEvents = await chat(limited.conversationId, limited.tag("hi"));
    expect(rateEvents.at(-1)).toMatchObject({ type: "error", code: "model_rate_limited", status: 429 });
  });
});
