/**
 * What the active agent's model is sent: the history filter of the transfer that brought it, and
 * compaction against its context budget — the boundary, later compactions, and the defaults.
 */
import { describe, expect, it } from "vitest";
import { compactedView, estimateTokens } from "../../src/runtime/compaction.ts";
import { Agent, handoff, type Message, type Model, type ModelRequest, Network } from "../../src/runtime/index.ts";
import type { Compaction } from "../../src/runtime/compaction.ts";
import { eventsOfTurn, ofType, playTurn } from "../support/run.ts";
import { MemoryStore } from "../support/scripted-model.ts";

const usersOnly = (messages: readonly Message[]) => messages.filter((m) => m.role === "user");

describe("the history filter of a transfer", () => {
  it("applies while the agent it brought holds the conversation, and no longer once that agent hands off", async () => {
    const c = new Agent({ name: "c", instructions: "c" });
    const b = new Agent({ name: "b", instructions: "b", handoffs: [c] });
    const a = new Agent({ name: "a", instructions: "a", handoffs: [handoff(b, { historyFilter: usersOnly })] });
    const net = new Network(a, { defaultModel: "m", transferScope: "declared" });
    const { model } = await playTurn(net, "hi", [
      { toolCalls: [{ id: "1", name: "transfer_to_b" }] },
      { toolCalls: [{ id: "2", name: "transfer_to_c" }] },
      { text: "c here" },
    ]);
    expect(model.requests[1]!.messages).toEqual([{ role: "user", content: "hi" }]);
    expect(model.requests[2]!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"]);
  });

  it("is not applied when the agent that handed off is gone from the network", async () => {
    const b = new Agent({ name: "b", instructions: "b" });
    const net = new Network(b, { defaultModel: "m" });
    const store = new MemoryStore("b");
    store.history = [
      { role: "user", content: "earlier" },
      { role: "assistant", agent: "gone", content: "handing over" },
    ];
    store.lastHandoff = { kind: "transfer", from: "gone", to: "b", toolCallId: "t", stepIndex: 0 };
    const { model } = await playTurn(net, "now", [{ text: "ok" }], { store });
    expect(model.requests[0]!.messages).toHaveLength(3);
  });

  it("is the filter of the transfer to the agent that arrived, not of another transfer of the same agent", async () => {
    const b = new Agent({ name: "b", instructions: "b" });
    const x = new Agent({ name: "x", instructions: "x" });
    const a = new Agent({ name: "a", instructions: "a", handoffs: [handoff(x, { historyFilter: usersOnly }), b] });
    const net = new Network(a, { defaultModel: "m", transferScope: "declared" });
    const store = new MemoryStore("b");
    store.history = [
      { role: "user", content: "earlier" },
      { role: "assistant", agent: "a", content: "to b" },
    ];
    store.lastHandoff = { kind: "transfer", from: "a", to: "b", toolCallId: "t", stepIndex: 0 };
    const { model } = await playTurn(net, "now", [{ text: "ok" }], { store });
    expect(model.requests[0]!.messages).toHaveLength(3);
  });

  it("is not applied once the transfer's edge is gone from the network, nor to an agent the transfer did not bring", async () => {
    const b = new Agent({ name: "b", instructions: "b" });
    const c = new Agent({ name: "c", instructions: "c" });
    const history: Message[] = [
      { role: "user", content: "earlier" },
      { role: "assistant", agent: "a", content: "to b" },
    ];
    const arrival = { from: "a", to: "b", toolCallId: "t", stepIndex: 0 };
    const gone = new Network(new Agent({ name: "a", instructions: "a" }), { defaultModel: "m", transferScope: "declared", register: [b] });
    const withoutEdge = new MemoryStore("b");
    Object.assign(withoutEdge, { history: [...history], lastHandoff: arrival });
    expect((await playTurn(gone, "now", [{ text: "ok" }], { store: withoutEdge })).model.requests[0]!.messages).toHaveLength(3);
    const filtered = new Network(new Agent({ name: "a", instructions: "a", handoffs: [handoff(b, { historyFilter: usersOnly }), c] }), {
      defaultModel: "m",
      transferScope: "declared",
    });
    const otherHolder = new MemoryStore("c");
    Object.assign(otherHolder, { history: [...history], lastHandoff: arrival });
    expect((await playTurn(filtered, "now", [{ text: "ok" }], { store: otherHolder })).model.requests[0]!.messages).toHaveLength(3);
  });
});

/** A model that reports no usage (so the estimate is not recalibrated) and records its requests. */
function recording(): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async *stream(request) {
      requests.push(request);
      yield { type: "text-delta", delta: request.instructions.startsWith("Summarize") ? "S2" : "answer" };
      yield { type: "finish", finishReason: "stop" };
    },
  };
}

