/** A step's calls are written ahead of its first tool: the store has them while the tools run, and the step's commit follows. */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { Agent, Network, newConversation, runTurnItems, tool } from "../../src/runtime/index.ts";
import { MemoryStore, runScripted, ScriptedModel } from "../../src/testing/index.ts";

describe("calls written ahead of their tools", () => {
  it("are in the store while the tools run, with the step's assistant message and which calls started", async () => {
    let store: MemoryStore | undefined;
    let seenWhileRunning: unknown;
    const probe = tool({
      name: "probe",
      description: "Looks at the store.",
      parameters: z.object({}),
      execute: () => {
        seenWhileRunning = structuredClone(store!.callsInFlight);
        return "ok";
      },
    });
    const billing = new Agent({ name: "billing", instructions: "You bill." });
    const triage = new Agent({ name: "triage", instructions: "You route.", tools: [probe], handoffs: [billing] });
    store = new MemoryStore("triage");
    const turn = await runScripted(
      new Network(triage, { defaultModel: "m" }),
      "hi",
      [
        {
          text: "Checking.",
          toolCalls: [
            { id: "p", name: "probe" },
            { id: "t", name: "transfer_to_billing" },
          ],
        },
        { text: "Billing here." },
      ],
      { store },
    );
    expect(seenWhileRunning).toEqual({
      assistant: {
        role: "assistant",
        agent: "triage",
        content: "Checking.",
        toolCalls: [
          { id: "p", name: "probe", arguments: "{}", plan: "tool" },
          { id: "t", name: "transfer_to_billing", arguments: "{}", plan: "transfer" },
        ],
      },
      started: ["p"],
    });
    // The step's commit answered them; a step with no tool to start writes nothing ahead.
    expect(turn.store.callsInFlight).toBeNull();
    expect(turn.store.history.filter((m) => m.role === "tool").map((m) => m.role === "tool" && m.toolCallId)).toEqual(["p", "t"]);
  });

  it("come out of runTurnItems after the step's tool-call events and before its commit, only for steps whose tools start", async () => {
    const probe = tool({ name: "probe", description: "A tool.", parameters: z.object({}), execute: () => "ok" });
    const billing = new Agent({ name: "billing", instructions: "You bill.", tools: [probe] });
    const triage = new Agent({ name: "triage", instructions: "You route.", handoffs: [billing] });
    const items = runTurnItems({
      conversationId: "c",
      network: new Network(triage, { defaultModel: "m" }),
      model: new ScriptedModel([
        { toolCalls: [{ id: "t", name: "transfer_to_billing" }] },
        { toolCalls: [{ id: "p", name: "probe" }] },
        { text: "done" },
      ]),
      conversation: newConversation("triage"),
      input: { kind: "message", text: "hi" },
    });
    const kinds: string[] = [];
    for await (const item of items) {
      if (item.type === "tool-call" || item.type === "calls")
        kinds.push(item.type === "tool-call" ? `tool-call ${item.toolCallId}` : "calls");
      if (item.type === "commit")
        kinds.push("commit", ...item.events.flatMap((e) => (e.type === "tool-result" ? [`tool-result ${e.toolCallId}`] : [])));
    }
    expect(kinds).toEqual([
      "commit",
      "tool-call t",
      "commit",
      "tool-result t",
      "tool-call p",
      "calls",
      "commit",
      "tool-result p",
      "commit",
    ]);
  });
});
