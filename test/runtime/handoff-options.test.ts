import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, handoff, Network, type NetworkOptions, tool } from "../../src/runtime/index.ts";
import type { HandoffInfo } from "../../src/runtime/handoff/types.ts";
import { echo } from "../support/networks.ts";
import { ofType, playTurn } from "../support/run.ts";
import { MemoryStore } from "../support/scripted-model.ts";

/** triage → billing, shipping (declared both ways), with options for the network. */
function network(options: NetworkOptions = {}, billingHandoff?: (billing: Agent) => ReturnType<typeof handoff>) {
  const billing = new Agent({ name: "billing", description: "Billing and refunds.", instructions: "You are billing.", tools: [echo] });
  const shipping = new Agent({ name: "shipping", description: "Deliveries.", instructions: "You are shipping.", tools: [echo] });
  const triage = new Agent({
    name: "triage",
    instructions: "You are triage.",
    tools: [echo],
    handoffs: [billingHandoff ? billingHandoff(billing) : billing, shipping],
  });
  billing.addHandoff(triage).addHandoff(shipping);
  shipping.addHandoff(triage).addHandoff(billing);
  return new Network(triage, { defaultModel: "m", ...options });
}

const names = (tools: Array<{ name: string }>) => tools.map((t) => t.name);

describe("tree networks (seed 003)", () => {
  const build = (child: { disallowTransferToParent?: boolean; disallowTransferToPeers?: boolean } = {}) => {
    const math = new Agent({ name: "math", instructions: "m", ...child });
    const search = new Agent({ name: "search", instructions: "s" });
    const root = new Agent({ name: "root", instructions: "r", subAgents: [math, search] });
    return new Network(root, { defaultModel: "m" });
  };

  it("offers children, the parent and siblings", () => {
    const tree = build();
    expect([...tree.toolset("root").transfers.keys()]).toEqual(["math", "search"]);
    expect([...tree.toolset("math").transfers.keys()]).toEqual(["root", "search"]);
  });

  it("honours disallowTransferToParent and disallowTransferToPeers", () => {
    expect([...build({ disallowTransferToParent: true }).toolset("math").transfers.keys()]).toEqual(["search"]);
    expect([...build({ disallowTransferToPeers: true }).toolset("math").transfers.keys()]).toEqual(["root"]);
  });

  it("rejects an agent given two parents, and a target outside a closed network, when built", () => {
    const shared = new Agent({ name: "shared", instructions: "" });
    const a = new Agent({ name: "a", instructions: "", subAgents: [shared] });
    const b = new Agent({ name: "b", instructions: "", subAgents: [shared] });
    expect(() => new Network(new Agent({ name: "root", instructions: "", subAgents: [a, b] }), { defaultModel: "m" })).toThrow(
      /Agent 'shared' has two parents \('a' and 'b'\)/,
    );
    const outsider = new Agent({ name: "outsider", instructions: "" });
    const inside = new Agent({ name: "inside", instructions: "", handoffs: [outsider] });
    expect(
      () => new Network(new Agent({ name: "root", instructions: "", handoffs: [inside] }), { defaultModel: "m", agents: [inside] }),
    ).toThrow(/Agent 'inside' hands off to 'outsider', which is not part of this network/);
  });

  it("registers an agent linked later, keeping earlier tool names", () => {
    const net = network({ transferScope: "declared" });
    const before = net.transferToolName("shipping");
    const vip = new Agent({ name: "vip", instructions: "VIP desk." });
    net.get("triage")!.addHandoff(vip);
    net.register(vip);
    expect(net.transferToolName("shipping")).toBe(before);
    expect([...net.toolset("triage").transfers.keys()]).toEqual(["billing", "shipping", "vip"]);
  });
});

