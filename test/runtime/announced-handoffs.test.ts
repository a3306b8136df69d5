/**
 * Handoffs an answer announces but never makes ("let me transfer you to billing" with no transfer
 * call): `warn` (the default) emits a warning event; `nudge` runs one more step with a note, once
 * per turn, counted in usage; `off` does nothing; answers that merely mention an agent, or offer a
 * transfer on a condition, raise nothing.
 */
import { describe, expect, it } from "vitest";
import { Agent, type AnnouncedHandoffs, announcedHandoff, Network, NUDGE_NOTE } from "../../src/runtime/index.ts";
import { runScripted } from "../../src/testing/index.ts";
import { ofType } from "../support/run.ts";

function network(announcedHandoffs?: AnnouncedHandoffs): Network {
  const billing = new Agent({ name: "billing", description: "Handles refunds, invoices and double charges.", instructions: "billing" });
  const desk = new Agent({ name: "support-desk", description: "A person at the support desk.", instructions: "desk" });
  const triage = new Agent({ name: "triage", instructions: "route", handoffs: [billing, desk] });
  return new Network(triage, { defaultModel: "m", ...(announcedHandoffs ? { announcedHandoffs } : {}) });
}

const targets = () => [...network().toolset("triage").transfers.values()].map((e) => e.agent);

describe("an announced handoff", () => {
  it("is found in the words of a reachable agent's name or description, or a generic one", () => {
    for (const text of [
      "Let me transfer you to billing.",
      "I'll connect you with a specialist who can help.",
      "I will hand you over to the support desk now.",
      "I'm going to pass this to our refunds colleague.",
      "One moment: I’ll route you to the person who handles invoices.",
    ])
      expect(announcedHandoff(text, targets()), text).not.toBeNull();
  });

  it("is not found in an answer that merely mentions an agent, or offers a transfer on a condition", () => {
    for (const text of [
      "Billing handles refunds; your order A1001 was charged once.",
      "I transferred you to billing earlier, and they refunded the order.",
      "If you like, I'll transfer you to billing.",
      'Ask about a charge ("I was charged twice") and I will hand you to the right specialist.',
      // The offline demo model's own greeting: quoted questions end no sentence.
      'This is the offline demo model. Ask about a charge ("I was charged twice for order A1001"), a delivery ("Where is order A1002?") or a sum ("Solve x^2 - 5x + 6 = 0") and I will hand you to the right specialist, or ask to talk to a person.',
      "Let me check your order first.",
      "I will send you the invoice by email.",
    ])
      expect(announcedHandoff(text, targets()), text).toBeNull();
    expect(announcedHandoff("Let me transfer you to billing.", [])).toBeNull();
  });
});

describe("the announced-handoff guard in the loop", () => {
  it("warns by default: a warning event, the answer stands, nothing more runs", async () => {
    const turn = await runScripted(network(), "refund please", [{ text: "Let me transfer you to billing." }]);
    expect(ofType(turn.events, "warning")).toEqual([
      {
        type: "warning",
        code: "handoff_announced_not_made",
        message: `'triage' said "Let me transfer you to billing" but called no transfer tool.`,
      },
    ]);
    expect(turn.events.at(-1)).toMatchObject({ type: "done", status: "completed", text: "Let me transfer you to billing." });
    expect(turn.model.requests).toHaveLength(1);
  });

  it("nudges once with `nudge`: one more step with the note, counted in usage; the agent may then transfer", async () => {
    const turn = await runScripted(network("nudge"), "refund please", [
      { text: "Let me transfer you to billing." },
      { toolCalls: [{ id: "t", name: "transfer_to_billing", args: {} }] },
      { text: "Billing here." },
    ]);
    expect(turn.model.requests[1]!.messages.at(-1)).toEqual({ role: "system", agent: "triage", content: NUDGE_NOTE });
    expect(ofType(turn.events, "warning")[0]!.message).toMatch(/asked once to call one now/);
    expect(turn.events.at(-1)).toMatchObject({ type: "done", status: "completed", agent: "billing", text: "Billing here." });
    expect(ofType(turn.events, "done")[0]!.usage?.modelCalls).toBe(3);
  });

  it("nudges at most once per turn, and does nothing with `off` or for an answer that announces nothing", async () => {
    const twice = await runScripted(network("nudge"), "refund please", [
      { text: "Let me transfer you to billing." },
      { text: "I'll connect you with a specialist." },
    ]);
    expect(twice.model.requests).toHaveLength(2);
    expect(ofType(twice.events, "warning")).toHaveLength(2);
    expect(twice.events.at(-1)).toMatchObject({ type: "done", status: "completed", text: "I'll connect you with a specialist." });
    const off = await runScripted(network("off"), "refund please", [{ text: "Let me transfer you to billing." }]);
    expect(ofType(off.events, "warning")).toEqual([]);
    const plain = await runScripted(network("nudge"), "hi", [{ text: "Billing handles refunds; ask me anything." }]);
    expect(ofType(plain.events, "warning")).toEqual([]);
    expect(plain.model.requests).toHaveLength(1);
  });
});
