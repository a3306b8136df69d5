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
  const billing = new Agent({ name: "billing", description: "Billing and refunds.", instructions: "You are billing.", model: "billing-model", tools: [echo] });
  const shipping = new Agent({ name: "shipping", description: "Deliveries.", instructions: "You are shipping.", tools: [echo, explode] });
  const triage = new Agent({ name: "triage", description: "Routes.", instructions: "You are triage.", handoffs: [billing, shipping], tools: [echo, explode] });
  billing.addHandoff(triage);
  shipping.addHandoff(triage);
  return new Network(triage, { defaultModel: "default-model" });
}
