/**
 * Rules in their detail: the settling of an interrupted approval, the history validator's
 * verdicts, how transfer calls are read, what a model's stream turns into, delegation, names.
 * Written against the survivors of a mutation run (test/mutation/survivors.json).
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { NO_USAGE } from "../../src/runtime/usage.ts";
import {
  newConversation,
  Agent,
  type Message,
  type Model,
  type ModelEvent,
  Network,
  type RunEvent,
  runTurn,
  type Suspension,
  tool,
} from "../../src/runtime/index.ts";
import { findHistoryProblem } from "../../src/runtime/messages.ts";
import { INTERRUPTED_CALL, settleInterrupted } from "../../src/runtime/wait/suspension.ts";
import { transferToolNames } from "../../src/runtime/tools/tool-names.ts";
import { MemoryStore } from "../support/scripted-model.ts";
import { echo, supportLike } from "../support/networks.ts";
import { ofType, playTurn } from "../support/run.ts";

const call = (id: string, name = "refund") => ({ id, name, arguments: "{}" });

function suspension(): Suspension {
  return {
    assistant: { role: "assistant", agent: "billing", content: null, toolCalls: [call("a", "lookup"), call("b"), call("c")] },
    results: [{ role: "tool", toolCallId: "a", name: "lookup", content: "found", isError: false }, null, null],
    pending: [
      { kind: "approval", toolCallId: "b", name: "refund", args: {}, agent: "billing" },
      { kind: "approval", toolCallId: "c", name: "refund", args: {}, agent: "billing" },
    ],
    progress: { handoffs: [], agentSteps: 1, errorSteps: 0, stepIndex: 2, usage: NO_USAGE },
    trailing: [{ role: "system", agent: "billing", content: "appended" }],
  };
}

describe("settling an approval interrupted by a crash", () => {
  it("answers every decided call and completes the step, its trailing messages after the results", () => {
    const settled = settleInterrupted(suspension(), [
      { toolCallId: "b", approved: true },
      { toolCallId: "c", approved: false, reason: "too much" },
    ]);
    expect(settled.suspension).toBeNull();
    expect(settled.answered).toEqual([
      { role: "tool", toolCallId: "b", name: "refund", content: INTERRUPTED_CALL, isError: true, approval: { approved: true } },
      {
        role: "tool",
        toolCallId: "c",
        name: "refund",
        content: "A person declined this call: too much",
        isError: true,
        approval: { approved: false, reason: "too much" },
      },
    ]);
    expect(settled.complete).toEqual([
      suspension().assistant,
      suspension().results[0],
      ...settled.answered,
      { role: "system", agent: "billing", content: "appended" },
    ]);
    expect(findHistoryProblem(settled.complete!)).toBeNull();
  });

  it("keeps undecided calls waiting, with the decided ones answered in place", () => {
    const settled = settleInterrupted(suspension(), [{ toolCallId: "c", approved: true }]);
    expect(settled.complete).toBeNull();
    expect(settled.answered.map((m) => m.toolCallId)).toEqual(["c"]);
    expect(settled.suspension).toMatchObject({
      pending: [{ toolCallId: "b" }],
      results: [{ toolCallId: "a" }, null, { toolCallId: "c", content: INTERRUPTED_CALL }],
    });
  });
});

describe("the history validator", () => {
  const assistant = (ids: string[]): Message => ({ role: "assistant", agent: "a", content: null, toolCalls: ids.map((id) => call(id)) });
  const result = (id: string): Message => ({ role: "tool", toolCallId: id, name: "refund", content: "ok", isError: false });
  const user: Message = { role: "user", content: "hi" };

  it.each([
    [[user, assistant(["x", "y"]), result("x"), result("y"), user], null],
    [[user, result("x")], "message 1: tool result x does not answer the next open call (none)"],
    [[assistant(["x", "y"]), result("y"), result("x")], "message 1: tool result y does not answer the next open call (x)"],
    [[assistant(["x", "y"]), result("x"), user], "message 2: calls left unanswered: y"],
    [[assistant(["x"]), assistant([])], "message 1: calls left unanswered: x"],
    [[user, assistant(["x", "z"])], "calls left unanswered at the end: x, z"],
  ] as const)("judges %#", (messages, problem) => {
    expect(findHistoryProblem(messages as readonly Message[])).toBe(problem);
  });
});

describe("reading transfer calls", () => {
  const styled = (toolStyle: "single" | "named") => {
    const billing = new Agent({ name: "billing", instructions: "b" });
    return new Network(new Agent({ name: "triage", instructions: "t", handoffs: [billing] }), { defaultModel: "m", toolStyle });
  };

  it("trims the reason, ignores a blank one, and reads malformed or non-object arguments as none", async () => {
    for (const [args, reason] of [
      [{ reason: "  double charge  " }, "double charge"],
      [{ reason: "   " }, undefined],
      ["[1,2]", undefined],
      ["{oops", undefined],
    ] as const) {
      const { events } = await playTurn(supportLike(), "bill", [
        { toolCalls: [{ id: "t", name: "transfer_to_billing", ...(typeof args === "string" ? { rawArgs: args } : { args }) }] },
        { text: "ok" },
      ]);
      const handoff = ofType(events, "handoff")[0]!;
      expect(handoff.to).toBe("billing");
      expect(handoff.kind).toBe("transfer");
      expect("reason" in handoff ? handoff.reason : undefined).toBe(reason);
    }
  });

  it("single and named styles read the target from their argument, trimmed; a missing one is named in the refusal", async () => {
    const single = await playTurn(styled("single"), "x", [
      { toolCalls: [{ id: "t", name: "transfer_to_agent", args: { agent_name: " billing ", reason: "r" } }] },
      { text: "ok" },
    ]);
    expect(ofType(single.events, "handoff")[0]).toMatchObject({ to: "billing", reason: "r" });
    const named = await playTurn(styled("named"), "x", [
      { toolCalls: [{ id: "t", name: "handoff", args: { reason: "r" } }] },
      { text: "ok" },
    ]);
    expect(ofType(named.events, "tool-result")[0]!.result).toBe(
      "Cannot hand off: '(no name)' is not an available transfer. Available agents: billing.",
    );
    const perTargetName = await playTurn(styled("named"), "x", [{ toolCalls: [{ id: "t", name: "transfer_to_billing" }] }, { text: "ok" }]);
    expect(ofType(perTargetName.events, "tool-result")[0]!.result).toBe(
      "Cannot hand off: 'transfer_to_billing' is not an available transfer. Available agents: billing.",
    );
  });

  it("an agent with no transfers says so when the model tries one, and the step runs on", async () => {
    const solo = new Network(new Agent({ name: "solo", instructions: "x" }), { defaultModel: "m" });
    const { events } = await playTurn(solo, "x", [{ toolCalls: [{ id: "t", name: "transfer_to_elsewhere" }] }, { text: "ok" }]);
    expect(ofType(events, "tool-result")[0]).toMatchObject({
      isError: true,
      result: "Cannot hand off: 'transfer_to_elsewhere' is not an available transfer. This agent has no transfers.",
    });
  });

  it("a typed input travels as an object; anything else is no input", async () => {
    const billing = new Agent({ name: "billing", instructions: "b" });
    const { handoff } = await import("../../src/runtime/index.ts");
    const net = new Network(
      new Agent({ name: "triage", instructions: "t", handoffs: [handoff(billing, { inputSchema: z.object({ orderId: z.string() }) })] }),
      { defaultModel: "m", toolStyle: "single" },
    );
    const ok = await playTurn(net, "x", [
      { toolCalls: [{ id: "t", name: "transfer_to_agent", args: { agent_name: "billing", input: { orderId: "A1" } } }] },
      { text: "ok" },
    ]);
    expect(ofType(ok.events, "handoff")[0]).toMatchObject({ input: { orderId: "A1" } });
    const refused = await playTurn(net, "x", [
      { toolCalls: [{ id: "t", name: "transfer_to_agent", args: { agent_name: "billing", input: ["A1"] } }] },
      { text: "ok" },
    ]);
    expect(ofType(refused.events, "tool-result")[0]).toMatchObject({
      isError: true,
      result: expect.stringMatching(/^Cannot hand off to 'billing': invalid input/),
    });
  });
});

/** A model that streams exactly the events it is given. */
function streaming(events: ModelEvent[]): Model {
  return {
    async *stream() {
      yield* events;
    },
  };
}