describe("transfer tool styles", () => {
  const parallel = (transfer: { name: string; args: unknown }) => [
    {
      toolCalls: [
        { id: "e1", name: "echo", args: { text: "a" } },
        { id: "t", ...transfer },
        { id: "e2", name: "echo", args: { text: "b" } },
      ],
    },
    { text: "done" },
  ];

  it("single: one transfer_to_agent whose agent_name is an enum of valid targets", async () => {
    const { events, model } = await playTurn(
      network({ toolStyle: "single" }),
      "x",
      parallel({ name: "transfer_to_agent", args: { agent_name: "billing", reason: "money" } }),
    );
    const spec = model.requests[0]!.tools.find((t) => t.name === "transfer_to_agent")!;
    expect(names(model.requests[0]!.tools)).toEqual(["echo", "transfer_to_agent"]);
    expect(spec.parameters).toMatchObject({
      properties: { agent_name: { type: "string", enum: ["billing", "shipping"] } },
      required: ["agent_name"],
    });
    expect(spec.description).toMatch(/- billing: Billing and refunds\./);
    expect(ofType(events, "tool-result").map((r) => [r.toolCallId, r.isError])).toEqual([
      ["e1", false],
      ["t", false],
      ["e2", false],
    ]);
    expect(ofType(events, "handoff")[0]).toMatchObject({ from: "triage", to: "billing", reason: "money" });
    expect(model.requests[1]!.tools.find((t) => t.name === "transfer_to_agent")!.parameters).toMatchObject({
      properties: { agent_name: { enum: ["triage", "shipping"] } },
    });
  });

  it("named: one handoff tool with required name and reason, listing the agents", async () => {
    const { events, model } = await playTurn(
      network({ toolStyle: "named" }),
      "x",
      parallel({ name: "handoff", args: { name: "shipping", reason: "parcel" } }),
    );
    const spec = model.requests[0]!.tools.find((t) => t.name === "handoff")!;
    expect(spec.parameters).toMatchObject({
      required: ["name", "reason"],
      properties: { name: { description: expect.stringContaining("Available agents: billing, shipping") } },
    });
    expect(ofType(events, "tool-result").map((r) => r.isError)).toEqual([false, false, false]);
    expect(ofType(events, "handoff")[0]).toMatchObject({ to: "shipping", reason: "parcel" });
  });

  it("per-target: beside parallel calls", async () => {
    const { events } = await playTurn(network(), "x", parallel({ name: "transfer_to_shipping", args: {} }));
    expect(ofType(events, "tool-result").map((r) => r.isError)).toEqual([false, false, false]);
    expect(ofType(events, "done")[0]!.agent).toBe("shipping");
  });

  it.each([
    ["single", { name: "transfer_to_agent", args: { agent_name: "refunds" } }, "Available agents: billing, shipping."],
    ["named", { name: "handoff", args: { name: "refunds", reason: "r" } }, "Available agents: billing, shipping."],
    ["per-target", { name: "transfer_to_refunds", args: {} }, "Available: transfer_to_billing (billing), transfer_to_shipping (shipping)."],
  ] as const)("%s: refuses an invented target and lists the valid ones", async (toolStyle, transfer, listed) => {
    const { events } = await playTurn(network({ toolStyle }), "x", [{ toolCalls: [{ id: "t", ...transfer }] }, { text: "ok" }]);
    const result = ofType(events, "tool-result")[0]!;
    expect(result.isError).toBe(true);
    expect(result.result).toContain("refunds");
    expect(result.result).toContain(listed);
    expect(ofType(events, "done")[0]!.agent).toBe("triage");
  });
});

