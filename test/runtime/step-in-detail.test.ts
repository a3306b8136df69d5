/**
 * One step in its detail: which names count as the agent itself, what each limit counts, what a
 * guardrail's block changes, what the `drop` policy removes, what a step commits, how approved
 * calls are matched to their answers, and what a delegated agent sees. Written against the
 * survivors of a mutation run (test/mutation/survivors.json); each test names the rule it pins.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  newConversation,
  Agent,
  handoff,
  type Model,
  type ModelRequest,
  Network,
  type RunEvent,
  RuntimeError,
  tool,
  type ToolContext,
} from "../../src/runtime/index.ts";
import { echo, refunds, supportLike, withApprovals } from "../support/networks.ts";
import { eventsOfTurn, ofType, playTurn } from "../support/run.ts";
import { MemoryStore } from "../support/scripted-model.ts";

const answers = (events: RunEvent[]) => ofType(events, "tool-result").map((e) => [e.name, e.result, e.isError]);
const done = (events: RunEvent[]) => ofType(events, "done")[0];
const failure = (events: RunEvent[]) => ofType(events, "error")[0];

beforeEach(() => {
  refunds.length = 0;
});

describe("a transfer to the agent itself", () => {
  it("is refused by its own per-target tool name, listing the transfers it has", async () => {
    const store = new MemoryStore("billing");
    const { events } = await playTurn(supportLike(), "hi", [{ toolCalls: [{ name: "transfer_to_billing" }] }, { text: "still billing" }], {
      store,
    });
    expect(answers(events)).toEqual([
      [
        "transfer_to_billing",
        "'billing' already holds the conversation. Available: transfer_to_triage (triage), transfer_to_shipping (shipping).",
        true,
      ],
    ]);
  });
});

describe("counting", () => {
  it("numbers steps from 0 up, across handoffs", async () => {
    const { events } = await playTurn(supportLike(), "hi", [
      { toolCalls: [{ name: "echo", args: { text: "a" } }] },
      { toolCalls: [{ name: "transfer_to_billing" }] },
      { text: "billing" },
    ]);
    expect(ofType(events, "step-start").map((e) => [e.stepIndex, e.agent])).toEqual([
      [0, "triage"],
      [1, "triage"],
      [2, "billing"],
    ]);
    expect(ofType(events, "step-finish").map((e) => e.stepIndex)).toEqual([0, 1, 2]);
  });

  it("refuses a revisit to any agent the turn has reached, not only the first holder", async () => {
    const c = new Agent({ name: "c", instructions: "c" });
    const b = new Agent({ name: "b", instructions: "b" });
    const network = new Network(new Agent({ name: "a", instructions: "a" }), { defaultModel: "m", register: [b, c], allowRevisit: false });
    const { events } = await playTurn(network, "hi", [
      { toolCalls: [{ name: "transfer_to_b" }] },
      { toolCalls: [{ name: "transfer_to_c" }] },
      { toolCalls: [{ name: "transfer_to_b" }] },
      { text: "c stays" },
    ]);
    expect(answers(events).at(-1)).toEqual(["transfer_to_b", "Cannot hand off to 'b': already visited in this turn.", true]);
    expect(done(events)).toMatchObject({ status: "completed", agent: "c" });
  });

  it("charges the tool-call budget for regular tools only, not for a transfer beside them", async () => {
    const network = new Network(supportLike().entry, { defaultModel: "m", budgets: { perTurn: { toolCalls: 1 } } });
    const { events } = await playTurn(network, "hi", [
      { toolCalls: [{ name: "echo", args: { text: "a" } }, { name: "transfer_to_billing" }] },
      { text: "billing" },
    ]);
    expect(done(events)).toMatchObject({ status: "completed", agent: "billing", usage: { toolCalls: 1 } });
  });

  it("commits each step's own spending, and the turn's total on done", async () => {
    const { events, store } = await playTurn(supportLike(), "hi", [
      {
        toolCalls: [
          { name: "echo", args: { text: "a" } },
          { name: "echo", args: { text: "b" } },
        ],
      },
      { toolCalls: [{ name: "transfer_to_billing" }] },
      { text: "billing" },
    ]);
    expect(store.commits.map((c) => c.usage)).toEqual([
      undefined,
      { modelCalls: 1, inputTokens: 10, outputTokens: 5, toolCalls: 2 },
      { modelCalls: 1, inputTokens: 10, outputTokens: 5, toolCalls: 0 },
      { modelCalls: 1, inputTokens: 10, outputTokens: 5, toolCalls: 0 },
    ]);
    expect(done(events)!.usage).toEqual({ modelCalls: 3, inputTokens: 30, outputTokens: 15, toolCalls: 2 });
  });
});

describe("the runaway-error guard", () => {
  it("restarts after a step where any counted call succeeded", async () => {
    const { events } = await playTurn(
      supportLike(),
      "hi",
      [
        { toolCalls: [{ name: "explode" }] },
        { toolCalls: [{ name: "explode" }, { name: "echo", args: { text: "ok" } }] },
        { toolCalls: [{ name: "explode" }] },
        { text: "gave up on exploding" },
      ],
      { limits: { maxToolErrorSteps: 2 } },
    );
    expect(done(events)).toMatchObject({ status: "completed" });
  });

  it("lets a transfer taken in the step that reaches the limit go ahead", async () => {
    const { events } = await playTurn(
      supportLike(),
      "hi",
      [{ toolCalls: [{ name: "explode" }, { name: "transfer_to_billing" }] }, { text: "billing" }],
      {
        limits: { maxToolErrorSteps: 1 },
      },
    );
    expect(done(events)).toMatchObject({ status: "completed", agent: "billing" });
  });
});

describe("tool guardrails", () => {
  const noRefunds = () => ({ block: true as const, reason: "no refunds" });

  it("answer a blocked call without asking for approval, and do not count it as a failure", async () => {
    const network = new Network(withApprovals().entry, { defaultModel: "m", toolGuardrails: [noRefunds] });
    const { events } = await playTurn(
      network,
      "refund",
      [{ toolCalls: [{ id: "r", name: "refund", args: { amount: 50 } }] }, { text: "cannot" }],
      {
        limits: { maxToolErrorSteps: 1 },
      },
    );
    expect(ofType(events, "approval-required")).toEqual([]);
    expect(answers(events)).toEqual([["refund", "Blocked by a guardrail: no refunds", true]]);
    expect(ofType(events, "guardrail")).toEqual([
      { type: "guardrail", kind: "tool", agent: "triage", reason: "no refunds", toolCallId: "r" },
    ]);
    expect(done(events)).toMatchObject({ status: "completed" });
    expect(refunds).toEqual([]);
  });
});

describe("output guardrails", () => {
  const agentWith = () =>
    new Network(
      new Agent({
        name: "solo",
        instructions: "s",
        tools: [echo],
        outputGuardrails: [({ text }) => (text.includes("draft") ? { block: true, reason: "drafts stay private" } : undefined)],
      }),
      {
        defaultModel: "m",
      },
    );

  it("check the final answer only, not the text of a step that calls tools", async () => {
    const { events } = await playTurn(agentWith(), "hi", [
      { text: "draft: looking", toolCalls: [{ name: "echo", args: { text: "a" } }] },
      { text: "final" },
    ]);
    expect(done(events)).toMatchObject({ status: "completed", text: "final" });
  });

  it("end the turn with the reason when the final answer is blocked", async () => {
    const { events } = await playTurn(agentWith(), "hi", [{ text: "a draft" }]);
    expect(failure(events)).toEqual({ type: "error", code: "guardrail_blocked", message: "The answer was blocked: drafts stay private" });
  });
});

describe("the drop policy", () => {
  it("removes only the extra transfers of a step; refusals for other reasons stay, answered", async () => {
    const network = new Network(supportLike().entry, { defaultModel: "m", extraTransfers: "drop" });
    const { store } = await playTurn(network, "hi", [
      {
        toolCalls: [
          { id: "e", name: "echo", args: { text: "a" } },
          { id: "t", name: "transfer_to_billing" },
          { id: "x", name: "transfer_to_shipping" },
          { id: "n", name: "transfer_to_nowhere" },
        ],
      },
      { text: "billing" },
    ]);
    const [assistant, ...results] = store.history.slice(1, 5);
    expect(assistant).toMatchObject({ role: "assistant", toolCalls: [{ id: "e" }, { id: "t" }, { id: "n" }] });
    expect(results.map((r) => r.role === "tool" && [r.toolCallId, r.isError])).toEqual([
      ["e", false],
      ["t", false],
      ["n", true],
    ]);
  });
});

describe("the append system prompt", () => {
  it("records the target's instructions as they read the context the transfer brought", async () => {
    const billing = new Agent({ name: "billing", instructions: ({ context }) => `Order ${String(context.order)}.` });
    const triage = new Agent({
      name: "triage",
      instructions: "t",
      handoffs: [handoff(billing, { inputSchema: z.object({ order: z.string() }) })],
    });
    const network = new Network(triage, { defaultModel: "m", systemPrompt: "append" });
    const { store } = await playTurn(network, "hi", [
      { toolCalls: [{ name: "transfer_to_billing", args: { order: "A7" } }] },
      { text: "billing" },
    ]);
    expect(store.history.filter((m) => m.role === "system")).toEqual([{ role: "system", agent: "billing", content: "Order A7." }]);
  });
});

describe("settling approvals", () => {
  const first = () =>
    playTurn(withApprovals(), "refund", [
      {
        toolCalls: [
          { id: "a", name: "refund", args: { amount: 20 } },
          { id: "b", name: "refund", args: { amount: 30 } },
        ],
      },
    ]);

  it("runs each approved call with its own arguments, and answers each call with its own result", async () => {
    const suspended = await first();
    const { events, store } = await playTurn(
      withApprovals(),
      {
        kind: "resume",
        suspension: suspended.store.suspension!,
        decisions: [
          { toolCallId: "a", approved: true },
          { toolCallId: "b", approved: true },
        ],
      },
      [{ text: "done" }],
      { store: suspended.store },
    );
    expect(refunds).toEqual(["20", "30"]);
    expect(answers(events)).toEqual([
      ["refund", { refunded: 20 }, false],
      ["refund", { refunded: 30 }, false],
    ]);
    expect(store.history.filter((m) => m.role === "tool").map((m) => m.role === "tool" && [m.toolCallId, m.content])).toEqual([
      ["a", '{"refunded":20}'],
      ["b", '{"refunded":30}'],
    ]);
  });

  it("answers a denied call after an approved one with its denial", async () => {
    const suspended = await first();
    const { store } = await playTurn(
      withApprovals(),
      {
        kind: "resume",
        suspension: suspended.store.suspension!,
        decisions: [
          { toolCallId: "a", approved: true },
          { toolCallId: "b", approved: false, reason: "too much" },
        ],
      },
      [{ text: "done" }],
      { store: suspended.store },
    );
    expect(store.history.filter((m) => m.role === "tool").map((m) => m.role === "tool" && [m.toolCallId, m.content])).toEqual([
      ["a", '{"refunded":20}'],
      ["b", "A person declined this call: too much"],
    ]);
  });
});

describe("a model's finish reason", () => {
  it("is passed on as given when a step with tool calls ends otherwise than 'stop'", async () => {
    let calls = 0;
    const model: Model = {
      async *stream() {
        if (calls++ === 0) {
          yield { type: "tool-call", call: { id: "e", name: "echo", arguments: '{"text":"a"}' } };
          yield { type: "finish", finishReason: "length" };
        } else {
          yield { type: "text-delta", delta: "ok" };
          yield { type: "finish", finishReason: "stop" };
        }
      },
    };
    const events = await eventsOfTurn(supportLike(), model);
    expect(ofType(events, "step-finish").map((e) => e.finishReason)).toEqual(["length", "stop"]);
  });
});

describe("a delegated agent", () => {
  it("runs under its own conversation id, below the caller's", async () => {
    const seen: string[] = [];
    const probe = tool({
      name: "probe",
      description: "p",
      parameters: z.object({}),
      execute: (_args, ctx: ToolContext) => (seen.push(ctx.conversationId), "probed"),
    });
    const helper = new Agent({ name: "helper", instructions: "h", tools: [probe] });
    const network = new Network(new Agent({ name: "main", instructions: "m", tools: [helper.asTool()] }), { defaultModel: "m" });
    const { events } = await playTurn(network, "hi", [
      { toolCalls: [{ name: "ask_helper", args: { request: "look" } }] },
      { toolCalls: [{ name: "probe" }] },
      { text: "found" },
      { text: "main done" },
    ]);
    expect(seen).toEqual(["c1/helper"]);
    expect(answers(events)).toEqual([["ask_helper", "found", false]]);
  });

  it("suspends the turn when its own turn waits for an approval: the request is the delegate's call, the decision the delegating call's", async () => {
    const gated = tool({ name: "gated", description: "g", parameters: z.object({}), needsApproval: true, execute: () => "ran" });
    const helper = new Agent({ name: "helper", instructions: "h", tools: [gated] });
    const network = new Network(new Agent({ name: "main", instructions: "m", tools: [helper.asTool()] }), { defaultModel: "m" });
    const { events, store } = await playTurn(network, "hi", [
      { toolCalls: [{ name: "ask_helper", args: { request: "do" } }] },
      { toolCalls: [{ name: "gated" }] },
    ]);
    expect(answers(events)).toEqual([]);
    const [asked] = ofType(events, "approval-required");
    expect(asked).toMatchObject({ name: "gated", agent: "helper" });
    expect(asked!.delegated?.path).toEqual([asked!.toolCallId]);
    expect(store.suspension?.pending).toMatchObject([{ kind: "approval", toolCallId: asked!.toolCallId }]);
  });
});

describe("transfer calls in another style's names", () => {
  it("are not transfers in per-target style: transfer_to_agent is refused, handoff is an unknown tool", async () => {
    const { events } = await playTurn(supportLike(), "hi", [
      {
        toolCalls: [
          { name: "transfer_to_agent", args: { agent_name: "billing" } },
          { name: "handoff", args: { name: "billing" } },
        ],
      },
      { text: "triage stays" },
    ]);
    expect(ofType(events, "handoff")).toEqual([]);
    const [single, named] = ofType(events, "tool-result");
    expect(single!.result).toMatch(/^Cannot hand off: 'transfer_to_agent' is not an available transfer\./);
    expect(named!.result).toMatch(/^Unknown tool 'handoff'/);
    expect(done(events)).toMatchObject({ agent: "triage" });
  });

  it.each([[[1]], [null], ["text"]])("read a typed input given as %j as no input, in single and named style", async (input) => {
    for (const [style, name, key] of [
      ["single", "transfer_to_agent", "agent_name"],
      ["named", "handoff", "name"],
    ] as const) {
      const billing = new Agent({ name: "billing", instructions: "b" });
      const triage = new Agent({
        name: "triage",
        instructions: "t",
        handoffs: [handoff(billing, { inputSchema: z.object({ note: z.string().optional() }) })],
      });
      const network = new Network(triage, { defaultModel: "m", toolStyle: style });
      const { events } = await playTurn(network, "hi", [{ toolCalls: [{ name, args: { [key]: "billing", input } }] }, { text: "billing" }]);
      expect(ofType(events, "handoff")).toMatchObject([{ from: "triage", to: "billing", input: {} }]);
    }
  });
});

/** A model whose reported input tokens are `factor` times the estimate; summary calls answer "S". */
function reporting(factor: (request: ModelRequest) => number, steps: Array<"echo" | "big" | "text">): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async *stream(request) {
      requests.push(request);
      if (request.instructions.startsWith("Summarize")) {
        yield { type: "text-delta", delta: "S" };
        yield { type: "finish", finishReason: "stop" };
        return;
      }
      const step = steps.shift();
      if (step === "text") yield { type: "text-delta", delta: "answer" };
      else
        yield {
          type: "tool-call",
          call: { id: `c${requests.length}`, name: "echo", arguments: JSON.stringify({ text: step === "big" ? "w".repeat(8000) : "a" }) },
        };
      yield {
        type: "finish",
        finishReason: step === "text" ? "stop" : "tool_calls",
        usage: { inputTokens: factor(request), outputTokens: 1 },
      };
    },
  };
}

