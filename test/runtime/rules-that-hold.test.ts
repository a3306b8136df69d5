/**
 * Rules whose breakage a weaker suite missed: state carried across an approval, fail-closed
 * checks, usage accounting and limits. Each test names the rule; each was seen failing with the
 * rule broken on purpose (TESTING.md lists them under "Deliberate bugs").
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, type ApprovalDecision, type Budgets, type Limits, Network, tool } from "../../src/runtime/index.ts";
import { echo, supportLike } from "../support/networks.ts";
import { ofType, playTurn, type TurnResult } from "../support/run.ts";

const refund = tool({
  name: "refund",
  description: "Refund.",
  parameters: z.object({ amount: z.number() }),
  needsApproval: ({ amount }) => amount >= 10,
  execute: ({ amount }) => ({ refunded: amount }),
});
const explode = tool({
  name: "explode",
  description: "Throws.",
  parameters: z.object({}),
  execute: () => {
    throw new Error("boom");
  },
});
const whoami = tool({
  name: "whoami",
  description: "Says which agent ran it.",
  parameters: z.object({}),
  execute: (_args, ctx) => ({ agent: ctx.agent }),
});
const signedWhoami = tool({
  name: "signed_whoami",
  description: "Whoami, approved.",
  parameters: z.object({}),
  needsApproval: true,
  execute: (_args, ctx) => ({ agent: ctx.agent }),
});

function gated(budgets?: Budgets): Network {
  const billing = new Agent({ name: "billing", instructions: "Billing.", tools: [echo] });
  const triage = new Agent({
    name: "triage",
    instructions: "Triage.",
    tools: [refund, explode, whoami, signedWhoami],
    handoffs: [billing],
  });
  return new Network(triage, { defaultModel: "m", ...(budgets ? { budgets } : {}) });
}

const resume = (first: TurnResult, decisions: ApprovalDecision[]) =>
  ({ kind: "resume", suspension: first.store.suspension!, decisions }) as const;
const suspendOnRefund = (
  network: Network,
  before: Array<{ toolCalls: Array<{ id: string; name: string; args?: unknown }> }> = [],
  limits?: Partial<Limits>,
) =>
  playTurn(network, "refund 50", [...before, { toolCalls: [{ id: "r", name: "refund", args: { amount: 50 } }] }], limits ? { limits } : {});

describe("state carried across an approval", () => {
  it("the per-agent step budget: steps before the suspension count after the resume", async () => {
    const first = await suspendOnRefund(gated(), [], { maxSteps: 2 });
    const second = await playTurn(
      gated(),
      resume(first, [{ toolCallId: "r", approved: true }]),
      [{ toolCalls: [{ id: "s", name: "refund", args: { amount: 5 } }] }],
      {
        store: first.store,
        limits: { maxSteps: 2 },
      },
    );
    expect(second.events.at(-1)).toMatchObject({ type: "error", code: "max_steps" });
  });

  it("the runaway-error count: failed steps before the suspension count after the resume", async () => {
    const fail = (id: string) => ({ toolCalls: [{ id, name: "explode", args: {} }] });
    const first = await suspendOnRefund(gated(), [fail("e1"), fail("e2")]);
    const second = await playTurn(gated(), resume(first, [{ toolCallId: "r", approved: false }]), [fail("e3")], { store: first.store });
    expect(second.events.at(-1)).toMatchObject({ type: "error", code: "too_many_tool_errors" });
  });

  it("the turn's usage: the per-turn budget counts model calls from both legs, and done reports their sum", async () => {
    const budgets = { perTurn: { modelCalls: 2 } };
    const first = await suspendOnRefund(gated(budgets));
    const second = await playTurn(
      gated(budgets),
      resume(first, [{ toolCallId: "r", approved: true }]),
      [{ toolCalls: [{ id: "s", name: "refund", args: { amount: 5 } }] }],
      { store: first.store },
    );
    expect(second.events.at(-1)).toMatchObject({ type: "error", code: "budget_exceeded" });

    const again = await suspendOnRefund(gated());
    const done = await playTurn(gated(), resume(again, [{ toolCallId: "r", approved: true }]), [{ text: "Refunded." }], {
      store: again.store,
    });
    expect(ofType(done.events, "done")[0]!.usage).toMatchObject({ modelCalls: 2, inputTokens: 20, outputTokens: 10, toolCalls: 1 });
  });

  it("an approved call runs as the agent that made it, even when a transfer in its step moved the conversation on", async () => {
    const first = await playTurn(gated(), "sign and bill", [
      {
        toolCalls: [
          { id: "s", name: "signed_whoami" },
          { id: "t", name: "transfer_to_billing" },
        ],
      },
    ]);
    expect(ofType(first.events, "done")[0]).toMatchObject({ status: "awaiting_approval", agent: "billing" });
    const second = await playTurn(gated(), resume(first, [{ toolCallId: "s", approved: true }]), [{ text: "billing carries on" }], {
      store: first.store,
    });
    expect(ofType(second.events, "tool-result")[0]).toMatchObject({ toolCallId: "s", isError: false, result: { agent: "triage" } });
    expect(second.events[0]).toMatchObject({ type: "run-start", agent: "billing" });
  });
});

describe("fail closed", () => {
  it("an input guardrail that throws blocks the message", async () => {
    const triage = new Agent({
      name: "triage",
      instructions: "x",
      inputGuardrails: [
        () => {
          throw new Error("checker down");
        },
      ],
    });
    const { events, store } = await playTurn(new Network(triage, { defaultModel: "m" }), "hello", []);
    expect(ofType(events, "guardrail")[0]).toMatchObject({ kind: "input", reason: expect.stringContaining("checker down") });
    expect(events.at(-1)).toMatchObject({ type: "error", code: "guardrail_blocked" });
    expect(store.history).toEqual([]);
  });

  it("a tool guardrail that throws blocks the call, which never runs", async () => {
    let ran = 0;
    const counted = tool({ name: "counted", description: "Counts.", parameters: z.object({}), execute: () => ++ran });
    const triage = new Agent({ name: "triage", instructions: "x", tools: [counted] });
    const network = new Network(triage, {
      defaultModel: "m",
      toolGuardrails: [
        () => {
          throw new Error("policy service down");
        },
      ],
    });
    const { events } = await playTurn(network, "go", [{ toolCalls: [{ id: "c", name: "counted" }] }, { text: "ok" }]);
    expect(ran).toBe(0);
    expect(ofType(events, "tool-result")[0]).toMatchObject({ isError: true, result: expect.stringContaining("Blocked by a guardrail") });
  });

  it("a needsApproval function that throws gates the call instead of running it", async () => {
    let ran = 0;
    const risky = tool({
      name: "risky",
      description: "Risky.",
      parameters: z.object({}),
      needsApproval: () => {
        throw new Error("cannot decide");
      },
      execute: () => ++ran,
    });
    const network = new Network(new Agent({ name: "triage", instructions: "x", tools: [risky] }), { defaultModel: "m" });
    const { events } = await playTurn(network, "go", [{ toolCalls: [{ id: "k", name: "risky" }] }]);
    expect(ran).toBe(0);
    expect(ofType(events, "approval-required")).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "awaiting_approval" });
  });
});

describe("usage and limits", () => {
  it("transfers are not tool calls in usage", async () => {
    const { events } = await playTurn(supportLike(), "bill me", [
      {
        toolCalls: [
          { id: "e", name: "echo", args: { text: "x" } },
          { id: "t", name: "transfer_to_billing" },
        ],
      },
      { text: "billing" },
    ]);
    expect(ofType(events, "done")[0]!.usage).toMatchObject({ modelCalls: 2, toolCalls: 1 });
  });

  it("a refused transfer does not count toward maxHandoffsPerTurn", async () => {
    const { events } = await playTurn(
      supportLike(),
      "route me",
      [
        { toolCalls: [{ id: "u", name: "transfer_to_nobody" }] },
        { toolCalls: [{ id: "t", name: "transfer_to_billing" }] },
        { text: "billing here" },
      ],
      { limits: { maxHandoffsPerTurn: 1 } },
    );
    expect(ofType(events, "handoff").map((h) => h.to)).toEqual(["billing"]);
    expect(ofType(events, "done")[0]).toMatchObject({ agent: "billing", handoffCount: 1 });
  });

  it("a regular tool beside a transfer runs as the agent that called it, not the target", async () => {
    const { events } = await playTurn(gated(), "who am I", [
      {
        toolCalls: [
          { id: "w", name: "whoami" },
          { id: "t", name: "transfer_to_billing" },
        ],
      },
      { text: "billing" },
    ]);
    expect(ofType(events, "tool-result")[0]).toMatchObject({ toolCallId: "w", isError: false, result: { agent: "triage" } });
  });

  it("tool names padded with whitespace by a provider are matched after trimming", async () => {
    const { events } = await playTurn(gated(), "who", [{ toolCalls: [{ id: "w", name: " whoami\n" }] }, { text: "ok" }]);
    expect(ofType(events, "tool-result")[0]).toMatchObject({ name: "whoami", isError: false, result: { agent: "triage" } });
  });
});
