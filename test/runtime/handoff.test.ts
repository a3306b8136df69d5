import { describe, expect, it } from "vitest";
import { Agent, Network } from "../../src/runtime/index.ts";
import { supportLike } from "../support/networks.ts";
import { ofType, playTurn } from "../support/run.ts";

describe("a transfer", () => {
  it("swaps the agent after the step: system prompt replaced, tools and model the target's, history kept", async () => {
    const { events, model, store } = await playTurn(supportLike(), "I was charged twice", [
      { text: "Let me get billing. ", toolCalls: [{ id: "t1", name: "transfer_to_billing", args: { reason: "double charge" } }] },
      { text: "Billing here." },
    ]);

    expect(events.map((e) => e.type)).toEqual([
      "run-start",
      "step-start",
      "text-delta",
      "text-delta",
      "text-delta",
      "text-delta",
      "tool-call",
      "tool-result",
      "handoff",
      "step-finish",
      "step-start",
      "text-delta",
      "text-delta",
      "step-finish",
      "done",
    ]);
    expect(ofType(events, "handoff")).toEqual([
      { type: "handoff", kind: "transfer", from: "triage", to: "billing", toolCallId: "t1", reason: "double charge", stepIndex: 0 },
    ]);
    expect(ofType(events, "tool-result")[0]).toMatchObject({
      toolCallId: "t1",
      result: "Transferred to 'billing'. double charge",
      isError: false,
    });
    expect(ofType(events, "done")[0]).toMatchObject({ status: "completed", text: "Billing here.", agent: "billing", handoffCount: 1 });

    const [first, second] = model.requests;
    expect(first).toMatchObject({ agent: "triage", model: "default-model", instructions: "You are triage." });
    expect(first!.tools.map((t) => t.name)).toEqual(["echo", "explode", "transfer_to_billing", "transfer_to_shipping"]);
    expect(second).toMatchObject({ agent: "billing", model: "billing-model", instructions: "You are billing." });
    expect(second!.tools.map((t) => t.name)).toEqual(["echo", "transfer_to_triage", "transfer_to_shipping"]);
    expect(second!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(store.holding.activeAgent).toBe("billing");
  });

  it("is described with the target's description and takes an optional reason only", async () => {
    const { model } = await playTurn(supportLike(), "hi", [{ text: "Hello." }]);
    const spec = model.requests[0]!.tools.find((t) => t.name === "transfer_to_billing");
    expect(spec).toEqual({
      name: "transfer_to_billing",
      description: "Transfer the conversation to 'billing'. Billing and refunds.",
      parameters: {
        type: "object",
        properties: { reason: { type: "string", description: "Why this agent should take over, in one sentence." } },
        additionalProperties: false,
      },
    });
  });

  it("is valid without a reason, and an empty or blank reason counts as none", async () => {
    for (const args of [{}, { reason: "" }, { reason: "   " }]) {
      const { events } = await playTurn(supportLike(), "bill", [
        { toolCalls: [{ id: "t", name: "transfer_to_billing", args }] },
        { text: "ok" },
      ]);
      const handoff = ofType(events, "handoff")[0]!;
      expect(handoff).not.toHaveProperty("reason");
      expect(ofType(events, "tool-result")[0]!.result).toBe("Transferred to 'billing'.");
    }
  });

  it("takes only the first of two transfers in a step and answers the other with an error", async () => {
    const { events, store, model } = await playTurn(supportLike(), "both", [
      {
        toolCalls: [
          { id: "a", name: "transfer_to_shipping" },
          { id: "b", name: "transfer_to_billing" },
        ],
      },
      { text: "Shipping here." },
    ]);
    expect(ofType(events, "handoff").map((h) => h.to)).toEqual(["shipping"]);
    const results = ofType(events, "tool-result");
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ["a", false],
      ["b", true],
    ]);
    expect(results[1]!.result).toMatch(/Only one transfer per step is taken/);
    expect(model.requests[1]!.agent).toBe("shipping");
    expect(store.history.filter((m) => m.role === "tool").map((m) => m.toolCallId)).toEqual(["a", "b"]);
  });

  it("runs a regular tool called beside it and keeps the model's call order", async () => {
    const { events, store } = await playTurn(supportLike(), "echo then bill", [
      {
        toolCalls: [
          { id: "x", name: "echo", args: { text: "hi" } },
          { id: "t", name: "transfer_to_billing" },
          { id: "y", name: "echo", args: { text: "again" } },
        ],
      },
      { text: "done" },
    ]);
    expect(ofType(events, "tool-result").map((r) => [r.toolCallId, r.isError, r.result])).toEqual([
      ["x", false, { echoed: "hi" }],
      ["t", false, "Transferred to 'billing'."],
      ["y", false, { echoed: "again" }],
    ]);
    expect(store.history.filter((m) => m.role === "tool").map((m) => m.toolCallId)).toEqual(["x", "t", "y"]);
  });

  it("refuses a target the model invents, lists the valid ones, and lets the agent carry on", async () => {
    const { events, model } = await playTurn(supportLike(), "refunds please", [
      { toolCalls: [{ id: "u", name: "transfer_to_refunds" }] },
      { text: "I will help myself." },
    ]);
    const result = ofType(events, "tool-result")[0]!;
    expect(result.isError).toBe(true);
    expect(result.result).toMatch(
      /'transfer_to_refunds' is not an available transfer.*transfer_to_billing \(billing\), transfer_to_shipping \(shipping\)/,
    );
    expect(ofType(events, "handoff")).toHaveLength(0);
    expect(model.requests[1]!.agent).toBe("triage");
    expect(ofType(events, "done")[0]!.agent).toBe("triage");
  });

  it("refuses transfers past maxHandoffsPerTurn with the limit message", async () => {
    const ping = (id: string, name: string) => ({ toolCalls: [{ id, name }] });
    const { events, model } = await playTurn(
      supportLike(),
      "loop",
      [ping("1", "transfer_to_billing"), ping("2", "transfer_to_triage"), ping("3", "transfer_to_billing"), { text: "staying in billing" }],
      { limits: { maxHandoffsPerTurn: 2 } },
    );
    expect(ofType(events, "handoff").map((h) => h.to)).toEqual(["billing", "triage"]);
    const refused = ofType(events, "tool-result").find((r) => r.toolCallId === "3")!;
    expect(refused).toMatchObject({ isError: true, result: "Handoff limit (2) reached; continue yourself." });
    expect(model.requests[3]!.agent).toBe("triage");
  });

  it("defaults to five transfers per turn, so a ping-pong network ends", async () => {
    const steps = Array.from({ length: 6 }, (_, i) => ({
      toolCalls: [{ id: `h${i}`, name: i % 2 ? "transfer_to_triage" : "transfer_to_billing" }],
    }));
    const { events } = await playTurn(supportLike(), "ping-pong", [...steps, { text: "enough" }]);
    expect(ofType(events, "handoff")).toHaveLength(5);
    expect(ofType(events, "tool-result").at(-1)!.result).toBe("Handoff limit (5) reached; continue yourself.");
  });

  it("counts the conversation's handoffs across turns and continues with the active agent", async () => {
    const first = await playTurn(supportLike(), "bill", [{ toolCalls: [{ id: "t", name: "transfer_to_billing" }] }, { text: "billing" }]);
    const second = await playTurn(supportLike(), "again", [{ text: "still billing" }], { store: first.store });
    expect(second.model.requests[0]!.agent).toBe("billing");
    expect(second.model.requests[0]!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(ofType(second.events, "run-start")[0]!.agent).toBe("billing");
    expect(ofType(second.events, "done")[0]).toMatchObject({ agent: "billing", handoffs: [], handoffCount: 1 });
  });

  it("offers only declared targets when the network's transferScope is 'declared'", () => {
    const b = new Agent({ name: "b", instructions: "b" });
    const c = new Agent({ name: "c", instructions: "c" });
    const a = new Agent({ name: "a", instructions: "a", handoffs: [b, c] });
    b.addHandoff(a);
    const network = new Network(a, { defaultModel: "m", transferScope: "declared" });
    expect([...network.toolset("b").transfers.keys()]).toEqual(["a"]);
    expect([...new Network(a, { defaultModel: "m" }).toolset("b").transfers.keys()]).toEqual(["a", "c"]);
  });
});
