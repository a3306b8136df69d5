import { describe, expect, it } from "vitest";
import { Agent, handoff, humanAgent, Network, remoteAgent } from "../../src/runtime/index.ts";
import { transferToolNames } from "../../src/runtime/tools/tool-names.ts";

describe("transfer tool names", () => {
  it("lower-case the name and turn other characters into _", () => {
    expect([...transferToolNames(["Billing-Agent", "triage agent"]).values()]).toEqual([
      "transfer_to_billing_agent",
      "transfer_to_triage_agent",
    ]);
  });

  it("fold accents to ASCII, hash names with nothing left, number collisions and cap the length", () => {
    const names = transferToolNames(["AtenciónAlCliente", "サポート", "サポート2", "a.b", "a-b", "x".repeat(80)]);
    expect(names.get("AtenciónAlCliente")).toBe("transfer_to_atencionalcliente");
    expect(names.get("サポート")).toMatch(/^transfer_to_u[0-9a-f]{16}$/);
    expect(names.get("サポート")).toBe(transferToolNames(["サポート"]).get("サポート"));
    expect(names.get("サポート2")).toBe("transfer_to_____2");
    expect(names.get("a.b")).toBe("transfer_to_a_b");
    expect(names.get("a-b")).toBe("transfer_to_a_b_2");
    expect(names.get("x".repeat(80))).toHaveLength(60);
  });
});

describe("building a network", () => {
  it("registers every agent reachable from the entry agent, and agents registered explicitly", () => {
    const leaf = new Agent({ name: "leaf", instructions: "" });
    const mid = new Agent({ name: "mid", instructions: "", handoffs: [leaf] });
    const loose = new Agent({ name: "loose", instructions: "" });
    const network = new Network(new Agent({ name: "root", instructions: "", handoffs: [mid] }), { defaultModel: "m", register: [loose] });
    expect([...network.agents.keys()]).toEqual(["root", "loose", "mid", "leaf"]);
  });

  it("rejects duplicate and empty names and a missing model, naming the agent and the fix", () => {
    const twin = () => new Agent({ name: "twin", instructions: "" });
    expect(() => new Network(new Agent({ name: "r", instructions: "", handoffs: [twin(), twin()] }), { defaultModel: "m" })).toThrow(
      new TypeError("Two different agents are named 'twin': agent names must be unique in a network."),
    );
    expect(() => new Network(new Agent({ name: " ", instructions: "" }), { defaultModel: "m" })).toThrow(TypeError);
    expect(() => new Network(new Agent({ name: "nomodel", instructions: "" }))).toThrow(/Agent 'nomodel' has no model/);
    // A remote agent and a person call no model here: a network of them and agents with models of their own needs no default.
    const partner = remoteAgent({ name: "partner", description: "A partner.", url: "https://partner.example/card" });
    const desk = humanAgent({ name: "desk", description: "A person." });
    const own = new Agent({ name: "own", instructions: "", model: "m", handoffs: [partner, desk] });
    expect(new Network(own).agents.size).toBe(3);
    expect(() => new Network(new Agent({ name: "entry", instructions: "", handoffs: [partner] }))).toThrow(/Agent 'entry' has no model/);
  });
});

describe("network lookups", () => {
  it("re-evaluates a function isEnabled for each state; static toolsets are built once", () => {
    const billing = new Agent({ name: "billing", instructions: "b" });
    const triage = new Agent({ name: "triage", instructions: "t", handoffs: [handoff(billing, { isEnabled: (s) => s.handoffCount < 1 })] });
    const net = new Network(triage, { defaultModel: "m", transferScope: "declared" });
    const state = (handoffCount: number) => ({ activeAgent: "triage", handoffCount, turnHandoffs: [], context: {} });
    expect([...net.toolset("triage", state(0)).transfers.keys()]).toEqual(["billing"]);
    expect([...net.toolset("triage", state(1)).transfers.keys()]).toEqual([]);
    expect(net.toolset("billing")).toBe(net.toolset("billing"));
    expect(() => net.toolset("nobody")).toThrow("Agent 'nobody' is not part of this network.");
    expect(() => net.edges("nobody")).toThrow("Agent 'nobody' is not part of this network.");
    expect(net.options).toMatchObject({ toolStyle: "per-target", systemPrompt: "replace", extraTransfers: "answer" });
  });
});
