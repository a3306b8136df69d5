/**
 * Delegation (`Agent.asTool`) in the loop: the child's events stream nested under the call that
 * delegated them (a child of a child under both), live, before the call answers; its steps go to
 * its own history, only the answer to the parent's; delegations of one step run at once up to the
 * network's bound; stopping the turn stops them. The model here answers by agent, as a provider would.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  Agent,
  type Decision,
  type Model,
  type ModelEvent,
  type ModelRequest,
  Network,
  type RunEvent,
  runTurn,
  tool,
} from "../../src/runtime/index.ts";
import { MemoryStore as TestingStore } from "../../src/testing/index.ts";

/** Answers each agent by its script: text, or tool calls, as a provider would answer that agent. */
class AgentModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(readonly scripts: Record<string, (request: ModelRequest) => Promise<ModelEvent[]> | ModelEvent[]>) {}
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    this.requests.push(request);
    const script = this.scripts[request.agent];
    if (!script) throw new Error(`no script for ${request.agent}`);
    for (const event of await script(request)) yield event;
  }
}

const say = (text: string): ModelEvent[] => [
  { type: "text-delta", delta: text },
  { type: "finish", finishReason: "stop", usage: { inputTokens: 10, outputTokens: 2 } },
];
const call = (id: string, name: string, args: unknown): ModelEvent[] => [
  { type: "tool-call", call: { id, name, arguments: JSON.stringify(args) } },
  { type: "finish", finishReason: "tool_calls", usage: { inputTokens: 10, outputTokens: 2 } },
];
const calls = (...list: Array<[string, string, unknown]>): ModelEvent[] => [
  ...list.map(([id, name, args]): ModelEvent => ({ type: "tool-call", call: { id, name, arguments: JSON.stringify(args) } })),
  { type: "finish", finishReason: "tool_calls" },
];
/** Whether the request's newest message is a tool's answer: the agent has been answered and now says its piece. */
const answered = (request: ModelRequest) => request.messages.at(-1)?.role === "tool";

async function run(network: Network, model: Model, store = new TestingStore(network.entry.name), signal?: AbortSignal) {
  const events: RunEvent[] = [];
  for await (const event of runTurn({
    conversationId: "c1",
    network,
    model,
    store,
    conversation: store.conversation(),
    input: { kind: "message", text: "hi" },
    ...(signal ? { signal } : {}),
  }))
    events.push(event);
  return { events, store };
}