describe("extra transfers in one step", () => {
  const twoTransfers = [
    {
      toolCalls: [
        { id: "a", name: "transfer_to_billing" },
        { id: "b", name: "transfer_to_shipping" },
      ],
    },
    { text: "billing" },
  ];

  it("answer (default): the extra one gets an error result in the history", async () => {
    const { store } = await playTurn(network(), "x", twoTransfers);
    expect(store.history.filter((m) => m.role === "tool").map((m) => m.toolCallId)).toEqual(["a", "b"]);
  });

  it("drop: the extra one is removed from the stored assistant message, so the model never sees it", async () => {
    const { store, model, events } = await playTurn(network({ extraTransfers: "drop" }), "x", twoTransfers);
    const assistant = store.history.find((m) => m.role === "assistant")!;
    expect(assistant.role === "assistant" && assistant.toolCalls?.map((c) => c.id)).toEqual(["a"]);
    expect(store.history.filter((m) => m.role === "tool").map((m) => m.toolCallId)).toEqual(["a"]);
    expect(JSON.stringify(model.requests[1]!.messages)).not.toContain("transfer_to_shipping");
    expect(ofType(events, "tool-result").find((r) => r.toolCallId === "b")).toMatchObject({ isError: true });
  });
});

describe("describe and isEnabled", () => {
  it("describe replaces the sentence added to each transfer tool", async () => {
    const { model } = await playTurn(network({ describe: (name) => `Transfer when the problem is clearly about ${name}.` }), "x", [
      { text: "hi" },
    ]);
    expect(model.requests[0]!.tools.find((t) => t.name === "transfer_to_billing")!.description).toBe(
      "Transfer the conversation to 'billing'. Transfer when the problem is clearly about billing.",
    );
  });

  it("isEnabled hides a handoff for a turn, statically or from the conversation state", async () => {
    const hidden = network({ transferScope: "declared" }, (billing) => handoff(billing, { isEnabled: false }));
    const { model, events } = await playTurn(hidden, "x", [{ toolCalls: [{ id: "t", name: "transfer_to_billing" }] }, { text: "ok" }]);
    expect(names(model.requests[0]!.tools)).toEqual(["echo", "transfer_to_shipping"]);
    expect(ofType(events, "tool-result")[0]).toMatchObject({ isError: true, result: expect.stringContaining("not an available transfer") });

    const onlyFirst = network({ transferScope: "declared" }, (billing) =>
      handoff(billing, { isEnabled: (state) => state.handoffCount === 0 }),
    );
    const first = await playTurn(onlyFirst, "x", [
      { toolCalls: [{ name: "transfer_to_billing" }] },
      { toolCalls: [{ name: "transfer_to_triage" }] },
      { text: "back" },
    ]);
    expect(names(first.model.requests[2]!.tools)).toEqual(["echo", "transfer_to_shipping"]);
  });
});

describe("typed handoff input", () => {
  const seen: unknown[] = [];
  const whoami = tool({
    name: "whoami",
    description: "Reads the context.",
    parameters: z.object({}),
    execute: (_args, ctx) => ({ ...ctx.context }),
  });
  const build = () => {
    const billing = new Agent({
      name: "billing",
      instructions: ({ context }) => `You are billing. Order: ${String(context.orderId ?? "unknown")}.`,
      tools: [whoami],
    });
    const triage = new Agent({
      name: "triage",
      instructions: "Route.",
      handoffs: [handoff(billing, { inputSchema: z.object({ orderId: z.string().regex(/^A\d{4}$/) }) })],
    });
    return new Network(triage, { defaultModel: "m", transferScope: "declared", onHandoff: (info) => void seen.push(info) });
  };

  it("is part of the tool's schema, recorded on the handoff, and readable by the target's instructions and tools", async () => {
    seen.length = 0;
    const { events, model, store } = await playTurn(build(), "x", [
      { toolCalls: [{ id: "t", name: "transfer_to_billing", args: { orderId: "A1001", reason: "refund" } }] },
      { toolCalls: [{ id: "w", name: "whoami" }] },
      { text: "ok" },
    ]);
    expect(model.requests[0]!.tools[0]!.parameters).toMatchObject({
      properties: { orderId: { type: "string" }, reason: { type: "string" } },
      required: ["orderId"],
      additionalProperties: false,
    });
    expect(ofType(events, "handoff")[0]).toMatchObject({ to: "billing", reason: "refund", input: { orderId: "A1001" } });
    expect(model.requests[1]!.instructions).toBe("You are billing. Order: A1001.");
    expect(ofType(events, "tool-result").find((r) => r.toolCallId === "w")!.result).toEqual({ orderId: "A1001" });
    expect(store.commits.find((c) => c.handoff)!.holding?.context).toEqual({ orderId: "A1001" });
    expect(seen).toEqual([
      { kind: "transfer", from: "triage", to: "billing", reason: "refund", input: { orderId: "A1001" } } satisfies HandoffInfo,
    ]);
  });

  it("refuses the transfer with the validation message when the input is invalid", async () => {
    const { events } = await playTurn(build(), "x", [
      { toolCalls: [{ id: "t", name: "transfer_to_billing", args: { orderId: "nope" } }] },
      { text: "ok" },
    ]);
    expect(ofType(events, "tool-result")[0]).toMatchObject({
      isError: true,
      result: expect.stringMatching(/^Cannot hand off to 'billing': invalid input:[\s\S]*orderId/),
    });
    expect(ofType(events, "handoff")).toHaveLength(0);
  });
});

