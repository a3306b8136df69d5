/**
 * What a host sees of a run: `runTurnItems` (each commit after its step's events, the outcome
 * returned), `run-start`'s fields, the stored context carried in, `applyCommit`, cancellation
 * while tools run, and the corners of settling approvals and delegation. Written against the
 * survivors of a mutation run (test/mutation/survivors.json).
 */
import { beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { newConversation, Agent, type Model, Network, runTurnItems, tool, type TurnOutcome } from "../../src/runtime/index.ts";
import { newHolding } from "../../src/runtime/holding.ts";
import { applyCommit } from "../../src/runtime/ports/store-port.ts";
import type { RunItemsOptions, TurnItem } from "../../src/runtime/run-options.ts";
import { MemoryStore, ScriptedModel, type ScriptStep } from "../../src/testing/index.ts";
import { echo, explode, refunds, supportLike, withApprovals } from "../support/networks.ts";
import { ofType, playTurn } from "../support/run.ts";

beforeEach(() => {
  refunds.length = 0;
});

async function items(
  network: Network,
  script: ScriptStep[],
  more: Partial<RunItemsOptions> = {},
): Promise<{ items: TurnItem[]; outcome: TurnOutcome }> {
  const run = runTurnItems({
    conversationId: "c",
    network,
    model: new ScriptedModel(script),
    conversation: newConversation(network.entry.name),
    input: { kind: "message", text: "hi" },
    ...more,
  });
  const seen: TurnItem[] = [];
  let next = await run.next();
  for (; !next.done; next = await run.next()) seen.push(next.value);
  return { items: seen, outcome: next.value };
}

describe("runTurnItems", () => {
  it("hands each commit over after the events of its step, carrying the events it announces (results, handoff, step-finish), and returns the outcome", async () => {
    const { items: seen, outcome } = await items(supportLike(), [
      { toolCalls: [{ id: "t", name: "transfer_to_billing" }] },
      { text: "billing" },
    ]);
    expect(seen.map((i) => i.type)).toEqual([
      "run-start",
      "commit",
      "step-start",
      "tool-call",
      "commit",
      "step-start",
      "text-delta",
      "commit",
      "done",
    ]);
    expect(seen[1]).toEqual({ type: "commit", commit: { messages: [{ role: "user", content: "hi" }] }, events: [] });
    expect(seen[4]).toMatchObject({
      type: "commit",
      commit: { holding: { activeAgent: "billing", handoffCount: 1 }, handoff: { kind: "transfer", from: "triage", to: "billing" } },
    });
    const announced = (i: number) => {
      const item = seen[i]!;
      return item.type === "commit" ? item.events.map((e) => e.type) : [];
    };
    expect(announced(4)).toEqual(["tool-result", "handoff", "step-finish"]);
    expect(announced(7)).toEqual(["step-finish"]);
    expect(outcome).toEqual({ status: "completed" });
  });

  it("returns awaiting_approval, and a failure's code", async () => {
    expect((await items(withApprovals(), [{ toolCalls: [{ name: "refund", args: { amount: 50 } }] }])).outcome).toEqual({
      status: "awaiting_approval",
    });
    const failed = await items(supportLike(), [{ throws: new Error("down") }]);
    expect(failed.outcome).toEqual({ status: "failed", code: "internal_error" });
    expect(failed.items.at(-1)).toEqual({ type: "error", code: "internal_error", message: "down" });
  });

  it("takes a commit that failed back with throw(), and ends the turn with an error event", async () => {
    const run = runTurnItems({
      conversationId: "c",
      network: supportLike(),
      model: new ScriptedModel([]),
      conversation: newConversation("triage"),
      input: { kind: "message", text: "hi" },
    });
    expect((await run.next()).value).toMatchObject({ type: "run-start" });
    expect((await run.next()).value).toMatchObject({ type: "commit" });
    expect((await run.throw(new Error("storage went away"))).value).toEqual({
      type: "error",
      code: "internal_error",
      message: "storage went away",
    });
    expect(await run.next()).toEqual({ done: true, value: { status: "failed", code: "internal_error" } });
  });
});

describe("run-start", () => {
  it("names the model, or a labelled model's label with demo set; says resumed only on a resume", async () => {
    const plain = await playTurn(supportLike(), "hi", [{ text: "ok" }]);
    expect(plain.events[0]).toEqual({ type: "run-start", conversationId: "c1", agent: "triage", model: "default-model" });
    const labelled: Model = {
      label: "offline demo",
      async *stream() {
        yield { type: "text-delta", delta: "hello" };
        yield { type: "finish", finishReason: "stop" };
      },
    };
    const { items: seen } = await items(supportLike(), [], { model: labelled });
    expect(seen[0]).toEqual({ type: "run-start", conversationId: "c", agent: "triage", model: "offline demo", demo: true });
  });
});

describe("the stored context", () => {
  it("is carried into the turn: instructions and tools read it", async () => {
    const seen: unknown[] = [];
    const probe = tool({ name: "probe", description: "p", parameters: z.object({}), execute: (_a, ctx) => (seen.push(ctx.context), "ok") });
    const network = new Network(
      new Agent({ name: "solo", instructions: ({ context }) => `Order ${String(context.order)}.`, tools: [probe] }),
      {
        defaultModel: "m",
      },
    );
    const store = new MemoryStore("solo");
    store.holding.context = { order: "A7" };
    const { model } = await playTurn(network, "hi", [{ toolCalls: [{ name: "probe" }] }, { text: "ok" }], { store });
    expect(model.requests[0]!.instructions).toBe("Order A7.");
    expect(seen).toEqual([{ order: "A7" }]);
  });

  it("is replaced by a commit that carries one, and kept by one that does not", () => {
    const holding = { ...newHolding("a"), handoffCount: 1, context: { order: "A7" } };
    const state = { holding, suspension: null };
    expect(applyCommit(state, { messages: [] })).toEqual(state);
    const moved = { ...holding, activeAgent: "b", context: { order: "B2" } };
    expect(applyCommit(state, { messages: [], holding: moved })).toEqual({ holding: moved, suspension: null });
  });
});

describe("a run cancelled while its tools run", () => {
  it("commits the step with the answers of the tools that ran, then ends cancelled without another model call", async () => {
    const controller = new AbortController();
    const stopper = tool({
      name: "stopper",
      description: "s",
      parameters: z.object({}),
      execute: () => (controller.abort(), "done anyway"),
    });
    const network = new Network(new Agent({ name: "solo", instructions: "s", tools: [stopper] }), { defaultModel: "m" });
    const { items: seen } = await items(network, [{ toolCalls: [{ id: "s", name: "stopper" }] }], { signal: controller.signal });
    const commits = seen.filter((i) => i.type === "commit");
    expect(commits).toHaveLength(2);
    expect(commits[1]).toMatchObject({
      commit: { messages: [{ role: "assistant" }, { role: "tool", toolCallId: "s", content: "done anyway" }] },
    });
    expect(seen.at(-1)).toMatchObject({ type: "done", status: "cancelled", agent: "solo" });
  });
});

describe("a run cancelled while it compacts", () => {
  // The history needs two summary calls; the cancel arrives during the first, or during the last.
  it.each([
    [1, ["summary"]],
    [2, ["summary", "summary"]],
  ])("stops at the summary call it arrived in (call %i), and makes no answer call", async (cancelAt, expected) => {
    const controller = new AbortController();
    const requests: string[] = [];
    const model: Model = {
      async *stream(request) {
        requests.push(request.instructions.startsWith("Summarize") ? "summary" : "answer");
        if (requests.length === cancelAt) controller.abort();
        yield { type: "text-delta", delta: "S" };
        yield { type: "finish", finishReason: "stop" };
      },
    };
    const history = Array.from({ length: 12 }, (_, i) =>
      i % 2 ? { role: "assistant" as const, agent: "solo", content: "a".repeat(200) } : { role: "user" as const, content: "u".repeat(200) },
    );
    const network = new Network(new Agent({ name: "solo", instructions: "x", contextBudget: 500 }), { defaultModel: "m" });
    const { items: seen } = await items(network, [], {
      model,
      conversation: { ...newConversation("solo"), history },
      signal: controller.signal,
    });
    expect(requests).toEqual(expected);
    expect(seen.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
  });
});

describe("a resumed leg through runTurnItems", () => {
  it("hands over the completed step's commit, clearing the suspension", async () => {
    const first = await playTurn(withApprovals(), "refund", [{ toolCalls: [{ id: "r", name: "refund", args: { amount: 50 } }] }]);
    const { items: seen, outcome } = await items(withApprovals(), [{ text: "Refunded." }], {
      conversation: first.store.conversation(),
      input: { kind: "resume", suspension: first.store.suspension!, decisions: [{ toolCallId: "r", approved: true }] },
    });
    const commit = seen.find((i) => i.type === "commit");
    expect(commit).toMatchObject({ commit: { suspension: null, messages: [{ role: "assistant" }, { role: "tool", toolCallId: "r" }] } });
    // The holder did not change: the commit carries no holding.
    expect(commit).not.toHaveProperty("commit.holding");
    expect(outcome).toEqual({ status: "completed" });
  });
});

describe("a run cancelled before its tools start", () => {
  it("starts none of them", async () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const work = tool({ name: "work", description: "w", parameters: z.object({}), execute: () => (ran.push("work"), "done") });
    const network = new Network(new Agent({ name: "solo", instructions: "s", tools: [work] }), {
      defaultModel: "m",
      // The cancel arrives while the calls are being checked.
      toolGuardrails: [() => void controller.abort()],
    });
    const { items: seen } = await items(network, [{ toolCalls: [{ name: "work" }, { name: "work" }] }], { signal: controller.signal });
    expect(ran).toEqual([]);
    expect(seen.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
  });
});

describe("settling an approval", () => {
  it("answers an approved call whose tool its agent no longer has, listing the tools it has", async () => {
    const first = await playTurn(withApprovals(), "refund", [{ toolCalls: [{ id: "r", name: "refund", args: { amount: 50 } }] }]);
    const redeployed = new Network(new Agent({ name: "triage", instructions: "t", tools: [explode, echo] }), { defaultModel: "m" });
    const { events } = await playTurn(
      redeployed,
      { kind: "resume", suspension: first.store.suspension!, decisions: [{ toolCallId: "r", approved: true }] },
      [{ text: "sorry" }],
      { store: first.store },
    );
    expect(ofType(events, "tool-result")[0]).toMatchObject({
      result: "Unknown tool 'refund'. Available tools: explode, echo.",
      isError: true,
    });
    expect(refunds).toEqual([]);
  });
});

describe("the runaway-error guard and handoffs", () => {
  it("does not count an accepted handoff as a success: the failures before it still count for the agent that takes over", async () => {
    const network = new Network(supportLike().entry, { defaultModel: "m" });
    const { events } = await playTurn(
      network,
      "hi",
      [{ toolCalls: [{ name: "explode" }, { name: "transfer_to_shipping" }] }, { toolCalls: [{ name: "explode" }] }],
      { limits: { maxToolErrorSteps: 2 } },
    );
    expect(ofType(events, "error")[0]).toMatchObject({ code: "too_many_tool_errors" });
  });
});

describe("usage", () => {
  it("does not count a call a guardrail blocked", async () => {
    const network = new Network(supportLike().entry, { defaultModel: "m", toolGuardrails: [() => ({ block: true, reason: "no" })] });
    const { events } = await playTurn(network, "hi", [{ toolCalls: [{ name: "echo", args: { text: "a" } }] }, { text: "ok" }]);
    expect(ofType(events, "done")[0]!.usage).toMatchObject({ toolCalls: 0 });
  });
});

describe("delegation", () => {
  it("takes an Agent only", async () => {
    const odd = tool({
      name: "odd",
      description: "o",
      parameters: z.object({}),
      execute: (_a, ctx) => ctx.delegate({ name: "nobody" }, "hi"),
    });
    const network = new Network(new Agent({ name: "solo", instructions: "s", tools: [odd] }), { defaultModel: "m" });
    const { events } = await playTurn(network, "hi", [{ toolCalls: [{ name: "odd" }] }, { text: "ok" }]);
    expect(ofType(events, "tool-result")[0]).toMatchObject({ result: "Tool 'odd' failed: delegate() takes an Agent.", isError: true });
  });
});