async function collect(model: Model): Promise<RunEvent[]> {
  const network = new Network(new Agent({ name: "solo", instructions: "x", tools: [echo] }), { defaultModel: "m" });
  const out: RunEvent[] = [];
  for await (const event of runTurn({
    conversationId: "c",
    network,
    model,
    store: new MemoryStore("solo"),
    conversation: newConversation("solo"),
    input: { kind: "message", text: "go" },
    limits: { maxSteps: 1 },
  })) {
    out.push(event);
  }
  return out;
}

describe("what a model's stream turns into", () => {
  it("drops empty text deltas, and reports tool calls sent with finish 'stop' as tool_calls", async () => {
    const events = await collect(
      streaming([
        { type: "text-delta", delta: "" },
        { type: "text-delta", delta: "hi" },
        { type: "tool-call", call: { id: "e", name: "echo", arguments: '{"text":"x"}' } },
        { type: "finish", finishReason: "stop" },
      ]),
    );
    expect(ofType(events, "text-delta").map((e) => e.delta)).toEqual(["hi"]);
    expect(ofType(events, "step-finish")[0]).toEqual({ type: "step-finish", stepIndex: 0, finishReason: "tool_calls" });
    expect(events.at(-1)).toMatchObject({ type: "error", code: "max_steps", message: "Agent 'solo' reached maxSteps (1) in this turn." });
  });

  it("keeps a provider's finish reason and usage on step-finish", async () => {
    const events = await collect(
      streaming([
        { type: "text-delta", delta: "cut" },
        { type: "finish", finishReason: "length", usage: { inputTokens: 3, outputTokens: 4 } },
      ]),
    );
    expect(ofType(events, "step-finish")[0]).toEqual({
      type: "step-finish",
      stepIndex: 0,
      finishReason: "length",
      usage: { inputTokens: 3, outputTokens: 4 },
    });
    expect(events.at(-1)).toMatchObject({
      type: "done",
      text: "cut",
      usage: { modelCalls: 1, inputTokens: 3, outputTokens: 4, toolCalls: 0 },
    });
  });
});