describe("what happens at a transfer", () => {
  it("append: the target's instructions are added as a system message after the transfer", async () => {
    const { model, store } = await playTurn(network({ systemPrompt: "append" }), "x", [
      { toolCalls: [{ id: "t", name: "transfer_to_billing" }] },
      { text: "ok" },
    ]);
    expect(model.requests[1]!.instructions).toBe("You are triage.");
    expect(model.requests[1]!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "system"]);
    expect(model.requests[1]!.messages.at(-1)).toEqual({ role: "system", agent: "billing", content: "You are billing." });
    expect(store.history.at(-2)).toMatchObject({ role: "system", content: "You are billing." });
  });

  it("replace (default): only the target's instructions", async () => {
    const { model } = await playTurn(network(), "x", [{ toolCalls: [{ name: "transfer_to_billing" }] }, { text: "ok" }]);
    expect(model.requests[1]!.instructions).toBe("You are billing.");
    expect(model.requests[1]!.messages.some((m) => m.role === "system")).toBe(false);
  });

  it("a historyFilter trims what the target sees, in this turn and the next, without changing what is stored", async () => {
    const filter = (messages: readonly import("../../src/runtime/index.ts").Message[]) => messages.filter((m) => m.role === "user");
    const net = network({ transferScope: "declared" }, (billing) => handoff(billing, { historyFilter: filter }));
    const first = await playTurn(net, "first", [
      { toolCalls: [{ name: "echo", args: { text: "e" } }] },
      { toolCalls: [{ id: "t", name: "transfer_to_billing" }] },
      { text: "ok" },
    ]);
    expect(first.model.requests[2]!.messages).toEqual([{ role: "user", content: "first" }]);
    expect(first.store.history).toHaveLength(6);
    const second = await playTurn(net, "second", [{ text: "still billing" }], { store: first.store });
    expect(second.model.requests[0]!.messages).toEqual([
      { role: "user", content: "first" },
      { role: "user", content: "second" },
    ]);
  });
});

