/**
 * The transfer tools exactly as the model receives them, in each style: names, descriptions and
 * JSON Schemas are the contract with the provider, so they are pinned whole.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, handoff, Network } from "../../src/runtime/index.ts";
import type { TransferStyle } from "../../src/runtime/handoff/transfer-tools.ts";

const REASON = { type: "string", description: "Why this agent should take over, in one sentence." };

function network(toolStyle: TransferStyle, withInput = false, describe?: (name: string) => string): Network {
  const billing = new Agent({ name: "billing", description: "Charges and refunds.", instructions: "b" });
  const shipping = new Agent({ name: "shipping", instructions: "s" });
  const target = withInput ? handoff(billing, { inputSchema: z.object({ orderId: z.string(), urgent: z.boolean().optional() }) }) : billing;
  const triage = new Agent({ name: "triage", instructions: "t", handoffs: [target, shipping] });
  return new Network(triage, { defaultModel: "m", toolStyle, transferScope: "declared", ...(describe ? { describe } : {}) });
}

describe("transfer tools as the model receives them", () => {
  it("per-target: one tool per target, an optional reason, typed input with its required fields", () => {
    expect(network("per-target").toolset("triage").specs).toEqual([
      {
        name: "transfer_to_billing",
        description: "Transfer the conversation to 'billing'. Charges and refunds.",
        parameters: { type: "object", properties: { reason: REASON }, additionalProperties: false },
      },
      {
        name: "transfer_to_shipping",
        description: "Transfer the conversation to 'shipping'.",
        parameters: { type: "object", properties: { reason: REASON }, additionalProperties: false },
      },
    ]);
    expect(network("per-target", true).toolset("triage").specs[0]!.parameters).toEqual({
      type: "object",
      properties: { reason: REASON, orderId: { type: "string" }, urgent: { type: "boolean" } },
      required: ["orderId"],
      additionalProperties: false,
    });
  });

  it("single: one transfer_to_agent with an enum of targets, listing each with its description and input", () => {
    expect(network("single", true).toolset("triage").specs).toEqual([
      {
        name: "transfer_to_agent",
        description:
          'Transfer the conversation to a better-suited agent, who takes over from here. Agents:\n- billing: Charges and refunds. (input: {"type":"object","properties":{"orderId":{"type":"string"},"urgent":{"type":"boolean"}},"required":["orderId"],"additionalProperties":false})\n- shipping',
        parameters: {
          type: "object",
          properties: {
            agent_name: { type: "string", enum: ["billing", "shipping"] },
            reason: REASON,
            input: { type: "object", description: "The input the chosen agent requires, as listed for it." },
          },
          required: ["agent_name"],
          additionalProperties: false,
        },
      },
    ]);
    expect(network("single").toolset("triage").specs[0]!.parameters).not.toHaveProperty("properties.input");
  });

  it("named: one handoff tool with a required name and reason", () => {
    expect(network("named").toolset("triage").specs).toEqual([
      {
        name: "handoff",
        description:
          "Transfer control to another specialized agent. Use this when the user's request is better handled by a different agent. Agents:\n- billing: Charges and refunds.\n- shipping",
        parameters: {
          type: "object",
          properties: {
            name: { type: "string", description: "Name of the agent to hand off to. Available agents: billing, shipping" },
            reason: { type: "string", description: "Brief explanation of why this handoff is needed" },
          },
          required: ["name", "reason"],
          additionalProperties: false,
        },
      },
    ]);
  });

  it("describe() replaces each target's sentence; an agent with no transfers is offered none", () => {
    expect(
      network("per-target", false, (name) => `Ask ${name}.`)
        .toolset("triage")
        .specs.map((s) => s.description),
    ).toEqual(["Transfer the conversation to 'billing'. Ask billing.", "Transfer the conversation to 'shipping'. Ask shipping."]);
    for (const style of ["per-target", "single", "named"] as const) expect(network(style).toolset("shipping").specs).toEqual([]);
  });

  it("a regular tool's spec is its zod schema as JSON Schema, the same object every time", () => {
    const echo = { name: "echo", description: "Echo.", parameters: z.object({ text: z.string() }), execute: () => null };
    const net = new Network(new Agent({ name: "solo", instructions: "x", tools: [echo] }), { defaultModel: "m" });
    const [spec] = net.toolset("solo").specs;
    expect(spec).toEqual({
      name: "echo",
      description: "Echo.",
      parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
    });
    expect(new Network(new Agent({ name: "solo", instructions: "x", tools: [echo] }), { defaultModel: "m" }).toolset("solo").specs[0]).toBe(
      spec,
    );
  });
});
