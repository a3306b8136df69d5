/** What the loop makes of each call, said on the `tool-call` event and on the stored call: decided before any tool runs. */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { Agent, handoff, humanAgent, Network, type RunEvent, tool } from "../../src/runtime/index.ts";
import { runScripted } from "../../src/testing/index.ts";

const lookup = tool({ name: "lookup", description: "Looks up.", parameters: z.object({}), execute: () => ({ found: true }) });

function network() {
  const desk = humanAgent({ name: "support-desk", description: "A person." });
  const calculator = new Agent({ name: "calculator", instructions: "You add." });
  const billing = new Agent({ name: "billing", instructions: "You bill.", tools: [lookup] });
  const triage = new Agent({
    name: "triage",
    instructions: "You route.",
    tools: [lookup],
    handoffs: [billing, handoff(calculator, { returns: "on-call" }), desk],
  });
  return new Network(triage, { defaultModel: "m", transferScope: "declared" });
}

const plans = (events: RunEvent[]) => events.flatMap((e) => (e.type === "tool-call" ? [[e.name, e.plan]] : []));

describe("the plan of each call", () => {
  it("names tools, transfers, refused transfers (unknown target, a second in the step) and their stored calls alike", async () => {
    const { events, store } = await runScripted(network(), "hi", [
      {
        toolCalls: [
          { id: "l", name: "lookup" },
          { id: "n", name: "transfer_to_nobody" },
          { id: "b", name: "transfer_to_billing" },
          { id: "c", name: "transfer_to_calculator" },
        ],
      },
      { text: "Billing here." },
    ]);
    expect(plans(events)).toEqual([
      ["lookup", "tool"],
      ["transfer_to_nobody", "refused-handoff"],
      ["transfer_to_billing", "transfer"],
      ["transfer_to_calculator", "refused-handoff"],
    ]);
    const assistant = store.history.find((m) => m.role === "assistant" && m.toolCalls)!;
    expect(assistant.role === "assistant" && assistant.toolCalls!.map((c) => [c.id, c.plan])).toEqual([
      ["l", "tool"],
      ["n", "refused-handoff"],
      ["b", "transfer"],
      ["c", "refused-handoff"],
    ]);
  });

  it("names a transfer to a person, and a return", async () => {
    const toPerson = await runScripted(network(), "a person please", [{ toolCalls: [{ name: "transfer_to_support_desk" }] }]);
    expect(plans(toPerson.events)).toEqual([["transfer_to_support_desk", "person"]]);
    const first = await runScripted(network(), "add", [{ toolCalls: [{ name: "transfer_to_calculator" }] }, { text: "Adding." }]);
    const back = await runScripted(
      network(),
      "done?",
      [{ toolCalls: [{ name: "return_to_triage", args: { summary: "2" } }] }, { text: "2." }],
      {
        store: first.store,
      },
    );
    expect(plans(back.events)).toEqual([["return_to_triage", "return"]]);
    expect(back.events.find((e) => e.type === "handoff")).toMatchObject({
      kind: "return",
      mode: "on-call",
      toolCallId: expect.any(String),
    });
  });

  it("is the agent's own tool when the agent has a tool named like a transfer: it runs, and nothing changes hands", async () => {
    const lookalike = tool({ name: "transfer_to_billing", description: "An own tool.", parameters: z.object({}), execute: () => "ran" });
    const billing = new Agent({ name: "billing", instructions: "You bill." });
    const triage = new Agent({ name: "triage", instructions: "You route.", tools: [lookalike], handoffs: [billing] });
    const { events, store } = await runScripted(new Network(triage, { defaultModel: "m" }), "hi", [
      { toolCalls: [{ name: "transfer_to_billing" }] },
      { text: "Done." },
    ]);
    expect(plans(events)).toEqual([["transfer_to_billing", "tool"]]);
    expect(events.find((e) => e.type === "tool-result")).toMatchObject({ result: "ran", isError: false });
    expect(events.some((e) => e.type === "handoff")).toBe(false);
    expect(store.holding.activeAgent).toBe("triage");
  });
});
