/**
 * buildStepCommit on its own, without a model or a loop: from a step's answer and the records of
 * its calls to what is committed, what is announced after the commit, and the turn's next state.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, handoff, Network } from "../../src/runtime/index.ts";
import { newHolding } from "../../src/runtime/holding.ts";
import type { PreparedStep } from "../../src/runtime/step/prepare-step.ts";
import type { CallRecord } from "../../src/runtime/step/call-record.ts";
import { buildStepCommit } from "../../src/runtime/step/step-commit.ts";
import { type TurnState, initialTurnState } from "../../src/runtime/turn-state.ts";

const billing = new Agent({ name: "billing", instructions: ({ context }) => `Billing for ${String(context.order)}.` });
const triage = new Agent({
  name: "triage",
  instructions: "t",
  handoffs: [handoff(billing, { inputSchema: z.object({ order: z.string() }) })],
});
const network = new Network(triage, { defaultModel: "m" });

function state(): TurnState {
  const start = initialTurnState(
    {
      conversationId: "c",
      network,
      model: { stream: () => [] as never },
      conversation: { holding: { ...newHolding("triage"), handoffCount: 2 }, history: [{ role: "user", content: "hi" }] },
      input: { kind: "message", text: "hi" },
    },
    triage,
    [],
  );
  return { ...start, progress: { ...start.progress, stepIndex: 3, agentSteps: 1, errorSteps: 1 } };
}

function prepared(): PreparedStep {
  return {
    stepIndex: 3,
    agent: triage,
    toolset: network.toolset("triage"),
    instructions: "t",
    messages: [],
    compaction: undefined,
    warnings: [],
  };
}

const usage = { inputTokens: 7, outputTokens: 3 };
const call = (id: string, name: string, args: unknown = {}) => ({ id, name, arguments: JSON.stringify(args) });
const ok = (result: string) => ({ outcome: { result, content: result, isError: false }, counts: true });
const toolRecord = (id: string, answer: CallRecord["answer"], awaitsApproval = false): CallRecord => ({
  call: call(id, "lookup"),
  plan: { kind: "tool", call: call(id, "lookup"), tool: undefined },
  blocked: null,
  awaits: awaitsApproval ? { kind: "approval" } : null,
  answer,
  kept: true,
});

describe("buildStepCommit", () => {
  it("commits a plain answer as one assistant message, spending one model call", () => {
    const built = buildStepCommit({
      state: state(),
      prepared: prepared(),
      step: { text: "Hello.", toolCalls: [], finishReason: "stop", usage },
      records: [],
      options: network.options,
    });
    // What the conversation holds did not change: the commit carries no holding.
    expect(built.commit).toEqual({
      messages: [{ role: "assistant", agent: "triage", content: "Hello." }],
      usage: { modelCalls: 1, inputTokens: 7, outputTokens: 3, toolCalls: 0 },
    });
    expect(built.events).toEqual([]);
    expect(built.next).toMatchObject({
      agent: triage,
      progress: { stepIndex: 4, agentSteps: 2, errorSteps: 1 },
      holding: { activeAgent: "triage", handoffCount: 2 },
      history: [{ role: "user" }, { role: "assistant" }],
    });
  });

  it("commits a handoff with its input as the new context and the target as holder, and announces results before the handoff", () => {
    const transfer = call("t", "transfer_to_billing", { order: "A7", reason: "refund" });
    const records: CallRecord[] = [
      toolRecord("l", ok("found")),
      {
        call: transfer,
        plan: {
          kind: "transfer",
          call: transfer,
          edge: network.toolset("triage").transfers.get("billing")!,
          reason: "refund",
          input: { order: "A7" },
        },
        blocked: null,
        awaits: null,
        answer: {
          outcome: { result: "Transferred to 'billing'. refund", content: "Transferred to 'billing'. refund", isError: false },
          counts: false,
        },
        kept: true,
      },
    ];
    const step = { text: "", toolCalls: [call("l", "lookup"), transfer], finishReason: "tool_calls", usage };
    const built = buildStepCommit({
      state: state(),
      prepared: prepared(),
      step,
      records,
      options: { ...network.options, systemPrompt: "append" },
    });
    const record = {
      kind: "transfer",
      from: "triage",
      to: "billing",
      toolCallId: "t",
      reason: "refund",
      input: { order: "A7" },
      stepIndex: 3,
    };
    expect(built.commit).toMatchObject({
      holding: { activeAgent: "billing", handoffCount: 3, context: { order: "A7" } },
      handoff: record,
      usage: { toolCalls: 1 },
    });
    expect(built.commit.messages.map((m) => m.role)).toEqual(["assistant", "tool", "tool", "system"]);
    expect(built.commit.messages.at(-1)).toEqual({ role: "system", agent: "billing", content: "Billing for A7." });
    expect(built.events.map((e) => e.type)).toEqual(["tool-result", "tool-result", "handoff"]);
    // A counted success resets the error guard; the target starts with a fresh step count.
    expect(built.next).toMatchObject({
      agent: billing,
      progress: { agentSteps: 0, errorSteps: 0, handoffs: [record] },
      holding: { handoffCount: 3, context: { order: "A7" } },
      lastHandoff: record,
    });
  });

  it("keeps a step with a call awaiting approval out of the history, in a suspension holding the state after the step", () => {
    const records = [toolRecord("a", ok("done")), toolRecord("b", null, true)];
    const step = { text: "", toolCalls: [call("a", "lookup"), call("b", "lookup")], finishReason: "tool_calls", usage };
    const built = buildStepCommit({ state: state(), prepared: prepared(), step, records, options: network.options });
    expect(built.commit.messages).toEqual([]);
    // The progress after the step: the resumed leg's first step is the next one.
    expect(built.commit.suspension).toMatchObject({
      results: [{ toolCallId: "a", content: "done" }, null],
      pending: [{ toolCallId: "b", name: "lookup", args: {}, agent: "triage" }],
      progress: { stepIndex: 4, agentSteps: 2, usage: { modelCalls: 1, toolCalls: 2 } },
    });
    expect(built.events).toEqual([
      { type: "tool-result", toolCallId: "a", name: "lookup", result: "done", isError: false },
      { type: "approval-required", toolCallId: "b", name: "lookup", args: {}, agent: "triage" },
    ]);
    expect(built.next.history).toEqual(state().history);
  });
});
