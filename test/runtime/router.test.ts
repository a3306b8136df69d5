/**
 * A router on an agent (or the network's entry agent): a user's message it is sure of is handed on
 * before any model call, by the same rules as a model's transfer, recorded as the router's with its
 * confidence, and the target answers in the same turn; unsure, abstaining, or naming no target of
 * the agent, the agent's model decides as it would without one.
 */
import { describe, expect, it } from "vitest";
import { Agent, Network, type RouteDecision, type Router, type RouteRequest, type RunEvent } from "../../src/runtime/index.ts";
import { LexicalRouter, trainLexicalRouter } from "../../src/router/lexical-router.ts";
import { MemoryStore, runScripted } from "../../src/testing/index.ts";

/** A router that answers what it is told to, and keeps what it was asked. */
function fixed(decision: RouteDecision | null): Router & { asked: RouteRequest[] } {
  const asked: RouteRequest[] = [];
  return { asked, route: (request) => (asked.push(request), decision) };
}

function network(router: Router, threshold = 0.8, options: { maxHandoffs?: number; onNetwork?: boolean } = {}) {
  const billing = new Agent({ name: "billing", description: "Charges and refunds.", instructions: "You do billing." });
  const cards = new Agent({ name: "cards", description: "Cards.", instructions: "You do cards." });
  const config = { router, threshold, name: "lexical" };
  const triage = new Agent({
    name: "triage",
    description: "Routes.",
    instructions: "You route.",
    handoffs: [billing, cards],
    ...(options.onNetwork ? {} : { router: config }),
  });
  billing.addHandoff(triage);
  return new Network(triage, {
    defaultModel: "m",
    transferScope: "declared",
    ...(options.onNetwork ? { router: config } : {}),
    ...(options.maxHandoffs !== undefined ? { maxHandoffs: options.maxHandoffs } : {}),
  });
}

const handoffs = (events: RunEvent[]) => events.filter((e): e is Extract<RunEvent, { type: "handoff" }> => e.type === "handoff");