describe("approval gate details", () => {
  it("a call whose arguments do not parse or validate fails as a tool error without asking anyone", async () => {
    let asked = 0;
    const costly = tool({
      name: "costly",
      description: "c",
      parameters: z.object({ n: z.number() }),
      needsApproval: () => ++asked > 0,
      execute: ({ n }) => n,
    });
    const net = new Network(new Agent({ name: "solo", instructions: "x", tools: [costly] }), { defaultModel: "m" });
    const { events } = await playTurn(net, "x", [
      {
        toolCalls: [
          { id: "a", name: "costly", rawArgs: "{bad" },
          { id: "b", name: "costly", args: { n: "two" } },
        ],
      },
      { text: "ok" },
    ]);
    expect(asked).toBe(0);
    expect(ofType(events, "approval-required")).toEqual([]);
    expect(ofType(events, "tool-result").map((r) => r.isError)).toEqual([true, true]);
  });

  it("a false needsApproval runs the call at once", async () => {
    const free = tool({ name: "free", description: "f", parameters: z.object({}), needsApproval: false, execute: () => "ran" });
    const net = new Network(new Agent({ name: "solo", instructions: "x", tools: [free] }), { defaultModel: "m" });
    const { events } = await playTurn(net, "x", [{ toolCalls: [{ id: "a", name: "free" }] }, { text: "ok" }]);
    expect(ofType(events, "tool-result")[0]).toMatchObject({ result: "ran", isError: false });
  });
});

