import { z } from "zod";
import { Agent, Network, tool } from "../../src/runtime/index.ts";

export const echo = tool({
  name: "echo",
  description: "Echo the text back.",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => ({ echoed: text }),
});

export const explode = tool({
  name: "explode",
  description: "Always throws.",
  parameters: z.object({}),
  execute: () => {
    throw new Error("boom");
  },
});

/** triage → billing, shipping; billing and shipping → triage: the shape of the Worker's network. */
export function supportLike(): Network {
  const billing = new Agent({
    name: "billing",
    description: "Billing and refunds.",
    instructions: "You are billing.",
    model: "billing-model",
    tools: [echo],
  });
  const shipping = new Agent({ name: "shipping", description: "Deliveries.", instructions: "You are shipping.", tools: [echo, explode] });
  const triage = new Agent({
    name: "triage",
    description: "Routes.",
    instructions: "You are triage.",
    handoffs: [billing, shipping],
    tools: [echo, explode],
  });
  billing.addHandoff(triage);
  shipping.addHandoff(triage);
  return new Network(triage, { defaultModel: "default-model" });
}

export const refunds: string[] = [];

/** A tool a person must approve; amounts under 10 need no approval. */
export const refund = tool({
  name: "refund",
  description: "Refund an amount.",
  parameters: z.object({ amount: z.number() }),
  needsApproval: ({ amount }) => amount >= 10,
  execute: ({ amount }) => {
    refunds.push(String(amount));
    return { refunded: amount };
  },
});

/** triage → billing (with the approval-gated refund) ⇄ shipping. */
export function withApprovals(): Network {
  const billing = new Agent({ name: "billing", instructions: "You are billing.", tools: [refund, echo] });
  const shipping = new Agent({ name: "shipping", instructions: "You are shipping.", tools: [echo] });
  const triage = new Agent({ name: "triage", instructions: "You are triage.", handoffs: [billing, shipping], tools: [refund, explode] });
  billing.addHandoff(shipping);
  shipping.addHandoff(billing);
  return new Network(triage, { defaultModel: "m" });
}
