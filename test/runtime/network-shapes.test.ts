/**
 * The shapes a network takes: which transfers each agent is offered by default in flat and tree
 * form, what a tree's options remove, closed networks, agents registered later, and what a
 * function `isEnabled` sees. Written against the survivors of a mutation run (test/mutation/survivors.json).
 */
import { describe, expect, it } from "vitest";
import { Agent, handoff, Network } from "../../src/runtime/index.ts";
import type { HandoffState } from "../../src/runtime/handoff/types.ts";
import { playTurn } from "../support/run.ts";

const agent = (name: string, more: Partial<ConstructorParameters<typeof Agent>[0]> = {}) =>
  new Agent({ name, instructions: name, ...more });
const targets = (network: Network, name: string, state?: HandoffState) => [...network.toolset(name, state).transfers.keys()].sort();

describe("the default transfer scope", () => {
  it("offers every other agent of a flat network, declared handoffs or not", () => {
    const loose = agent("loose");
    const b = agent("b");
    const network = new Network(agent("a", { handoffs: [b] }), { defaultModel: "m", register: [loose] });
    expect(targets(network, "a")).toEqual(["b", "loose"]);
    expect(targets(network, "loose")).toEqual(["a", "b"]);
  });

  it("offers only the tree's relations, and declared handoffs, once any agent has sub-agents", () => {
    const leaf = agent("leaf");
    const other = agent("other");
    const root = agent("root", { subAgents: [agent("kid", { subAgents: [leaf] }), agent("sib")], handoffs: [other] });
    const network = new Network(root, { defaultModel: "m" });
    expect(targets(network, "root")).toEqual(["kid", "other", "sib"]);
    expect(targets(network, "kid")).toEqual(["leaf", "root", "sib"]);
    expect(targets(network, "leaf")).toEqual(["kid"]);
    expect(targets(network, "other")).toEqual([]);
  });

  it("keeps a declared handoff's options for a tree relation in network scope", () => {
    const kid = agent("kid");
    const root = agent("root", { subAgents: [kid], handoffs: [handoff(kid, { isEnabled: false })] });
    const network = new Network(root, { defaultModel: "m", transferScope: "network" });
    expect(targets(network, "root")).toEqual([]);
    expect(targets(network, "kid")).toEqual(["root"]);
  });
});

describe("a tree's options", () => {
  it("removes the peers of an agent that disallows them, and only its own", () => {
    const shy = agent("shy", { disallowTransferToPeers: true });
    const root = agent("root", { subAgents: [shy, agent("x"), agent("y")] });
    const network = new Network(root, { defaultModel: "m" });
    expect(targets(network, "shy")).toEqual(["root"]);
    expect(targets(network, "x")).toEqual(["root", "shy", "y"]);
  });
});

describe("building and growing a network", () => {
  it("names an empty name as the fault", () => {
    expect(() => new Network(agent(" "), { defaultModel: "m" })).toThrow(
      new TypeError("An agent has an empty name: give every agent a unique name."),
    );
  });

  it("builds a closed network from its listed and registered agents, and refuses a handoff outside it", () => {
    const b = agent("b");
    const extra = agent("extra");
    const a = agent("a", { handoffs: [b] });
    expect(targets(new Network(a, { defaultModel: "m", agents: [b], register: [extra] }), "a")).toEqual(["b", "extra"]);
    expect(() => new Network(agent("a2", { handoffs: [agent("stranger")] }), { defaultModel: "m", agents: [b] })).toThrow(
      new TypeError("Agent 'a2' hands off to 'stranger', which is not part of this network: add it to the network's agents."),
    );
  });

  it("offers an agent registered later, even after the toolsets were first built, and keeps a tree's parents", () => {
    const kid = agent("kid");
    const root = agent("root", { subAgents: [kid] });
    const network = new Network(root, { defaultModel: "m" });
    expect(targets(network, "root")).toEqual(["kid"]);
    const late = agent("late");
    root.addHandoff(late);
    network.register(late);
    expect(targets(network, "root")).toEqual(["kid", "late"]);
    expect(targets(network, "kid")).toEqual(["root"]);
  });
});

describe("a function isEnabled", () => {
  it("counts as enabled when no state is given (the agents listing), and sees the turn's state in a run", async () => {
    const seen: HandoffState[] = [];
    const b = agent("b");
    const a = agent("a", {
      handoffs: [handoff(b, { isEnabled: (state) => (seen.push(structuredClone(state)), state.handoffCount === 0) })],
    });
    const network = new Network(a, { defaultModel: "m", transferScope: "declared" });
    expect(targets(network, "a")).toEqual(["b"]);
    await playTurn(network, "hi", [{ text: "ok" }]);
    expect(seen).toEqual([{ activeAgent: "a", handoffCount: 0, turnHandoffs: [], context: {} }]);
  });
});
