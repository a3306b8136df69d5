import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  Agent,
  type Budgets,
  type Message,
  type Model,
  type ModelEvent,
  type ModelRequest,
  Network,
  type RunEvent,
  runTurn,
  tool,
} from "../../src/runtime/index.ts";
import { estimateTokens } from "../../src/runtime/compaction.ts";
import { findHistoryProblem } from "../../src/runtime/messages.ts";
import { echo, refund } from "../support/networks.ts";
import { ofType, playTurn } from "../support/run.ts";
import { MemoryStore } from "../support/scripted-model.ts";

function budgeted(budgets: Budgets) {
  const billing = new Agent({ name: "billing", instructions: "billing", tools: [echo] });
  return new Network(new Agent({ name: "triage", instructions: "triage", tools: [echo], handoffs: [billing] }), {
    defaultModel: "m",
    budgets,
  });
}

describe("budgets", () => {
  it("stop the turn cleanly with budget_exceeded naming the budget, the history valid", async () => {
    const again = { toolCalls: [{ name: "echo", args: { text: "x" } }] };
    const { events, store } = await playTurn(budgeted({ perTurn: { modelCalls: 2 } }), "go", [again, again]);
    expect(events.at(-1)).toMatchObject({
      type: "error",
      code: "budget_exceeded",
      message: expect.stringContaining("perTurn.modelCalls budget (2)"),
    });
    expect(store.history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"]);
  });

  it("count tool calls before they run", async () => {
    let ran = 0;
    const counted = tool({ name: "count", description: "c", parameters: z.object({}), execute: () => ++ran });
    const net = new Network(new Agent({ name: "solo", instructions: "s", tools: [counted] }), {
      defaultModel: "m",
      budgets: { perTurn: { toolCalls: 2 } },
    });
    const { events } = await playTurn(net, "go", [{ toolCalls: [{ name: "count" }, { name: "count" }, { name: "count" }] }]);
    expect(events.at(-1)).toMatchObject({ type: "error", code: "budget_exceeded", message: expect.stringContaining("perTurn.toolCalls") });
    expect(ran).toBe(0);
  });

  it("carry conversation totals across turns (tokens known after each call)", async () => {
    const net = budgeted({ perConversation: { inputTokens: 20 } });
    const store = new MemoryStore("triage");
    const usage = { modelCalls: 0, inputTokens: 0, outputTokens: 0, toolCalls: 0 };
    const turn = async (text: string, script: Array<{ text: string }>) => {
      const events: RunEvent[] = [];
      for await (const event of runTurn({
        conversationId: "b",
        network: net,
        model: new (await import("../support/scripted-model.ts")).ScriptedModel(script),
        store,
        conversation: { ...store.conversation(), usage },
        input: { kind: "message", text },
      })) {
        events.push(event);
      }
      const done = ofType(events, "done")[0];
      if (done?.usage)
        Object.assign(usage, {
          modelCalls: usage.modelCalls + done.usage.modelCalls,
          inputTokens: usage.inputTokens + done.usage.inputTokens,
        });
      return events;
    };
    expect((await turn("one", [{ text: "a" }])).at(-1)).toMatchObject({ type: "done", usage: { modelCalls: 1, inputTokens: 10 } });
    expect((await turn("two", [{ text: "b" }])).at(-1)).toMatchObject({ type: "done" });
    expect((await turn("three", [])).at(-1)).toMatchObject({
      type: "error",
      code: "budget_exceeded",
      message: expect.stringContaining("perConversation.inputTokens budget (20)"),
    });
  });
});

describe("guardrails", () => {
  it("block an input before any model call; nothing of it is stored", async () => {
    const guarded = new Agent({
      name: "front",
      instructions: "f",
      inputGuardrails: [({ text }) => (/password/i.test(text) ? { block: true, reason: "no credentials in chat" } : undefined)],
    });
    const { events, store } = await playTurn(new Network(guarded, { defaultModel: "m" }), "my password is hunter2", []);
    expect(events.slice(-2)).toEqual([
      { type: "guardrail", kind: "input", agent: "front", reason: "no credentials in chat" },
      { type: "error", code: "guardrail_blocked", message: "The message was blocked: no credentials in chat" },
    ]);
    expect(store.history).toEqual([]);
  });

  it("block a final answer before it is stored", async () => {
    const guarded = new Agent({
      name: "front",
      instructions: "f",
      tools: [echo],
      outputGuardrails: [({ text }) => (text.includes("SECRET") ? { block: true, reason: "leaks a secret" } : undefined)],
    });
    const { events, store } = await playTurn(new Network(guarded, { defaultModel: "m" }), "x", [
      { toolCalls: [{ name: "echo", args: { text: "t" } }] },
      { text: "the SECRET is 42" },
    ]);
    expect(ofType(events, "guardrail")).toEqual([{ type: "guardrail", kind: "output", agent: "front", reason: "leaks a secret" }]);
    expect(events.at(-1)).toMatchObject({ type: "error", code: "guardrail_blocked" });
    expect(store.history.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  });

  it("on tool calls: after transfer interception, before the approval gate; a blocked call is answered, never run", async () => {
    const seen: string[] = [];
    const billing = new Agent({ name: "billing", instructions: "b" });
    const triage = new Agent({ name: "triage", instructions: "t", tools: [echo, refund], handoffs: [billing] });
    const net = new Network(triage, {
      defaultModel: "m",
      toolGuardrails: [
        ({ name, args }) => {
          seen.push(name);
          return name === "refund" && (args as { amount: number }).amount > 100
            ? { block: true, reason: "refunds over 100 need a supervisor" }
            : undefined;
        },
      ],
    });
    const { events, store } = await playTurn(net, "x", [
      {
        toolCalls: [
          { id: "r", name: "refund", args: { amount: 500 } },
          { id: "e", name: "echo", args: { text: "ok" } },
          { id: "t", name: "transfer_to_billing" },
        ],
      },
      { text: "billing here" },
    ]);
    expect(seen).toEqual(["refund", "echo"]);
    expect(ofType(events, "approval-required")).toEqual([]);
    expect(ofType(events, "guardrail")).toEqual([
      { type: "guardrail", kind: "tool", agent: "triage", reason: "refunds over 100 need a supervisor", toolCallId: "r" },
    ]);
    expect(ofType(events, "tool-result").map((r) => [r.toolCallId, r.isError])).toEqual([
      ["r", true],
      ["e", false],
      ["t", false],
    ]);
    expect(store.history.find((m) => m.role === "tool" && m.toolCallId === "r")).toMatchObject({
      content: "Blocked by a guardrail: refunds over 100 need a supervisor",
    });
    expect(ofType(events, "done")[0]!.agent).toBe("billing");
  });
});

/** A model that answers briefly, summarizes when asked, and records the size of every request. */
class CountingModel implements Model {
  readonly sizes: number[] = [];
  summaries = 0;
  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    this.sizes.push(estimateTokens(request.instructions, request.messages, request.tools));
    const text = request.instructions.startsWith("Summarize") ? `summary ${++this.summaries}` : `answer ${this.sizes.length}`;
    yield { type: "text-delta", delta: text };
    yield { type: "finish", finishReason: "stop", usage: { inputTokens: this.sizes.at(-1)!, outputTokens: 2 } };
  }
}

function longHistory(count: number): Message[] {
  return Array.from(
    { length: count },
    (_, i): Message =>
      i % 2 === 0
        ? { role: "user", content: `question ${i} about order A${1000 + (i % 7)}` }
        : { role: "assistant", agent: "triage", content: `answer ${i}: all fine with that order` },
  );
}

describe("context compaction", () => {
  it("keeps a conversation of 5,000 messages answering with every request under the budget", async () => {
    const BUDGET = 2_000;
    const net = new Network(new Agent({ name: "triage", instructions: "You route.", contextBudget: BUDGET }), {
      defaultModel: "m",
      compaction: { keepTurns: 3 },
    });
    const store = new MemoryStore("triage");
    store.history = longHistory(5_000);
    const model = new CountingModel();
    const events: RunEvent[] = [];
    let compaction = undefined as undefined | { replaces: number; summary: string };
    for (const text of ["first new question", "second new question"]) {
      for await (const event of runTurn({
        conversationId: "long",
        network: net,
        model,
        store,
        conversation: { ...store.conversation(), ...(compaction ? { compaction } : {}) },
        input: { kind: "message", text },
      })) {
        events.push(event);
      }
      compaction = store.commits.findLast((c) => c.compaction)?.compaction ?? compaction;
    }
    expect(Math.max(...model.sizes)).toBeLessThanOrEqual(BUDGET);
    expect(ofType(events, "done").map((d) => d.text)).toHaveLength(2);
    const [first] = ofType(events, "compaction");
    expect(first).toMatchObject({ agent: "triage", replaced: 4_996, kept: 5 });
    expect(store.history).toHaveLength(5_004);
    expect(findHistoryProblem(store.history)).toBeNull();
    expect(compaction!.summary).toMatch(/^summary \d+$/);
  });

  it("never cuts between a tool call and its result, and follows the active agent after a transfer", async () => {
    const billing = new Agent({ name: "billing", instructions: "billing", contextBudget: 300 });
    const triage = new Agent({ name: "triage", instructions: "triage", tools: [echo], handoffs: [billing], contextBudget: 100_000 });
    const net = new Network(triage, { defaultModel: "m", compaction: { keepTurns: 1 } });
    const store = new MemoryStore("triage");
    store.history = longHistory(40);
    const requests: ModelRequest[] = [];
    const model: Model = {
      async *stream(request) {
        requests.push(structuredClone({ ...request, signal: undefined }) as unknown as ModelRequest);
        if (request.instructions.startsWith("Summarize")) yield { type: "text-delta", delta: "earlier: forty messages about orders" };
        else if (request.agent === "triage" && requests.filter((r) => r.agent === "triage").length === 1)
          yield { type: "tool-call", call: { id: "e", name: "echo", arguments: '{"text":"x"}' } };
        else if (request.agent === "triage") yield { type: "tool-call", call: { id: "t", name: "transfer_to_billing", arguments: "{}" } };
        else yield { type: "text-delta", delta: "billing answer" };
        yield { type: "finish", finishReason: "stop" };
      },
    };
    const events: RunEvent[] = [];
    for await (const event of runTurn({
      conversationId: "c",
      network: net,
      model,
      store,
      conversation: store.conversation(),
      input: { kind: "message", text: "now" },
    }))
      events.push(event);
    expect(ofType(events, "compaction")).toEqual([expect.objectContaining({ agent: "billing", replaced: 40 })]);
    const billingCall = requests.find((r) => r.agent === "billing" && !r.instructions.startsWith("Summarize"))!;
    expect(billingCall.messages[0]).toMatchObject({
      role: "system",
      content: "Summary of the earlier conversation: earlier: forty messages about orders",
    });
    expect(billingCall.messages.slice(1).map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"]);
    expect(findHistoryProblem(billingCall.messages)).toBeNull();
  });
});

describe("a network that changed under a stored conversation", () => {
  it("falls back to the entry agent with a warning and a note when the active agent is gone", async () => {
    const store = new MemoryStore("retired");
    store.history = [
      { role: "user", content: "old" },
      { role: "assistant", agent: "retired", content: null, toolCalls: [{ id: "o", name: "removed_tool", arguments: "{}" }] },
      { role: "tool", toolCallId: "o", name: "removed_tool", content: "42", isError: false },
    ];
    const net = new Network(new Agent({ name: "triage", instructions: "t" }), { defaultModel: "m" });
    const { events, model } = await playTurn(net, "hello?", [{ text: "triage here" }], { store });
    expect(events[0]).toMatchObject({ type: "run-start", agent: "triage" });
    expect(events[1]).toEqual({
      type: "warning",
      code: "agent_missing",
      message: "Agent 'retired' no longer exists; 'triage' took over the conversation.",
    });
    expect(model.requests[0]!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "system", "user"]);
    expect(store.history[3]).toMatchObject({
      role: "system",
      content: expect.stringContaining("'retired' that held this conversation no longer exists"),
    });
    expect(store.holding.activeAgent).toBe("triage");
  });
});
