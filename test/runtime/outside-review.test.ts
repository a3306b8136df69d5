/**
 * Behaviours an outside review found caught only by the workerd suite or by chance: which return
 * tools an agent is offered after a chain, an MCP tool's approval list matched against the server's
 * own tool name, and a cancel aborting the model request in flight — here in Node, by example.
 */
import { describe, expect, it } from "vitest";
import { Agent, handoff, type McpPort, type Model, Network, newConversation, runTurn } from "../../src/runtime/index.ts";
import { MemoryStore, runScripted } from "../../src/testing/index.ts";

describe("return tools after a chain", () => {
  it("are offered only to the agent a returning handoff brought, not to the one it passed the conversation on to", async () => {
    const billing = new Agent({ name: "billing", description: "Bills.", instructions: "You bill." });
    const calculator = new Agent({ name: "calculator", description: "Computes.", instructions: "You compute.", handoffs: [billing] });
    const triage = new Agent({
      name: "triage",
      description: "Routes.",
      instructions: "You route.",
      handoffs: [handoff(calculator, { returns: "on-call" })],
    });
    const net = new Network(triage, { defaultModel: "m", transferScope: "declared" });
    const { model, store } = await runScripted(net, "add, then bill", [
      { toolCalls: [{ name: "transfer_to_calculator" }] },
      { toolCalls: [{ name: "transfer_to_billing", args: { reason: "a charge" } }] },
      { text: "Billing here." },
    ]);
    const offered = model.requests.map((r) => [r.agent, r.tools.map((t) => t.name).filter((n) => n.startsWith("return_to_"))]);
    expect(offered).toEqual([
      ["triage", []],
      ["calculator", ["return_to_triage"]],
      ["billing", []],
    ]);
    // The frame stays: calculator still owes triage the conversation, and billing was handed it plainly.
    expect(store.holding.callers).toMatchObject([{ caller: "triage", callee: "calculator", mode: "on-call" }]);
  });
});

describe("an MCP tool's approval list", () => {
  it("names the server's tool, not the name the model sees", async () => {
    const port: McpPort = {
      listTools: async () => [
        { name: "cancel_shipment", description: "Cancels.", inputSchema: { type: "object" } },
        { name: "track_parcel", description: "Tracks.", inputSchema: { type: "object" } },
      ],
      callTool: async (_server, tool) => ({ content: [{ type: "text", text: `${tool} ran` }] }),
      checkArguments: () => undefined,
    };
    const shipping = new Agent({
      name: "shipping",
      instructions: "You ship.",
      mcpServers: [{ name: "tracking", url: "https://mcp.invalid/mcp", needsApproval: ["cancel_shipment"] }],
    });
    const { events } = await runScripted(
      new Network(shipping, { defaultModel: "m" }),
      "cancel it and track it",
      [
        {
          toolCalls: [
            { id: "c", name: "tracking_cancel_shipment" },
            { id: "t", name: "tracking_track_parcel" },
          ],
        },
      ],
      { mcp: port },
    );
    expect(events.filter((e) => e.type === "approval-required").map((e) => e.type === "approval-required" && e.name)).toEqual([
      "tracking_cancel_shipment",
    ]);
    expect(events.find((e) => e.type === "tool-result")).toMatchObject({ toolCallId: "t", result: "track_parcel ran", isError: false });
  });
});

describe("a cancel", () => {
  it("aborts the model request in flight: the model's signal fires, and the turn ends cancelled", async () => {
    const controller = new AbortController();
    let aborted = false;
    const model: Model = {
      async *stream(request) {
        yield { type: "text-delta", delta: "Thinking" };
        controller.abort();
        // What an adapter hands its HTTP client: the request is aborted with the turn.
        aborted = request.signal?.aborted === true;
        yield { type: "finish", finishReason: "stop" };
      },
    };
    const solo = new Agent({ name: "solo", instructions: "x", tools: [] });
    const events: Array<{ type: string }> = [];
    for await (const event of runTurn({
      conversationId: "c",
      network: new Network(solo, { defaultModel: "m" }),
      model,
      store: new MemoryStore("solo"),
      conversation: newConversation("solo"),
      input: { kind: "message", text: "hi" },
      signal: controller.signal,
    }))
      events.push(event);
    expect(aborted).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
    // The step in flight never happened: no step-finish.
    expect(events.some((e) => e.type === "step-finish")).toBe(false);
  });
});
