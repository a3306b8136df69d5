/**
 * Handoffs that come back: `handoff(agent, { returns })`. On answer, the target gives the
 * conversation back once it has answered; on call, it is offered `return_to_<caller>` and keeps the
 * conversation until it calls it. Returns follow a caller stack, answer to the loop guards, and
 * survive a deploy that removed an agent on the stack. An agent's own state persists across its tenures.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { Agent, handoff, Network, type RunEvent, tool } from "../../src/runtime/index.ts";
import { MemoryStore, runScripted } from "../../src/testing/index.ts";

const handoffs = (events: RunEvent[]) =>
  events
    .filter((e): e is Extract<RunEvent, { type: "handoff" }> => e.type === "handoff")
    .map((e) => `${e.from}→${e.to}${e.kind === "transfer" ? "" : ` (${e.kind})`}`);

function network(mode: "on-answer" | "on-call") {
  const auditor = new Agent({ name: "auditor", description: "Audits.", instructions: "You audit." });
  const calculator = new Agent({
    name: "calculator",
    description: "Computes.",
    instructions: "You compute.",
    handoffs: [handoff(auditor, { returns: "on-call" })],
  });
  const triage = new Agent({
    name: "triage",
    description: "Routes.",
    instructions: "You route.",
    handoffs: [handoff(calculator, { returns: mode })],
  });
  return new Network(triage, { defaultModel: "m", transferScope: "declared" });
}

describe("a handoff that returns on answer", () => {
  it("gives the conversation back to the caller once the target has answered, and the next message goes to the caller", async () => {
    const net = network("on-answer");
    const first = await runScripted(net, "what is 6 * 7?", [
      { toolCalls: [{ name: "transfer_to_calculator", args: {} }] },
      { text: "42." },
    ]);
    expect(handoffs(first.events)).toEqual(["triage→calculator", "calculator→triage (return)"]);
    expect(first.events.at(-1)).toMatchObject({ type: "done", status: "completed", text: "42.", agent: "triage" });
    expect([first.store.holding.activeAgent, first.store.holding.callers]).toEqual(["triage", []]);
    // The return has its own record, and spends no handoff budget: only the transfer is counted.
    expect(first.store.holding.handoffCount).toBe(1);
    expect(first.store.commits.at(-1)!.handoff).toMatchObject({ from: "calculator", to: "triage", kind: "return" });

    const second = await runScripted(net, "thanks", [{ text: "You're welcome." }], { store: first.store });
    expect(second.model.requests.map((r) => r.agent)).toEqual(["triage"]);
  });

  it("does not return after a step that called tools: only a final answer closes the frame", async () => {
    const net = network("on-answer");
    const { events, store } = await runScripted(net, "compute", [
      { toolCalls: [{ name: "transfer_to_calculator", args: {} }] },
      { toolCalls: [{ name: "no_such_tool", args: {} }] },
      { text: "Done." },
    ]);
    expect(handoffs(events)).toEqual(["triage→calculator", "calculator→triage (return)"]);
    expect(store.holding.activeAgent).toBe("triage");
  });
});

describe("a handoff that returns on call", () => {
  it("keeps the conversation with the target across turns until it calls return_to_<caller>, whose summary the caller reads", async () => {
    const net = network("on-call");
    const first = await runScripted(net, "a long calculation", [
      { toolCalls: [{ name: "transfer_to_calculator", args: {} }] },
      { text: "Which numbers?" },
    ]);
    expect([first.store.holding.activeAgent, first.store.holding.callers]).toEqual([
      "calculator",
      [{ caller: "triage", callee: "calculator", mode: "on-call", toolCallId: "call_1_0" }],
    ]);
    expect(first.model.requests[1]!.tools.map((t) => t.name)).toContain("return_to_triage");
    expect(first.model.requests[1]!.tools.find((t) => t.name === "return_to_triage")!.parameters).toMatchObject({ required: ["summary"] });

    const second = await runScripted(
      net,
      "6 and 7",
      [
        { toolCalls: [{ id: "r", name: "return_to_triage", args: { summary: "6 * 7 = 42" } }] },
        { text: "The answer is 42. Anything else?" },
      ],
      { store: first.store },
    );
    expect(handoffs(second.events)).toEqual(["calculator→triage (return)"]);
    expect(second.model.requests.map((r) => r.agent)).toEqual(["calculator", "triage"]);
    expect(second.model.requests[1]!.messages.at(-1)).toMatchObject({
      role: "tool",
      content: "Returned the conversation to 'triage'. Summary: 6 * 7 = 42",
    });
    expect(second.model.requests[1]!.tools.map((t) => t.name)).not.toContain("return_to_triage");
    expect([second.store.holding.activeAgent, second.store.holding.callers]).toEqual(["triage", []]);
  });

  it("follows the stack: triage → calculator → auditor returns to calculator, then calculator to triage", async () => {
    const net = network("on-call");
    const { events, store, model } = await runScripted(net, "check my sum", [
      { toolCalls: [{ name: "transfer_to_calculator", args: {} }] },
      { toolCalls: [{ name: "transfer_to_auditor", args: {} }] },
      { toolCalls: [{ name: "return_to_calculator", args: { summary: "the sum is right" } }] },
      { toolCalls: [{ name: "return_to_triage", args: { summary: "checked: right" } }] },
      { text: "Your sum is right." },
    ]);
    expect(handoffs(events)).toEqual([
      "triage→calculator",
      "calculator→auditor",
      "auditor→calculator (return)",
      "calculator→triage (return)",
    ]);
    // The auditor is offered only its own way back, not its caller's.
    expect(model.requests[2]!.tools.map((t) => t.name).filter((n) => n.startsWith("return_to_"))).toEqual(["return_to_calculator"]);
    expect([store.holding.activeAgent, store.holding.callers]).toEqual(["triage", []]);
  });

  it("refuses a return without a summary as an error result the agent recovers from; past the turn's handoff limit a return is still taken", async () => {
    const net = network("on-call");
    const { events, store } = await runScripted(
      net,
      "quick",
      [
        { toolCalls: [{ name: "transfer_to_calculator", args: {} }] },
        { toolCalls: [{ name: "return_to_triage", args: {} }] },
        { toolCalls: [{ name: "return_to_triage", args: { summary: "done" } }] },
        { text: "Back with triage." },
      ],
      { limits: { maxHandoffsPerTurn: 1 } },
    );
    const refusals = events.filter((e) => e.type === "tool-result" && e.isError).map((e) => e.type === "tool-result" && e.result);
    expect(refusals).toEqual(["return_to_triage needs a summary: say what you found or did, for 'triage'."]);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed", agent: "triage" });
    expect([store.holding.callers, store.holding.handoffCount]).toEqual([[], 1]);
  });

  it("refuses a returning handoff past maxReturnDepth", async () => {
    const net = network("on-call");
    const { events, store } = await runScripted(
      net,
      "deep",
      [
        { toolCalls: [{ name: "transfer_to_calculator", args: {} }] },
        { toolCalls: [{ name: "transfer_to_auditor", args: {} }] },
        { text: "I will do it myself." },
      ],
      { limits: { maxReturnDepth: 1 } },
    );
    expect(events.find((e) => e.type === "tool-result" && e.name === "transfer_to_auditor")).toMatchObject({
      isError: true,
      result: "Cannot hand off to 'auditor': 1 agents already wait for the conversation to come back (maxReturnDepth).",
    });
    expect(store.holding.callers.map((f) => f.callee)).toEqual(["calculator"]);
  });

  it("skips a frame whose agent a deploy removed, with a warning, and drops it from the stored stack", async () => {
    const net = network("on-call");
    const store = new MemoryStore("calculator");
    store.holding.callers = [
      { caller: "ghost", callee: "triage", mode: "on-call", toolCallId: "old" },
      { caller: "triage", callee: "calculator", mode: "on-call", toolCallId: "t" },
    ];
    const { events, model } = await runScripted(
      net,
      "hi",
      [{ toolCalls: [{ name: "return_to_triage", args: { summary: "ok" } }] }, { text: "Back." }],
      {
        store,
      },
    );
    expect(events.find((e) => e.type === "warning")).toMatchObject({
      code: "caller_missing",
      message: "The handoff from 'ghost' to 'triage' cannot return: 'ghost' no longer exists.",
    });
    expect(store.commits[0]!.holding?.callers).toEqual([{ caller: "triage", callee: "calculator", mode: "on-call", toolCallId: "t" }]);
    expect(model.requests.map((r) => r.agent)).toEqual(["calculator", "triage"]);
    expect([store.holding.activeAgent, store.holding.callers]).toEqual(["triage", []]);
  });
});

describe("an agent's own state", () => {
  const counter = tool({
    name: "count_visit",
    description: "Counts this visit.",
    parameters: z.object({ topic: z.string() }),
    execute: ({ topic }, ctx) => {
      const state = ctx.state as { visits: number; topics: string[] };
      ctx.setState({ visits: state.visits + 1, topics: [...state.topics, topic] });
      return { visits: state.visits + 1 };
    },
  });

  function stateful() {
    const calculator = new Agent({
      name: "calculator",
      description: "Computes.",
      instructions: ({ state }) => `You compute. Visits so far: ${String(state.visits)}.`,
      tools: [counter],
      state: z.object({ visits: z.number().int().default(0), topics: z.array(z.string()).default([]) }),
    });
    const triage = new Agent({
      name: "triage",
      description: "Routes.",
      instructions: "You route.",
      handoffs: [handoff(calculator, { returns: "on-answer" })],
    });
    return new Network(triage, { defaultModel: "m", transferScope: "declared" });
  }

  it("persists across the agent's tenures: its instructions and tools read it, its tools change it", async () => {
    const net = stateful();
    const tenure = (topic: string) => [
      { toolCalls: [{ name: "transfer_to_calculator", args: {} }] },
      { toolCalls: [{ name: "count_visit", args: { topic } }] },
      { text: `Done with ${topic}.` },
    ];
    const first = await runScripted(net, "sums", tenure("sums"));
    expect(first.model.requests[1]!.instructions).toBe("You compute. Visits so far: 0.");
    expect(first.store.holding.agentStates).toEqual({ calculator: { visits: 1, topics: ["sums"] } });
    expect(first.store.holding.activeAgent).toBe("triage");

    const second = await runScripted(net, "products", tenure("products"), { store: first.store });
    expect(second.model.requests[1]!.instructions).toBe("You compute. Visits so far: 1.");
    expect(second.events.find((e) => e.type === "tool-result" && e.name === "count_visit")).toMatchObject({ result: { visits: 2 } });
    expect(second.store.holding.agentStates).toEqual({ calculator: { visits: 2, topics: ["sums", "products"] } });
  });

  it("refuses a state its schema does not accept, as a tool error, and keeps the one it had", async () => {
    const bad = tool({
      name: "break_state",
      description: "Writes a wrong state.",
      parameters: z.object({}),
      execute: (_args, ctx) => ctx.setState({ visits: "many" }),
    });
    const agent = new Agent({ name: "solo", instructions: "x", tools: [bad], state: z.object({ visits: z.number().default(0) }) });
    const { events, store } = await runScripted(new Network(agent, { defaultModel: "m" }), "hi", [
      { toolCalls: [{ name: "break_state", args: {} }] },
      { text: "Sorry." },
    ]);
    expect(events.find((e) => e.type === "tool-result")).toMatchObject({
      isError: true,
      result: expect.stringMatching(/^Tool 'break_state' failed: .*visits/s),
    });
    expect(store.holding.agentStates).toEqual({});
  });

  it("needs a default for every field, said when the agent is made", () => {
    expect(() => new Agent({ name: "strict", instructions: "x", state: z.object({ visits: z.number() }) })).toThrow(
      /Agent 'strict': every field of its state needs a default/,
    );
  });
});