describe("a delegated agent", () => {
  it("streams its events nested under the delegating call, keeps its steps in its own history, and gives the parent only its answer", async () => {
    const lookup = tool({ name: "lookup", description: "l", parameters: z.object({}), execute: () => "parcel at depot" });
    const researcher = new Agent({ name: "researcher", instructions: "r", tools: [lookup] });
    const main = new Agent({ name: "main", instructions: "m", tools: [researcher.asTool()] });
    const model = new AgentModel({
      main: (r) => (answered(r) ? say("The parcel is at the depot.") : call("d1", "ask_researcher", { request: "where is it?" })),
      researcher: (r) => (answered(r) ? say("At the depot.") : call("l1", "lookup", {})),
    });
    const { events, store } = await run(new Network(main, { defaultModel: "m" }), model);
    const nested = events.filter((e): e is Extract<RunEvent, { type: "delegated" }> => e.type === "delegated");
    expect(nested.map((e) => [e.path, e.agent, e.event.type])).toEqual([
      [["d1"], "researcher", "run-start"],
      [["d1"], "researcher", "step-start"],
      [["d1"], "researcher", "tool-call"],
      [["d1"], "researcher", "tool-result"],
      [["d1"], "researcher", "step-finish"],
      [["d1"], "researcher", "step-start"],
      [["d1"], "researcher", "text-delta"],
      [["d1"], "researcher", "step-finish"],
      [["d1"], "researcher", "done"],
    ]);
    // Live: every nested event comes before the delegating call's own result.
    const result = events.findIndex((e) => e.type === "tool-result" && e.toolCallId === "d1");
    expect(events.findLastIndex((e) => e.type === "delegated")).toBeLessThan(result);
    expect(events[result]).toMatchObject({ result: "At the depot.", isError: false });
    expect(store.delegations.get("d1")?.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(store.history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(store.history.some((m) => m.role === "tool" && m.name === "lookup")).toBe(false);
  });

  it("nests a child of a child under both calls, and keeps each history apart", async () => {
    const clerk = new Agent({ name: "clerk", instructions: "c" });
    const manager = new Agent({ name: "manager", instructions: "m", tools: [clerk.asTool()] });
    const main = new Agent({ name: "main", instructions: "m", tools: [manager.asTool()] });
    const model = new AgentModel({
      main: (r) => (answered(r) ? say("Done.") : call("m1", "ask_manager", { request: "file it" })),
      manager: (r) => (answered(r) ? say("Filed by the clerk.") : call("k1", "ask_clerk", { request: "file it" })),
      clerk: () => say("Filed."),
    });
    const { events, store } = await run(new Network(main, { defaultModel: "m" }), model);
    const paths = events.flatMap((e) => (e.type === "delegated" && e.event.type === "run-start" ? [[e.path, e.agent]] : []));
    expect(paths).toEqual([
      [["m1"], "manager"],
      [["m1", "k1"], "clerk"],
    ]);
    expect(store.delegations.get("m1/k1")?.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(
      store.delegations
        .get("m1")
        ?.filter((m) => m.role === "tool")
        .map((m) => m.content),
    ).toEqual(["Filed."]);
  });

  it("runs the delegations of one step at once, up to maxParallelDelegations", async () => {
    const starts: string[] = [];
    let running = 0;
    let most = 0;
    const slow = tool({
      name: "work",
      description: "w",
      parameters: z.object({}),
      execute: async () => {
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 30));
        running--;
        return "worked";
      },
    });
    const helpers = ["a", "b", "c"].map((n) => new Agent({ name: `helper_${n}`, instructions: "h", tools: [slow] }));
    const main = new Agent({ name: "main", instructions: "m", tools: helpers.map((h) => h.asTool()) });
    const helperScript = (r: ModelRequest) => {
      if (answered(r)) return say("ok");
      starts.push(r.agent);
      return call(`w-${r.agent}`, "work", {});
    };
    const model = () =>
      new AgentModel({
        main: (r) =>
          answered(r)
            ? say("all done")
            : calls(
                ["da", "ask_helper_a", { request: "x" }],
                ["db", "ask_helper_b", { request: "x" }],
                ["dc", "ask_helper_c", { request: "x" }],
              ),
        helper_a: helperScript,
        helper_b: helperScript,
        helper_c: helperScript,
      });
    await run(new Network(main, { defaultModel: "m" }), model());
    expect(most).toBe(3);
    most = 0;
    await run(new Network(main, { defaultModel: "m", maxParallelDelegations: 2 }), model());
    expect(most).toBe(2);
    expect(starts).toHaveLength(6);
  });

  it("stops with the turn: a cancel ends the child, and the turn ends cancelled", async () => {
    const controller = new AbortController();
    const hang = tool({
      name: "hang",
      description: "h",
      parameters: z.object({}),
      execute: (_args, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("stopped")))),
    });
    const worker = new Agent({ name: "worker", instructions: "w", tools: [hang] });
    const main = new Agent({ name: "main", instructions: "m", tools: [worker.asTool()] });
    const model = new AgentModel({
      main: () => call("d", "ask_worker", { request: "go" }),
      worker: () => {
        setTimeout(() => controller.abort(), 10);
        return call("h", "hang", {});
      },
    });
    const { events } = await run(new Network(main, { defaultModel: "m" }), model, undefined, controller.signal);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
    expect(events.some((e) => e.type === "delegated" && e.event.type === "step-start")).toBe(true);
  });
});

describe("what a delegated agent asks the user", () => {
  const flagged: string[] = [];
  const flag = tool({
    name: "flag_order",
    description: "Flags an order for the fraud team. A person approves it.",
    parameters: z.object({ orderId: z.string() }),
    needsApproval: true,
    execute: ({ orderId }) => (flagged.push(orderId), `flagged ${orderId}`),
  });
  const checker = new Agent({ name: "checker", instructions: "c", tools: [flag] });
  const network = () => new Network(new Agent({ name: "main", instructions: "m", tools: [checker.asTool()] }), { defaultModel: "m" });
  const model = () =>
    new AgentModel({
      main: (r) => (answered(r) ? say(`Main: ${r.messages.at(-1)!.content}`) : call("d", "ask_checker", { request: "flag A1" })),
      checker: (r) => (answered(r) ? say(`Checker: ${r.messages.at(-1)!.content}`) : call("f", "flag_order", { orderId: "A1" })),
    });
  const resume = (first: { store: TestingStore }, decisions: Decision[]) =>
    ({ kind: "resume", suspension: first.store.suspension!, decisions }) as const;

  async function resumed(first: { store: TestingStore }, decisions: Decision[]) {
    const events: RunEvent[] = [];
    for await (const event of runTurn({
      conversationId: "c1",
      network: network(),
      model: model(),
      store: first.store,
      conversation: first.store.conversation(),
      input: resume(first, decisions),
    }))
      events.push(event);
    return events;
  }

  it("suspends the whole turn on the child's approval, naming its call and path; approved, the child resumes, then the parent", async () => {
    flagged.length = 0;
    const first = await run(network(), model());
    expect(first.events.find((e) => e.type === "approval-required")).toEqual({
      type: "approval-required",
      toolCallId: "d",
      name: "flag_order",
      args: { orderId: "A1" },
      agent: "checker",
      delegated: { path: ["d"], toolCallId: "f" },
    });
    expect(first.events.at(-1)).toMatchObject({ type: "done", status: "awaiting_approval", agent: "main" });
    expect(flagged).toEqual([]);
    const events = await resumed(first, [{ toolCallId: "d", approved: true }]);
    expect(flagged).toEqual(["A1"]);
    // The child resumed from its stored wait (no new first step), answered, and the parent read it.
    const nested = events.flatMap((e) => (e.type === "delegated" ? [e.event.type] : []));
    expect(nested).toContain("tool-result");
    expect(events.find((e) => e.type === "tool-result" && e.toolCallId === "d")).toMatchObject({ result: "Checker: flagged A1" });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed", text: "Main: Checker: flagged A1" });
    expect(first.store.delegations.get("d")?.filter((m) => m.role === "user")).toHaveLength(1);
  });

  it("a decline reaches the child, whose model reads it, and the parent carries on", async () => {
    flagged.length = 0;
    const first = await run(network(), model());
    const events = await resumed(first, [{ toolCallId: "d", approved: false, reason: "not suspicious" }]);
    expect(flagged).toEqual([]);
    expect(events.at(-1)).toMatchObject({
      type: "done",
      status: "completed",
      text: "Main: Checker: A person declined this call: not suspicious",
    });
    // The decision is the inner call's, in the child's history; the delegating call ran, and its message says only its answer.
    const delegating = first.store.history.find((m) => m.role === "tool" && m.toolCallId === "d");
    expect(delegating).toMatchObject({ content: "Checker: A person declined this call: not suspicious", isError: false });
    expect(delegating).not.toHaveProperty("approval");
    const inner = first.store.delegations.get("d")?.find((m) => m.role === "tool" && m.toolCallId === "f");
    expect(inner).toMatchObject({ isError: true, approval: { approved: false, reason: "not suspicious" } });
  });
});

