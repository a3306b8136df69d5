/**
 * The trace builder fed by real runs of the loop: a compaction becomes a span in the agent's
 * tenure, and a model call the provider's client retried says how many times.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { Agent, type Message, type Model, Network, type RunEvent, type RunTurnOptions, tool } from "../../src/runtime/index.ts";
import { TraceBuilder } from "../../src/traces/turn-trace.ts";
import { MemoryStore, ScriptedModel } from "../../src/testing/index.ts";
import { eventsOfTurn } from "../support/run.ts";

/** Runs a turn with the builder recording each event as it happens, a millisecond apart, and finishes the trace. */
async function traced(network: Network, model: Model, builder = new TraceBuilder(1), more: Partial<RunTurnOptions> = {}) {
  let now = 1_000;
  const events = await eventsOfTurn(network, model, more, (event) => builder.record(event, now++));
  const end = events.at(-1)!;
  return builder.finish(1, end.type === "done" ? { status: end.status } : { status: "failed", code: "model_unavailable" }, now);
}

describe("the trace of a run", () => {
  it("shows a compaction inside the agent's tenure, as an instant at the start of the model call it made room for", async () => {
    // Every call is one request to the provider: the summaries' requests are not the answer's retries.
    let sent = 0;
    const model: Model = {
      async *stream() {
        sent++;
        yield { type: "text-delta", delta: "what happened" };
        yield { type: "finish", finishReason: "stop", usage: { inputTokens: 100, outputTokens: 10 } };
      },
    };
    const long = Array.from(
      { length: 30 },
      (_, i): Message =>
        i % 2 ? { role: "assistant", agent: "solo", content: "a".repeat(200) } : { role: "user", content: "q".repeat(200) },
    );
    const net = new Network(new Agent({ name: "solo", instructions: "x", contextBudget: 600 }), {
      defaultModel: "m",
      compaction: { keepTurns: 2 },
    });
    const store = new MemoryStore("solo");
    store.history = long;
    const { spans } = await traced(net, model, new TraceBuilder(1, { providerRequests: () => sent }), {
      store,
      conversation: store.conversation(),
      input: { kind: "message", text: "now" },
    });
    const agent = spans.find((s) => s.kind === "agent")!;
    const compaction = spans.find((s) => s.kind === "compaction")!;
    expect(compaction).toMatchObject({ parentId: agent.id, attributes: { replaced: 28, kept: 3 } });
    expect(compaction.end).toBe(compaction.start);
    const models = spans.filter((s) => s.kind === "model");
    expect(models).toHaveLength(1);
    expect(models[0]!.start).toBeLessThan(compaction.start);
    expect(sent).toBeGreaterThan(1);
    expect(models[0]!.attributes.retries).toBeUndefined();
  });

  it("counts a model call's retries by the requests the provider's client sent, on success and on failure", async () => {
    let sent = 0;
    const retrying = (requests: number, fail: boolean): Model => ({
      async *stream() {
        sent += requests;
        if (fail) throw Object.assign(new Error("provider down"), { code: "model_unavailable" });
        yield { type: "finish", finishReason: "stop" };
      },
    });
    const net = new Network(new Agent({ name: "solo", instructions: "x" }), { defaultModel: "m" });
    const ok = await traced(net, retrying(3, false), new TraceBuilder(1, { providerRequests: () => sent }));
    expect(ok.spans.find((s) => s.kind === "model")!.attributes).toMatchObject({ retries: 2 });
    const once = await traced(net, retrying(1, false), new TraceBuilder(1, { providerRequests: () => sent }));
    expect(once.spans.find((s) => s.kind === "model")!.attributes.retries).toBeUndefined();
    const failed = await traced(net, retrying(2, true), new TraceBuilder(1, { providerRequests: () => sent }));
    expect(failed.spans.find((s) => s.kind === "model")!.attributes).toMatchObject({ retries: 1, error: expect.any(String) });
  });

  it("keeps no content unless asked to", async () => {
    const model: Model = {
      async *stream() {
        yield { type: "text-delta", delta: "hello" };
        yield { type: "finish", finishReason: "stop" };
      },
    };
    const net = new Network(new Agent({ name: "solo", instructions: "x" }), { defaultModel: "m" });
    const plain = new TraceBuilder(1);
    await traced(net, model, plain);
    expect(plain.content).toBeNull();
    const capturing = new TraceBuilder(1, { content: { input: "hi" } });
    const trace = await traced(net, model, capturing);
    const answer = trace.spans.find((s) => s.kind === "model")!;
    expect(JSON.parse(capturing.content!.get(answer.id)!["gen_ai.output.messages"]!)).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "hello" }], finish_reason: "stop" },
    ]);
    expect(JSON.stringify(trace)).not.toContain("hello");
  });
});