describe("delegation and agents", () => {
  it("asTool names and describes the tool after the agent, and returns its answer", async () => {
    const researcher = new Agent({ name: "Re Searcher", description: "Finds things.", instructions: "r" });
    const ask = researcher.asTool();
    expect(ask.name).toBe("ask_re_searcher");
    expect(ask.description).toBe("Ask 'Re Searcher' and get its answer back. Finds things.");
    expect(new Agent({ name: "quiet", instructions: "q" }).asTool().description).toBe("Ask 'quiet' and get its answer back.");
    const lead = new Network(new Agent({ name: "lead", instructions: "l", tools: [ask] }), { defaultModel: "m" });
    const { events, model } = await playTurn(lead, "x", [
      { toolCalls: [{ id: "d", name: "ask_re_searcher", args: { request: "find it" } }] },
      { text: "Found: 42" },
      { text: "It is 42." },
    ]);
    expect(ofType(events, "tool-result")[0]).toMatchObject({ result: "Found: 42", isError: false });
    expect(model.requests[1]).toMatchObject({ agent: "Re Searcher", messages: [{ role: "user", content: "find it" }] });
  });

  it("a delegate that fails is the calling tool's error", async () => {
    const flaky = new Agent({ name: "flaky", instructions: "f" });
    const lead = new Network(new Agent({ name: "lead", instructions: "l", tools: [flaky.asTool()] }), { defaultModel: "m" });
    const { events } = await playTurn(lead, "x", [
      { toolCalls: [{ id: "d", name: "ask_flaky", args: { request: "go" } }] },
      { throws: new Error("down") },
      { text: "sorry" },
    ]);
    expect(ofType(events, "tool-result")[0]).toMatchObject({ isError: true, result: expect.stringContaining("'flaky' failed:") });
  });

  it("addHandoff links a target once; an agent's description defaults to empty", () => {
    const a = new Agent({ name: "a", instructions: "a" });
    const b = new Agent({ name: "b", instructions: "b" });
    a.addHandoff(b).addHandoff(b);
    expect(a.handoffs).toHaveLength(1);
    expect(b.description).toBe("");
  });
});

describe("transfer tool names", () => {
  it("number collisions from 2, keep within 60 characters, and hash names with nothing left", () => {
    const long = "x".repeat(70);
    const names = transferToolNames(["Café", "cafe", "café!", long, `${long}y`, "日本", "中文"]);
    expect([...names.values()]).toEqual([
      "transfer_to_cafe",
      "transfer_to_cafe_2",
      "transfer_to_cafe_",
      `transfer_to_${"x".repeat(48)}`,
      `transfer_to_${"x".repeat(46)}_2`,
      expect.stringMatching(/^transfer_to_u[0-9a-f]{16}$/),
      expect.stringMatching(/^transfer_to_u[0-9a-f]{16}$/),
    ]);
    expect(names.get("日本")).not.toBe(names.get("中文"));
    expect(transferToolNames(["日本"]).get("日本")).toBe(names.get("日本"));
    // FNV-1a 64 over the UTF-8 bytes, computed independently.
    expect(names.get("日本")).toBe("transfer_to_u121d7e35a6d3ce91");
  });
});