describe("a delegated agent's spending", () => {
  it("counts toward the turn's budgets: the child is held to what the turn has left, and the parent counts what the child spent", async () => {
    const echo = tool({ name: "echo", description: "e", parameters: z.object({}), execute: () => "echoed" });
    const helper = new Agent({ name: "helper", instructions: "h", tools: [echo] });
    const main = new Agent({ name: "main", instructions: "m", tools: [helper.asTool()] });
    const model = new AgentModel({
      main: (r) => (answered(r) ? say("main answers") : call("d", "ask_helper", { request: "go" })),
      // Left alone, the helper would call echo twice and then answer: three model calls.
      helper: (r) => (r.messages.filter((m) => m.role === "tool").length < 2 ? call(`e${r.messages.length}`, "echo", {}) : say("helped")),
    });
    const network = new Network(main, { defaultModel: "m", budgets: { perTurn: { modelCalls: 3 } } });
    const { events } = await run(network, model);
    // main's first call, then two of the helper's: the helper's third call is refused, and so is main's next.
    expect(model.requests.map((r) => r.agent)).toEqual(["main", "helper", "helper"]);
    const nestedError = events.find((e) => e.type === "delegated" && e.event.type === "error");
    expect(nestedError).toMatchObject({ event: { code: "budget_exceeded" } });
    expect(events.find((e) => e.type === "tool-result" && e.toolCallId === "d")).toMatchObject({ isError: true });
    expect(events.at(-1)).toMatchObject({ type: "error", code: "budget_exceeded" });
  });

  it("of delegations running at once, each counts the others' steps as they end: together they stay within the turn's budget", async () => {
    // The first helper's answer lets the second one's tool end: the second's next call comes after the first has spent its two.
    let firstDone = () => {};
    const done = new Promise<void>((resolve) => (firstDone = resolve));
    const echo = tool({ name: "echo", description: "e", parameters: z.object({}), execute: () => "echoed" });
    const slowEcho = tool({ name: "slow_echo", description: "e", parameters: z.object({}), execute: async () => (await done, "echoed") });
    const first = new Agent({ name: "first", instructions: "f", tools: [echo] });
    const second = new Agent({ name: "second", instructions: "s", tools: [slowEcho] });
    const main = new Agent({ name: "main", instructions: "m", tools: [first.asTool(), second.asTool()] });
    const model = new AgentModel({
      main: (r) =>
        answered(r) ? say("main answers") : calls(["a", "ask_first", { request: "go" }], ["b", "ask_second", { request: "go" }]),
      first: (r) => {
        if (!answered(r)) return call("e1", "echo", {});
        setTimeout(firstDone, 10);
        return say("first done");
      },
      second: (r) => (answered(r) ? say("second done") : call("e2", "slow_echo", {})),
    });
    // Four model calls in the turn: main's first, the first helper's two, the second's first. Each helper alone has room.
    const network = new Network(main, { defaultModel: "m", budgets: { perTurn: { modelCalls: 4 } } });
    const { events } = await run(network, model);
    expect(model.requests.map((r) => r.agent).sort()).toEqual(["first", "first", "main", "second"]);
    expect(events.find((e) => e.type === "tool-result" && e.toolCallId === "a")).toMatchObject({ isError: false, result: "first done" });
    expect(events.find((e) => e.type === "tool-result" && e.toolCallId === "b")).toMatchObject({
      isError: true,
      result: expect.stringMatching(/perTurn\.modelCalls budget \(4\)/),
    });
    expect(events.at(-1)).toMatchObject({ type: "error", code: "budget_exceeded" });
  });
});