describe("the trace of a call, by what the loop planned", () => {
  it("traces an agent's own tool named like a transfer as a tool, and a refused transfer as a refused handoff", async () => {
    const lookalike = tool({ name: "transfer_to_billing", description: "An own tool.", parameters: z.object({}), execute: () => "ran" });
    const billing = new Agent({ name: "billing", instructions: "You bill." });
    const triage = new Agent({ name: "triage", instructions: "You route.", tools: [lookalike], handoffs: [billing] });
    const model = new ScriptedModel([
      {
        toolCalls: [
          { id: "own", name: "transfer_to_billing" },
          { id: "bad", name: "transfer_to_nobody" },
        ],
      },
      { text: "Done." },
    ]);
    const { spans } = await traced(new Network(triage, { defaultModel: "m" }), model);
    expect(spans.filter((s) => s.kind === "tool" || s.kind === "refused-handoff").map((s) => [s.kind, s.name])).toEqual([
      ["tool", "transfer_to_billing"],
      ["refused-handoff", "transfer_to_nobody"],
    ]);
    expect(spans.find((s) => s.kind === "tool")!.attributes).toMatchObject({ "gen_ai.tool.name": "transfer_to_billing", error: false });
    expect(spans.some((s) => s.kind === "handoff")).toBe(false);
  });

  it("marks the model call whose answer announced a transfer it did not make, and no other", async () => {
    const billing = new Agent({ name: "billing", description: "Charges and refunds.", instructions: "You bill." });
    const triage = new Agent({ name: "triage", instructions: "You route.", handoffs: [billing] });
    const model = new ScriptedModel([
      { toolCalls: [{ id: "bad", name: "transfer_to_nobody" }] },
      { text: "Let me transfer you to billing." },
    ]);
    const { spans } = await traced(new Network(triage, { defaultModel: "m" }), model);
    const models = spans.filter((s) => s.kind === "model");
    expect(models.map((s) => s.attributes["handoff.announced_not_made"])).toEqual([
      undefined,
      `'triage' said "Let me transfer you to billing" but called no transfer tool.`,
    ]);
  });
});

describe("the trace's figures", () => {
  it("are the times the events arrived at: time to first token, durations and tokens of each model call, each tool's span", () => {
    const builder = new TraceBuilder(1, { providerRequests: () => 0 });
    const feed: Array<[number, RunEvent]> = [
      [1_000, { type: "run-start", conversationId: "c", agent: "solo", model: "m" }],
      [1_010, { type: "step-start", stepIndex: 0, agent: "solo" }],
      [1_025, { type: "text-delta", delta: "Looking" }],
      [1_040, { type: "tool-call", toolCallId: "l", name: "lookup", args: {}, plan: "tool" }],
      [1_050, { type: "step-finish", stepIndex: 0, finishReason: "tool_calls", usage: { inputTokens: 7, outputTokens: 3 } }],
      [1_062, { type: "tool-result", toolCallId: "l", name: "lookup", result: "found", isError: false }],
      [1_070, { type: "step-start", stepIndex: 1, agent: "solo" }],
      [1_071, { type: "text-delta", delta: "Found." }],
      [1_090, { type: "step-finish", stepIndex: 1, finishReason: "stop", usage: { inputTokens: 12, outputTokens: 2 } }],
      [1_095, { type: "done", status: "completed", text: "Found.", agent: "solo", handoffs: [], handoffCount: 0 }],
    ];
    for (const [now, event] of feed) builder.record(event, now);
    const { spans } = builder.finish(1, { status: "completed" }, 1_100);
    const figures = (kind: string) =>
      spans.filter((s) => s.kind === kind).map((s) => ({ start: s.start, durationMs: (s.end ?? Number.NaN) - s.start, ...s.attributes }));
    expect(figures("model")).toEqual([
      expect.objectContaining({
        start: 1_010,
        durationMs: 40,
        timeToFirstTokenMs: 15,
        "gen_ai.usage.input_tokens": 7,
        "gen_ai.usage.output_tokens": 3,
        "gen_ai.response.finish_reasons": "tool_calls",
      }),
      expect.objectContaining({
        start: 1_070,
        durationMs: 20,
        timeToFirstTokenMs: 1,
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 2,
      }),
    ]);
    expect(figures("tool")).toEqual([
      expect.objectContaining({ start: 1_040, durationMs: 22, "gen_ai.tool.name": "lookup", error: false }),
    ]);
    expect(figures("agent")).toEqual([expect.objectContaining({ start: 1_000, durationMs: 100, "gen_ai.agent.name": "solo" })]);
    expect(figures("turn")[0]).toMatchObject({ durationMs: 1_100 - spans.find((s) => s.kind === "turn")!.start, status: "completed" });
  });
});
