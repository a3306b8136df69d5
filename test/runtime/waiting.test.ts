/**
 * What the loop does for conversations that wait: approval deadlines on the calls that wait
 * (the tool's, else its agent's, else the network's), turns a host's schedule starts with a note,
 * and follow-ups a tool schedules through the host's scheduler (refusals are error results).
 */
import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import {
  Agent,
  type FollowUpRequest,
  followUpTool,
  humanAgent,
  Network,
  RuntimeError,
  type Scheduler,
  tool,
} from "../../src/runtime/index.ts";
import { runScripted } from "../../src/testing/index.ts";
import { ofType } from "../support/run.ts";

const pay = (approvalExpiresIn?: "90s" | "2h") =>
  tool({
    name: "pay",
    description: "Pay.",
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    ...(approvalExpiresIn ? { approvalExpiresIn } : {}),
    execute: ({ amount }) => ({ paid: amount }),
  });

describe("approval deadlines", () => {
  it("come from the tool, else its agent, else the network; a call without one waits as long as it takes", async () => {
    vi.useFakeTimers({ toFake: ["Date"], now: Date.parse("2026-12-01T10:00:00Z") });
    try {
      const cases = [
        { tool: pay("90s"), agent: "24h", network: "7d", expected: "2026-12-01T10:01:30.000Z" },
        { tool: pay(), agent: "2h", network: "7d", expected: "2026-12-01T12:00:00.000Z" },
        { tool: pay(), agent: undefined, network: "1d", expected: "2026-12-02T10:00:00.000Z" },
        { tool: pay(), agent: undefined, network: undefined, expected: undefined },
      ] as const;
      for (const c of cases) {
        const agent = new Agent({ name: "a", instructions: "pay", tools: [c.tool], ...(c.agent ? { approvalExpiresIn: c.agent } : {}) });
        const network = new Network(agent, { defaultModel: "m", ...(c.network ? { approvalExpiresIn: c.network } : {}) });
        const turn = await runScripted(network, "pay 5", [{ toolCalls: [{ id: "p", name: "pay", args: { amount: 5 } }] }]);
        expect(ofType(turn.events, "approval-required")[0]?.expiresAt).toBe(c.expected);
        expect(turn.suspension?.pending[0]?.expiresAt).toBe(c.expected);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it("that are not durations fail where they are set, with what to write instead", () => {
    expect(() => new Agent({ name: "a", instructions: "", approvalExpiresIn: "tomorrow" as "1d" })).toThrow(
      /approvalExpiresIn must be .* "24h"/,
    );
    const agent = new Agent({ name: "a", instructions: "", tools: [tool({ ...pay(), approvalExpiresIn: -5 })] });
    expect(() => new Network(agent, { defaultModel: "m" })).toThrow(/Tool 'pay': approvalExpiresIn/);
    expect(() => humanAgent({ name: "desk", description: "d", answerWithin: "soon" as "1h" })).toThrow(/answerWithin/);
    const desk = humanAgent({ name: "desk", description: "d", onTimeout: { handBackTo: "nobody" } });
    expect(() => new Network(new Agent({ name: "a", instructions: "", handoffs: [desk] }), { defaultModel: "m" })).toThrow(
      /onTimeout.handBackTo names 'nobody'/,
    );
  });
});

describe("a scheduled turn", () => {
  it("gives its note to whoever holds the conversation, as a system message, and that agent answers the user", async () => {
    const billing = new Agent({ name: "billing", instructions: "You are billing." });
    const triage = new Agent({ name: "triage", instructions: "You are triage.", handoffs: [billing] });
    const network = new Network(triage, { defaultModel: "m" });
    const first = await runScripted(network, "my refund", [
      { toolCalls: [{ id: "t", name: "transfer_to_billing", args: {} }] },
      { text: "I will check tomorrow." },
    ]);
    const later = await runScripted(
      network,
      { kind: "scheduled", note: "Follow-up due: check the refund of order A1." },
      [{ text: "Your refund went through." }],
      {
        store: first.store,
      },
    );
    expect(later.events[0]).toMatchObject({ type: "run-start", agent: "billing", scheduled: true });
    expect(later.model.requests[0]!.messages.at(-1)).toEqual({
      role: "system",
      agent: "billing",
      content: "Follow-up due: check the refund of order A1.",
    });
    expect(later.store.history.slice(-2).map((m) => [m.role, m.content])).toEqual([
      ["system", "Follow-up due: check the refund of order A1."],
      ["assistant", "Your refund went through."],
    ]);
  });
});

describe("follow-ups a tool schedules", () => {
  const scheduled: FollowUpRequest[] = [];
  const scheduler: Scheduler = {
    schedule: async (request) => {
      if (request.at < request.askedAt + 60_000) throw new RuntimeError("schedule_refused", "A follow-up must be at least a minute away.");
      scheduled.push(request);
      return { id: `f${scheduled.length}`, at: new Date(request.at).toISOString() };
    },
  };
  const network = () => new Network(new Agent({ name: "shipping", instructions: "Ship.", tools: [followUpTool()] }), { defaultModel: "m" });

  it("reach the host's scheduler with the time, the note, the agent and the call; the model gets the entry back", async () => {
    const before = Date.now();
    const turn = await runScripted(
      network(),
      "where is my parcel?",
      [
        { toolCalls: [{ id: "f", name: "schedule_followup", args: { inMinutes: 120, note: "Check parcel P1 again." } }] },
        { text: "I will check again in two hours." },
      ],
      { scheduler },
    );
    expect(scheduled.at(-1)).toMatchObject({ note: "Check parcel P1 again.", agent: "shipping", toolCallId: "f" });
    // The host gets when the tool asked, and measures its bounds from it: a clock that moves on refuses nothing in bounds.
    expect(scheduled.at(-1)!.askedAt).toBeGreaterThanOrEqual(before);
    expect(scheduled.at(-1)!.at - scheduled.at(-1)!.askedAt).toBe(120 * 60_000);
    expect(ofType(turn.events, "tool-result")[0]).toMatchObject({ isError: false, result: { scheduled: true, id: expect.any(String) } });
    expect(turn.model.requests[0]!.tools.map((t) => t.name)).toContain("schedule_followup");
  });

  it("refused by the host's bounds, by no schedule, or given no time, are error results the model recovers from", async () => {
    const tooSoon = await runScripted(
      network(),
      "check soon",
      [
        { toolCalls: [{ id: "f", name: "schedule_followup", args: { inMinutes: 0.1, note: "x" } }] },
        { text: "I cannot schedule that soon." },
      ],
      { scheduler },
    );
    expect(ofType(tooSoon.events, "tool-result")[0]).toMatchObject({
      isError: true,
      result: expect.stringMatching(/at least a minute away/),
    });
    const none = await runScripted(network(), "check later", [
      { toolCalls: [{ id: "f", name: "schedule_followup", args: { inMinutes: 10, note: "x" } }] },
      { text: "I cannot schedule here." },
    ]);
    expect(ofType(none.events, "tool-result")[0]).toMatchObject({ isError: true, result: expect.stringMatching(/no schedule/) });
    const both = await runScripted(
      network(),
      "check",
      [
        { toolCalls: [{ id: "f", name: "schedule_followup", args: { inMinutes: 10, at: "2027-01-01T00:00:00Z", note: "x" } }] },
        { text: "Let me try again." },
      ],
      { scheduler },
    );
    expect(ofType(both.events, "tool-result")[0]).toMatchObject({ isError: true, result: expect.stringMatching(/one of `at`/) });
  });
});
