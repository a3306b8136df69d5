import { Agent, Network, type NetworkOptions } from "../runtime/index.ts";
import { calculatorTools, changeAddress, lookupOrder, refund } from "./tools.ts";

export const DEFAULT_MODEL = "gpt-4o-mini";

/** Builds the support network this Worker serves: a router and three specialists that can route back. */
export function createSupportNetwork(defaultModel = DEFAULT_MODEL, options: Omit<NetworkOptions, "defaultModel"> = {}): Network {
  const billing = new Agent({
    name: "billing",
    description: "Handles charges, invoices, double charges and refunds.",
    instructions:
      "You are the billing specialist. Look the order up before acting, confirm the amount, and refund only what was charged in error. If the question is not about billing, transfer back to triage.",
    tools: [lookupOrder, refund],
  });
  const shipping = new Agent({
    name: "shipping",
    description: "Handles delivery status, tracking and address changes.",
    instructions:
      "You are the shipping specialist. Look the order up, report its status, and change the address when asked. If the question is not about shipping, transfer back to triage.",
    tools: [lookupOrder, changeAddress],
  });
  const calculator = new Agent({
    name: "calculator",
    description: "Solves arithmetic and equations step by step with calculator tools.",
    instructions:
      "You are a calculator assistant. You specialize in mathematical calculations and solving equations. Always use your tools to compute.",
    tools: calculatorTools,
  });
  const triage = new Agent({
    name: "triage",
    description: "Routes the customer to the right specialist.",
    instructions:
      "You route customers. Ask at most one clarifying question, then transfer billing questions to billing, delivery questions to shipping and calculations to calculator.",
    handoffs: [billing, shipping, calculator],
  });
  for (const specialist of [billing, shipping, calculator]) specialist.addHandoff(triage);
  return new Network(triage, { ...options, defaultModel });
}