describe("more of the details", () => {
  it("errors: anything thrown becomes an internal_error keeping its message and cause; a RuntimeError passes through", async () => {
    const { RuntimeError, toRuntimeError } = await import("../../src/runtime/errors.ts");
    const cause = new TypeError("bad thing");
    const wrapped = toRuntimeError(cause);
    expect(wrapped).toMatchObject({ name: "RuntimeError", code: "internal_error", message: "bad thing", cause });
    expect(toRuntimeError("plain")).toMatchObject({ code: "internal_error", message: "plain" });
    const own = new RuntimeError("max_steps", "m", { status: 429 });
    expect(toRuntimeError(own)).toBe(own);
    expect(own.status).toBe(429);
    expect("cause" in own).toBe(false);
  });

  it("a tool's answer: a string as it is, anything else as JSON, nothing as null; empty arguments are no arguments", async () => {
    const answers = [
      tool({ name: "say", description: "s", parameters: z.object({}), execute: () => "plain words" }),
      tool({ name: "nothing", description: "n", parameters: z.object({}), execute: () => undefined }),
    ];
    const net = new Network(new Agent({ name: "solo", instructions: "x", tools: answers }), { defaultModel: "m" });
    const { events, model } = await playTurn(net, "x", [
      {
        toolCalls: [
          { id: "s", name: "say", rawArgs: "  " },
          { id: "n", name: "nothing", rawArgs: "" },
        ],
      },
      { text: "ok" },
    ]);
    expect(ofType(events, "tool-result").map((r) => [r.result, r.isError])).toEqual([
      ["plain words", false],
      [null, false],
    ]);
    expect(model.requests[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual(["plain words", "null"]);
    const { events: unknown } = await playTurn(new Network(new Agent({ name: "bare", instructions: "x" }), { defaultModel: "m" }), "x", [
      { toolCalls: [{ id: "u", name: "ghost" }] },
      { text: "ok" },
    ]);
    expect(ofType(unknown, "tool-result")[0]!.result).toBe("Unknown tool 'ghost'. Available tools: none.");
  });

  it("a transfer's arguments that are JSON but not an object read as no arguments; a non-object input is no input", async () => {
    for (const raw of ["null", "5", '"text"', "[]"]) {
      const { events } = await playTurn(supportLike(), "x", [
        { toolCalls: [{ id: "t", name: "transfer_to_billing", rawArgs: raw }] },
        { text: "ok" },
      ]);
      expect(ofType(events, "handoff")[0]).toMatchObject({ to: "billing" });
      expect(ofType(events, "handoff")[0]).not.toHaveProperty("reason");
    }
    const single = new Network(
      new Agent({ name: "triage", instructions: "t", handoffs: [new Agent({ name: "billing", instructions: "b" })] }),
      { defaultModel: "m", toolStyle: "single" },
    );
    for (const input of ["text", 5, null]) {
      const { events } = await playTurn(single, "x", [
        { toolCalls: [{ id: "t", name: "transfer_to_agent", args: { agent_name: "billing", input } }] },
        { text: "ok" },
      ]);
      expect(ofType(events, "handoff")[0]).not.toHaveProperty("input");
    }
  });

  it("a resumed call whose agent a deploy removed is answered as an unknown tool; a call left undecided is declined", async () => {
    const { withApprovals } = await import("../support/networks.ts");
    const first = await playTurn(withApprovals(), "refund", [
      {
        toolCalls: [
          { id: "r", name: "refund", args: { amount: 50 } },
          { id: "s", name: "refund", args: { amount: 60 } },
        ],
      },
    ]);
    const renamed = {
      ...first.store.suspension!,
      pending: first.store.suspension!.pending.map((p) => (p.toolCallId === "r" ? { ...p, agent: "retired" } : p)),
    };
    const second = await playTurn(
      withApprovals(),
      { kind: "resume", suspension: renamed, decisions: [{ toolCallId: "r", approved: true }] },
      [{ text: "ok" }],
      { store: first.store },
    );
    expect(ofType(second.events, "tool-result").map((r) => [r.toolCallId, r.isError, r.result])).toEqual([
      ["r", true, "Unknown tool 'refund'. Available tools: none."],
      ["s", true, "A person declined this call."],
    ]);
  });

  it("an approved call that fails counts toward the runaway-error guard like any failed tool", async () => {
    const failing = tool({
      name: "risky",
      description: "r",
      parameters: z.object({}),
      needsApproval: true,
      execute: () => {
        throw new Error("no");
      },
    });
    const { explode } = await import("../support/networks.ts");
    const net = new Network(new Agent({ name: "solo", instructions: "x", tools: [failing, explode] }), { defaultModel: "m" });
    const fail = (id: string) => ({ toolCalls: [{ id, name: "explode" }] });
    const first = await playTurn(net, "x", [fail("e1"), fail("e2"), { toolCalls: [{ id: "k", name: "risky" }] }], {
      limits: { maxToolErrorSteps: 3 },
    });
    const second = await playTurn(
      net,
      { kind: "resume", suspension: first.store.suspension!, decisions: [{ toolCallId: "k", approved: true }] },
      [],
      { store: first.store, limits: { maxToolErrorSteps: 3 } },
    );
    expect(ofType(second.events, "tool-result")[0]).toMatchObject({ isError: true, result: "Tool 'risky' failed: no" });
    expect(second.events.at(-1)).toMatchObject({
      type: "error",
      code: "too_many_tool_errors",
      message: "3 steps in a row ended with only failed tool calls; the turn was stopped.",
    });
  });

  it("a denial's reason is trimmed; a blank one reads as none", () => {
    expect(
      settleInterrupted(suspension(), [
        { toolCallId: "b", approved: false, reason: "  no thanks  " },
        { toolCallId: "c", approved: false, reason: "   " },
      ]).answered.map((m) => m.content),
    ).toEqual(["A person declined this call: no thanks", "A person declined this call."]);
  });

  it("delegation suspends the whole turn on the delegate's approval, naming its call under the delegating one", async () => {
    const gated = tool({ name: "gated", description: "g", parameters: z.object({}), needsApproval: true, execute: () => "never" });
    const helper = new Agent({ name: "helper", instructions: "h", tools: [gated] });
    const lead = new Network(new Agent({ name: "lead", instructions: "l", tools: [helper.asTool()] }), { defaultModel: "m" });
    const { events, model } = await playTurn(lead, "x", [
      { toolCalls: [{ id: "d", name: "ask_helper", args: { request: "do it" } }] },
      { toolCalls: [{ id: "g", name: "gated" }] },
    ]);
    expect(ofType(events, "tool-result")).toEqual([]);
    expect(ofType(events, "approval-required")[0]).toMatchObject({
      toolCallId: "d",
      name: "gated",
      agent: "helper",
      delegated: { path: ["d"], toolCallId: "g" },
    });
    expect(ofType(events, "done")[0]).toMatchObject({ status: "awaiting_approval", agent: "lead" });
    expect(model.requests[1]).toMatchObject({ agent: "helper", model: "m" });
  });
});

describe("small contracts", () => {
  it("a plain answer keeps finish 'stop'; a model that never says why it stopped reads as 'stop'", async () => {
    const plain = await collect(
      streaming([
        { type: "text-delta", delta: "hi" },
        { type: "finish", finishReason: "stop" },
      ]),
    );
    expect(ofType(plain, "step-finish")[0]).toEqual({ type: "step-finish", stepIndex: 0, finishReason: "stop" });
    const silent = await collect(streaming([{ type: "text-delta", delta: "hi" }]));
    expect(ofType(silent, "step-finish")[0]).toEqual({ type: "step-finish", stepIndex: 0, finishReason: "stop" });
  });

  it("asTool tells the model what its one parameter is for", () => {
    const schema = z.toJSONSchema(new Agent({ name: "r", instructions: "r" }).asTool().parameters) as unknown as {
      properties: { request: { description: string; minLength: number } };
    };
    expect(schema.properties.request).toMatchObject({
      description: "What to ask, with everything the agent needs: it sees nothing else.",
      minLength: 1,
    });
  });

  it("lists every available tool and every unanswered call, comma-separated", async () => {
    const net = new Network(
      new Agent({
        name: "solo",
        instructions: "x",
        tools: [echo, tool({ name: "other", description: "o", parameters: z.object({}), execute: () => 1 })],
      }),
      { defaultModel: "m" },
    );
    const { events } = await playTurn(net, "x", [{ toolCalls: [{ id: "g", name: "ghost" }] }, { text: "ok" }]);
    expect(ofType(events, "tool-result")[0]!.result).toBe("Unknown tool 'ghost'. Available tools: echo, other.");
    const two: Message[] = [
      { role: "assistant", agent: "a", content: null, toolCalls: [call("x"), call("y")] },
      { role: "user", content: "hi" },
    ];
    expect(findHistoryProblem(two)).toBe("message 1: calls left unanswered: x, y");
  });
});
