/** Handoffs to people: a `humanAgent` takes the conversation like an agent, and no model is called while it holds it. */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { Agent, humanAgent, Network, tool } from "../../src/runtime/index.ts";
import { runScripted } from "../../src/testing/index.ts";

const lookup = tool({ name: "lookup", description: "Looks up.", parameters: z.object({}), execute: () => ({ found: true }) });

function network() {
  const desk = humanAgent({ name: "support-desk", description: "A person at the support desk." });
  const triage = new Agent({ name: "triage", description: "Routes.", instructions: "You route.", tools: [lookup], handoffs: [desk] });
  return new Network(triage, { defaultModel: "m" });
}

describe("a handoff to a person", () => {
  it("is offered like an agent; in the same step as a regular tool, the tool runs and the turn ends waiting for the person", async () => {
    const { events, store, model } = await runScripted(network(), "I want to talk to a person", [
      {
        toolCalls: [
          { name: "lookup", args: {} },
          { name: "transfer_to_support_desk", args: { reason: "asked for a person" } },
        ],
      },
    ]);
    expect(model.requests[0]!.tools.find((t) => t.name === "transfer_to_support_desk")!.description).toContain(
      "A person at the support desk.",
    );
    expect(events.filter((e) => e.type === "tool-result").map((e) => e.type === "tool-result" && [e.name, e.isError])).toEqual([
      ["lookup", false],
      ["transfer_to_support_desk", false],
    ]);
    expect(events.at(-1)).toMatchObject({
      type: "done",
      status: "awaiting_human",
      agent: "support-desk",
      handoffs: [{ to: "support-desk" }],
    });
    expect(store.holding.activeAgent).toBe("support-desk");
  });

  it("stores the user's messages while the person holds the conversation, and calls no model", async () => {
    const first = await runScripted(network(), "a person, please", [{ toolCalls: [{ name: "transfer_to_support_desk", args: {} }] }]);
    const second = await runScripted(network(), "hello? anyone there?", [], { store: first.store });
    expect(second.model.requests).toEqual([]);
    expect(second.events.map((e) => e.type)).toEqual(["run-start", "done"]);
    expect(second.events.at(-1)).toMatchObject({ status: "awaiting_human", agent: "support-desk" });
    expect(second.store.history.at(-1)).toEqual({ role: "user", content: "hello? anyone there?" });
  });
});