const turns = (n: number): Message[] =>
  Array.from(
    { length: n * 2 },
    (_, i): Message =>
      i % 2 ? { role: "assistant", agent: "solo", content: `a${i}`.repeat(20) } : { role: "user", content: `u${i}`.repeat(20) },
  );

async function play(net: Network, history: Message[], compaction?: Compaction) {
  const model = recording();
  const store = new MemoryStore("solo");
  store.history = history;
  const events = await eventsOfTurn(net, model, {
    store,
    conversation: { ...store.conversation(), ...(compaction ? { compaction } : {}) },
    input: { kind: "message", text: "next" },
  });
  return { model, events, store };
}

describe("compaction against the context budget", () => {
  it("leaves a request exactly at the budget alone, and compacts one token over it", async () => {
    const history = turns(6);
    const size = estimateTokens("x", [...history, { role: "user", content: "next" }], []);
    const at = await play(new Network(new Agent({ name: "solo", instructions: "x", contextBudget: size }), { defaultModel: "m" }), [
      ...history,
    ]);
    expect(ofType(at.events, "compaction")).toEqual([]);
    const over = await play(new Network(new Agent({ name: "solo", instructions: "x", contextBudget: size - 1 }), { defaultModel: "m" }), [
      ...history,
    ]);
    expect(ofType(over.events, "compaction")).toHaveLength(1);
  });
});

/** The estimate of a request that keeps everything from `cut` on, with the allowance made for a summary. */
const keptSize = (history: Message[], cut: number) =>
  estimateTokens("x", compactedView([...history, { role: "user", content: "next" }], { replaces: cut, summary: "x".repeat(400) }), []);

describe("compaction defaults and later compactions", () => {
  it("keeps four turns by default and summarizes with the agent's own model", async () => {
    const history = turns(8);
    const budget = keptSize(history, 10);
    const { model, events } = await play(
      new Network(new Agent({ name: "solo", instructions: "x", contextBudget: budget, model: "own" }), { defaultModel: "m" }),
      [...history],
    );
    // Four turns kept: three stored ones and "next".
    expect(ofType(events, "compaction")[0]).toMatchObject({ replaced: 10, kept: 7 });
    expect(model.requests[0]).toMatchObject({ model: "own", instructions: expect.stringMatching(/^Summarize/) });
  });

  it("keeps fewer turns when keepTurns do not fit, sizing each candidate with room for a 400-character summary", async () => {
    const history = turns(8);
    // Turns start at even indexes; with "next", index 12 keeps three turns and 14 keeps two.
    const tightFit = new Network(new Agent({ name: "solo", instructions: "x", contextBudget: keptSize(history, 12) }), {
      defaultModel: "m",
      compaction: { keepTurns: 6 },
    });
    expect(ofType((await play(tightFit, [...history])).events, "compaction")[0]).toMatchObject({ replaced: 12 });
    const oneShort = new Network(new Agent({ name: "solo", instructions: "x", contextBudget: keptSize(history, 12) - 1 }), {
      defaultModel: "m",
      compaction: { keepTurns: 6 },
    });
    expect(ofType((await play(oneShort, [...history])).events, "compaction")[0]).toMatchObject({ replaced: 14 });
  });

  it("a later compaction starts where the last one ended, on top of its summary; none when the cut would not move", async () => {
    const history = turns(10);
    const net = new Network(new Agent({ name: "solo", instructions: "x", contextBudget: keptSize(history, 18) }), {
      defaultModel: "m",
      compaction: { keepTurns: 2 },
    });
    const later = await play(net, [...history], { replaces: 8, summary: "S1" });
    const summary = later.model.requests[0]!;
    expect(summary.messages[0]).toEqual({ role: "system", agent: "compaction", content: "Summary so far: S1" });
    expect(summary.messages[1]!.content).toContain("User: u8");
    expect(summary.messages[1]!.content).not.toContain("User: u6");
    expect(ofType(later.events, "compaction")[0]).toMatchObject({ replaced: 18 });
    // Over budget with only the new message left to keep: nothing more can be cut, so nothing is summarized.
    const tight = new Network(new Agent({ name: "solo", instructions: "x", contextBudget: 1 }), {
      defaultModel: "m",
      compaction: { keepTurns: 2 },
    });
    const stuck = await play(tight, [...history], { replaces: 20, summary: "S1" });
    expect(ofType(stuck.events, "compaction")).toEqual([]);
    expect(stuck.model.requests).toHaveLength(1);
  });
});