describe("loop guards", () => {
  it("allowRevisit: false refuses a transfer to an agent already active in this turn", async () => {
    const { events } = await playTurn(network({ allowRevisit: false }), "x", [
      { toolCalls: [{ name: "transfer_to_billing" }] },
      { toolCalls: [{ id: "back", name: "transfer_to_triage" }] },
      { text: "billing keeps it" },
    ]);
    expect(ofType(events, "tool-result").find((r) => r.toolCallId === "back")).toMatchObject({
      isError: true,
      result: "Cannot hand off to 'triage': already visited in this turn.",
    });
    expect(ofType(events, "done")[0]!.agent).toBe("billing");
  });

  it("maxHandoffs bounds transfers over the conversation's life, across requests", async () => {
    const net = network({ maxHandoffs: 2 });
    const store = new MemoryStore("triage");
    await playTurn(net, "one", [{ toolCalls: [{ name: "transfer_to_billing" }] }, { text: "1" }], { store });
    await playTurn(net, "two", [{ toolCalls: [{ name: "transfer_to_shipping" }] }, { text: "2" }], { store });
    const third = await playTurn(net, "three", [{ toolCalls: [{ id: "no", name: "transfer_to_triage" }] }, { text: "3" }], { store });
    expect(ofType(third.events, "tool-result")[0]).toMatchObject({
      isError: true,
      result: "Handoff limit for this conversation (2) reached; continue yourself.",
    });
    expect(ofType(third.events, "done")[0]).toMatchObject({ agent: "shipping", handoffCount: 2 });
  });

  it("onHandoff runs once per change of hands (here transfers; test/runtime/counters.test.ts has every kind), and a throw ends the turn with the history valid", async () => {
    const calls: string[] = [];
    const net = network({
      onHandoff: ({ from, to }) => {
        calls.push(`${from}→${to}`);
        if (to === "shipping") throw new Error("audit log unavailable");
      },
    });
    const ok = await playTurn(net, "x", [
      { toolCalls: [{ name: "transfer_to_billing" }, { name: "transfer_to_shipping" }] },
      { text: "ok" },
    ]);
    expect(ofType(ok.events, "done")).toHaveLength(1);
    const failed = await playTurn(net, "y", [{ toolCalls: [{ name: "transfer_to_shipping" }] }]);
    expect(failed.events.at(-1)).toEqual({ type: "error", code: "hook_failed", message: "onHandoff failed: audit log unavailable" });
    expect(calls).toEqual(["triage→billing", "triage→shipping"]);
  });
});

describe("agent-as-tool delegation", () => {
  it("runs the agent on a fresh context and returns its answer; the conversation stays put", async () => {
    const researcher = new Agent({ name: "researcher", instructions: "You research.", tools: [echo] });
    const lead = new Agent({ name: "lead", instructions: "You lead.", tools: [researcher.asTool()] });
    const { events, model } = await playTurn(new Network(lead, { defaultModel: "m" }), "what is new?", [
      { toolCalls: [{ id: "ask", name: "ask_researcher", args: { request: "Summarize the news" } }] },
      { text: "Three things are new." },
      { text: "Here is the summary: three things." },
    ]);
    expect(model.requests[1]).toMatchObject({
      agent: "researcher",
      instructions: "You research.",
      messages: [{ role: "user", content: "Summarize the news" }],
    });
    expect(ofType(events, "tool-result")[0]).toMatchObject({ toolCallId: "ask", isError: false, result: "Three things are new." });
    expect(ofType(events, "handoff")).toHaveLength(0);
    expect(ofType(events, "done")[0]).toMatchObject({ agent: "lead", text: "Here is the summary: three things." });
  });
});

describe("append mode with an approval in the transfer's step", () => {
  it("stores the appended system message after the step's results, once the step is complete", async () => {
    const { refund } = await import("../support/networks.ts");
    const billing = new Agent({ name: "billing", instructions: "You are billing." });
    const triage = new Agent({ name: "triage", instructions: "You are triage.", tools: [refund], handoffs: [billing] });
    const net = new Network(triage, { defaultModel: "m", systemPrompt: "append" });
    const first = await playTurn(net, "refund and transfer", [
      {
        toolCalls: [
          { id: "r", name: "refund", args: { amount: 50 } },
          { id: "t", name: "transfer_to_billing" },
        ],
      },
    ]);
    expect(first.store.history.map((m) => m.role)).toEqual(["user"]);
    await playTurn(
      net,
      { kind: "resume", suspension: first.store.suspension!, decisions: [{ toolCallId: "r", approved: true }] },
      [{ text: "done" }],
      { store: first.store },
    );
    expect(first.store.history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "system", "assistant"]);
    expect(first.store.history[4]).toMatchObject({ role: "system", content: "You are billing." });
  });
});
