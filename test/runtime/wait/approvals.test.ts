import { beforeEach, describe, expect, it } from "vitest";
import * as z from "zod";
import { Agent, type ApprovalDecision, Network, tool } from "../../../src/runtime/index.ts";
import { runScripted } from "../../../src/testing/index.ts";
import { refunds, withApprovals } from "../../support/networks.ts";
import { ofType, playTurn, type TurnResult } from "../../support/run.ts";

const resume = (first: TurnResult, decisions: ApprovalDecision[]) =>
  ({ kind: "resume", suspension: first.store.suspension!, decisions }) as const;

beforeEach(() => {
  refunds.length = 0;
});

describe("approval-gated tools", () => {
  it("suspend the run after the step; the other tools of the step run", async () => {
    const first = await playTurn(withApprovals(), "refund 50", [
      {
        toolCalls: [
          { id: "r", name: "refund", args: { amount: 50 } },
          { id: "small", name: "refund", args: { amount: 5 } },
        ],
      },
    ]);
    expect(first.events.slice(-4).map((e) => e.type)).toEqual(["tool-result", "approval-required", "step-finish", "done"]);
    expect(ofType(first.events, "approval-required")).toEqual([
      { type: "approval-required", toolCallId: "r", name: "refund", args: { amount: 50 }, agent: "triage" },
    ]);
    expect(ofType(first.events, "done")[0]).toMatchObject({ status: "awaiting_approval", agent: "triage" });
    expect(refunds).toEqual(["5"]);
    // Nothing half-answered enters the history: the step waits in the suspension.
    expect(first.store.history.map((m) => m.role)).toEqual(["user"]);
    expect(first.store.suspension).toMatchObject({
      progress: { stepIndex: 1 },
      pending: [{ toolCallId: "r" }],
      results: [null, { toolCallId: "small" }],
    });
  });

  it("say what they ask in the tool's words when it gives them, and still ask with the arguments when its words fail", async () => {
    const worded = tool({
      name: "refund_in_words",
      description: "Refunds.",
      parameters: z.object({ amount: z.number() }),
      needsApproval: true,
      approvalMessage: ({ amount }) => (amount > 100 ? JSON.parse("not json") : amount < 10 ? "   " : `  Refund ${amount} USD? `),
      execute: () => "done",
    });
    const network = new Network(new Agent({ name: "triage", instructions: "You are triage.", tools: [worded] }), { defaultModel: "m" });
    const first = await playTurn(network, "refund", [
      {
        toolCalls: [
          { id: "a", name: "refund_in_words", args: { amount: 50 } },
          { id: "b", name: "refund_in_words", args: { amount: 500 } },
          { id: "c", name: "refund_in_words", args: { amount: 5 } },
        ],
      },
    ]);
    expect(ofType(first.events, "approval-required")).toEqual([
      {
        type: "approval-required",
        toolCallId: "a",
        name: "refund_in_words",
        args: { amount: 50 },
        agent: "triage",
        message: "Refund 50 USD?",
      },
      { type: "approval-required", toolCallId: "b", name: "refund_in_words", args: { amount: 500 }, agent: "triage" },
      // Words that say nothing are none.
      { type: "approval-required", toolCallId: "c", name: "refund_in_words", args: { amount: 5 }, agent: "triage" },
    ]);
    expect(first.store.suspension!.pending[0]).toMatchObject({ kind: "approval", message: "Refund 50 USD?" });
  });

  it("resume when approved: the call runs and the same agent carries on", async () => {
    const first = await playTurn(withApprovals(), "refund 50", [{ toolCalls: [{ id: "r", name: "refund", args: { amount: 50 } }] }]);
    const second = await playTurn(withApprovals(), resume(first, [{ toolCallId: "r", approved: true }]), [{ text: "Refunded." }], {
      store: first.store,
    });
    expect(second.events.map((e) => e.type)).toEqual(["run-start", "tool-result", "step-start", "text-delta", "step-finish", "done"]);
    expect(second.events[0]).toMatchObject({ agent: "triage", resumed: true });
    expect(ofType(second.events, "tool-result")[0]).toMatchObject({ toolCallId: "r", isError: false, result: { refunded: 50 } });
    expect(ofType(second.events, "step-start")[0]!.stepIndex).toBe(1);
    expect(refunds).toEqual(["50"]);
    expect(second.model.requests[0]!.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(first.store.suspension).toBeNull();
  });

  it("answer a denied call with an error result naming the person's reason, without running it", async () => {
    const first = await playTurn(withApprovals(), "refund 50", [{ toolCalls: [{ id: "r", name: "refund", args: { amount: 50 } }] }]);
    const second = await playTurn(
      withApprovals(),
      resume(first, [{ toolCallId: "r", approved: false, reason: "not eligible" }]),
      [{ text: "Sorry." }],
      {
        store: first.store,
      },
    );
    expect(ofType(second.events, "tool-result")[0]).toMatchObject({
      isError: true,
      denied: true,
      result: "A person declined this call: not eligible",
    });
    expect(refunds).toEqual([]);
  });

  it("do not count a denial toward the runaway-error guard", async () => {
    const boom = { toolCalls: [{ name: "explode" }] };
    const first = await playTurn(withApprovals(), "x", [boom, boom, { toolCalls: [{ id: "r", name: "refund", args: { amount: 99 } }] }]);
    const second = await playTurn(withApprovals(), resume(first, [{ toolCallId: "r", approved: false }]), [{ text: "still here" }], {
      store: first.store,
    });
    expect(second.events.at(-1)).toMatchObject({ type: "done", text: "still here" });
  });

  it("commit a transfer in the same step before suspending: the resumed leg runs as the target", async () => {
    const first = await playTurn(withApprovals(), "refund and go to billing", [
      {
        toolCalls: [
          { id: "r", name: "refund", args: { amount: 20 } },
          { id: "t", name: "transfer_to_billing" },
        ],
      },
    ]);
    expect(ofType(first.events, "handoff")).toMatchObject([{ from: "triage", to: "billing" }]);
    expect(ofType(first.events, "tool-result").map((r) => r.toolCallId)).toEqual(["t"]);
    expect(first.store.holding.activeAgent).toBe("billing");
    expect(first.store.holding.handoffCount).toBe(1);

    const second = await playTurn(withApprovals(), resume(first, [{ toolCallId: "r", approved: true }]), [{ text: "Billing here." }], {
      store: first.store,
    });
    expect(second.events[0]).toMatchObject({ agent: "billing", resumed: true });
    expect(second.model.requests[0]).toMatchObject({ agent: "billing", instructions: "You are billing." });
    // The gate belongs to the run: triage's refund ran after the transfer, as approved.
    expect(refunds).toEqual(["20"]);
    expect(ofType(second.events, "done")[0]).toMatchObject({ agent: "billing", handoffs: [{ to: "billing" }], handoffCount: 1 });
  });

  it("carry the per-turn handoff budget over into the resumed leg", async () => {
    const hop = (id: string, name: string) => ({ toolCalls: [{ id, name }] });
    const first = await playTurn(
      withApprovals(),
      "x",
      [
        hop("1", "transfer_to_billing"),
        {
          toolCalls: [
            { id: "r", name: "refund", args: { amount: 30 } },
            { id: "2", name: "transfer_to_shipping" },
          ],
        },
      ],
      { limits: { maxHandoffsPerTurn: 2 } },
    );
    const second = await playTurn(
      withApprovals(),
      resume(first, [{ toolCallId: "r", approved: true }]),
      [hop("3", "transfer_to_billing"), { text: "shipping stays" }],
      {
        store: first.store,
        limits: { maxHandoffsPerTurn: 2 },
      },
    );
    expect(ofType(second.events, "tool-result").find((r) => r.toolCallId === "3")).toMatchObject({
      isError: true,
      result: "Handoff limit (2) reached; continue yourself.",
    });
    expect(ofType(second.events, "done")[0]).toMatchObject({
      agent: "shipping",
      handoffs: [{ to: "billing" }, { to: "shipping" }],
      handoffCount: 2,
    });
  });
});

describe("runScripted across an approval", () => {
  it("gives the suspension with the outcome that waits for it, to resume with the decisions and the same store", async () => {
    const first = await runScripted(withApprovals(), "refund 50", [{ toolCalls: [{ id: "r", name: "refund", args: { amount: 50 } }] }]);
    expect(first.outcome).toEqual({ status: "awaiting_approval" });
    if (first.status !== "awaiting_approval") throw new Error("the turn did not wait");
    expect(first.suspension.pending.map((p) => p.toolCallId)).toEqual(["r"]);
    const second = await runScripted(
      withApprovals(),
      { kind: "resume", suspension: first.suspension, decisions: [{ toolCallId: "r", approved: true }] },
      [{ text: "Refunded." }],
      { store: first.store },
    );
    expect(second).toMatchObject({ status: "completed", outcome: { status: "completed" }, suspension: null });
  });
});