describe("a router", () => {
  it.each([
    ["per-target", "transfer_to_billing", {}],
    ["single", "transfer_to_agent", { agent_name: "billing" }],
    ["named", "handoff", { name: "billing" }],
  ] as const)(
    "in the %s style, writes its transfer as the call a model would make, and plans it from its decision",
    async (style, name, args) => {
      const net = network(fixed({ agent: "billing", confidence: 0.95 }));
      const styled = new Network(net.entry, { ...net.options, toolStyle: style, register: [...net.agents.values()] });
      const turn = await runScripted(styled, "I was charged twice", [{ text: "Billing here." }]);
      expect(handoffs(turn.events).map((h) => [h.from, h.to])).toEqual([["triage", "billing"]]);
      const call = turn.store.history.find((m) => m.role === "assistant")!;
      expect(call.role === "assistant" && call.toolCalls?.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
        [name, { ...args, reason: "lexical: 0.95" }],
      ]);
    },
  );

  it("hands a message it is sure of to its target before any model call; the target answers in the same turn", async () => {
    const router = fixed({ agent: "billing", confidence: 0.93 });
    const turn = await runScripted(network(router), "I was charged twice", [{ text: "Billing here: I see the double charge." }]);
    // The first model call is billing's: triage's model was never asked.
    expect(turn.model.requests.map((r) => r.agent)).toEqual(["billing"]);
    expect(router.asked).toEqual([
      {
        message: "I was charged twice",
        agent: "triage",
        targets: ["billing", "cards"],
        history: [{ role: "user", content: "I was charged twice" }],
      },
    ]);
    expect(handoffs(turn.events)).toMatchObject([
      { kind: "transfer", from: "triage", to: "billing", reason: "lexical: 0.93", router: { name: "lexical", confidence: 0.93 } },
    ]);
    expect(turn.events.find((e) => e.type === "tool-call")).toMatchObject({ name: "transfer_to_billing", plan: "transfer" });
    // The history holds the transfer as triage's, answered, so any model reading it later sees a valid call.
    expect(turn.store.history.slice(0, 3)).toMatchObject([
      { role: "user" },
      { role: "assistant", agent: "triage", toolCalls: [{ name: "transfer_to_billing", plan: "transfer" }] },
      { role: "tool", name: "transfer_to_billing", isError: false },
    ]);
    const done = turn.events.at(-1) as Extract<RunEvent, { type: "done" }>;
    // One model call in the turn: billing's.
    expect(done).toMatchObject({ status: "completed", agent: "billing", usage: { modelCalls: 1 } });
  });

  it("leaves the decision to the model when it is unsure, abstains, or names no target of the agent", async () => {
    for (const decision of [
      { agent: "billing", confidence: 0.5 },
      null,
      { agent: "shipping", confidence: 0.99 },
      { agent: "triage", confidence: 0.99 },
    ]) {
      const turn = await runScripted(network(fixed(decision)), "hello", [{ text: "Hello, how can I help?" }]);
      expect(
        turn.model.requests.map((r) => r.agent),
        JSON.stringify(decision),
      ).toEqual(["triage"]);
      expect(handoffs(turn.events)).toEqual([]);
    }
  });

  it("is asked only for the user's message that starts a turn, not when its agent gets the conversation back", async () => {
    const router = fixed({ agent: "billing", confidence: 0.99 });
    const net = network(router);
    const first = await runScripted(net, "refund please", [
      { toolCalls: [{ name: "transfer_to_triage", args: {} }] },
      { text: "Triage again." },
    ]);
    expect(handoffs(first.events).map((h) => `${h.from}→${h.to}`)).toEqual(["triage→billing", "billing→triage"]);
    // Back with triage in the same turn: its model answers, the router is not asked again.
    expect(router.asked).toHaveLength(1);
    expect(first.model.requests.map((r) => r.agent)).toEqual(["billing", "triage"]);
  });

  it("hands on by the same rules as a model: past maxHandoffs the transfer is refused, and the agent's model recovers", async () => {
    const turn = await runScripted(network(fixed({ agent: "billing", confidence: 0.99 }), 0.8, { maxHandoffs: 0 }), "refund", [
      { text: "I cannot transfer you now; how can I help?" },
    ]);
    expect(handoffs(turn.events)).toEqual([]);
    expect(turn.events.find((e) => e.type === "tool-result")).toMatchObject({ name: "transfer_to_billing", isError: true });
    expect(turn.model.requests.map((r) => r.agent)).toEqual(["triage"]);
  });

  // Both shrunk from the run loop's property test (test/properties/runtime.property.test.ts).
  it("spends none of the agent's steps on a routed transfer the rules refuse: at maxSteps 1 its model still answers", async () => {
    const turn = await runScripted(network(fixed({ agent: "billing", confidence: 0.99 })), "refund", [{ text: "I will help you here." }], {
      limits: { maxSteps: 1, maxHandoffsPerTurn: 0 },
    });
    expect(turn.events.find((e) => e.type === "tool-result")).toMatchObject({ name: "transfer_to_billing", isError: true });
    expect(turn.events.at(-1)).toMatchObject({ type: "done", status: "completed", agent: "triage" });
  });

  it("gives each routed call an id of its own across turns, so the stored history never repeats one", async () => {
    const net = network(fixed({ agent: "billing", confidence: 0.99 }));
    const store = new MemoryStore("triage");
    await runScripted(net, "refund", [{ toolCalls: [{ name: "transfer_to_triage", args: {} }] }, { text: "Triage here." }], { store });
    await runScripted(net, "refund again", [{ text: "Billing again." }], { store });
    const ids = store.history.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []).map((c) => c.id) : []));
    expect(ids.filter((id) => id.startsWith("router_"))).toHaveLength(2);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("given to the network, routes for its entry agent; a lexical router trained on examples works the same way", async () => {
    const examples = [
      ["I was charged twice", "billing"],
      ["refund my payment", "billing"],
      ["a fee I do not know", "billing"],
      ["my card has not arrived", "cards"],
      ["I lost my card", "cards"],
      ["activate my new card", "cards"],
    ].map(([text, label]) => ({ text: text!, label: label! }));
    const lexical = new LexicalRouter(trainLexicalRouter(examples));
    const router: Router = {
      route: ({ message }) => {
        const { label, confidence } = lexical.route(message);
        return { agent: label, confidence };
      },
    };
    const turn = await runScripted(network(router, 0.2, { onNetwork: true }), "I lost my card yesterday", [{ text: "Cards here." }]);
    expect(handoffs(turn.events)).toMatchObject([{ to: "cards", router: { name: "lexical" } }]);
    expect(turn.model.requests.map((r) => r.agent)).toEqual(["cards"]);
  });
});