describe("calibrating the estimate with reported tokens", () => {
  const history = Array.from({ length: 12 }, (_, i) =>
    i % 2 ? { role: "assistant" as const, agent: "solo", content: "a".repeat(200) } : { role: "user" as const, content: "u".repeat(200) },
  );
  const run = async (budget: number, model: Model) => {
    const network = new Network(new Agent({ name: "solo", instructions: "x", tools: [echo], contextBudget: budget }), {
      defaultModel: "m",
    });
    return eventsOfTurn(network, model, {
      conversation: { ...newConversation("solo"), history: [...history] },
      input: { kind: "message", text: "next" },
    });
  };

  it("compacts when the provider counts far more tokens than estimated", async () => {
    const events = await run(
      1_000,
      reporting(() => 100_000, ["echo", "text"]),
    );
    // Corrected by the provider's count, no candidate keeps more than the last turn (from "next", message 12).
    expect(ofType(events, "compaction")).toMatchObject([{ replaced: 12 }]);
    expect(ofType(events, "step-start")).toHaveLength(2);
    expect(events.findIndex((e) => e.type === "compaction")).toBeGreaterThan(events.findIndex((e) => e.type === "step-finish"));
  });

  it("does not compact when the provider counts far fewer tokens than estimated", async () => {
    const uncalibrated = await run(
      1_500,
      reporting(() => 0, ["big", "text"]),
    );
    expect(ofType(uncalibrated, "compaction")).toHaveLength(1);
    const calibrated = await run(
      1_500,
      reporting(() => 1, ["big", "text"]),
    );
    expect(ofType(calibrated, "compaction")).toEqual([]);
  });
});

describe("a run that fails", () => {
  it("reports the provider's status on the error event", async () => {
    const model: Model = {
      stream() {
        throw new RuntimeError("model_error", "The model provider answered 429.", { status: 429 });
      },
    };
    const events = await eventsOfTurn(supportLike(), model);
    expect(failure(events)).toEqual({ type: "error", code: "model_error", message: "The model provider answered 429.", status: 429 });
  });

  it("ends a cancelled run with done, status cancelled, the holder and what the turn spent", async () => {
    const controller = new AbortController();
    const model: Model = {
      async *stream() {
        controller.abort();
        yield { type: "finish", finishReason: "stop" };
      },
    };
    const events = await eventsOfTurn(supportLike(), model, { signal: controller.signal });
    expect(events.at(-1)).toEqual({
      type: "done",
      status: "cancelled",
      text: "",
      agent: "triage",
      handoffs: [],
      handoffCount: 0,
      usage: { modelCalls: 0, inputTokens: 0, outputTokens: 0, toolCalls: 0 },
    });
    expect(ofType(events, "error")).toEqual([]);
  });
});
