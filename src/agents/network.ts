import {
  Agent,
  type Duration,
  followUpTool,
  rememberTool,
  handoff,
  humanAgent,
  type McpServerConfig,
  Network,
  type NetworkOptions,
} from "../runtime/index.ts";
import {
  arrangeRedelivery,
  calculatorTools,
  changeAddress,
  chooseDeliverySlot,
  chooseSafePlace,
  flagOrder,
  lookupOrder,
  openDamageClaim,
  refund,
} from "./tools.ts";
import { serveTrackingMcp } from "./tracking-mcp.ts";

export const DEFAULT_MODEL = "gpt-4o-mini";

/**
 * The parcel-tracking MCP server the shipping agent uses: the demo's own, answered in-process
 * (no network, no URL to configure), with a person approving each `cancel_shipment`.
 */
export const DEMO_TRACKING_SERVER: McpServerConfig = {
  name: "tracking",
  url: "https://tracking.demo.invalid/mcp",
  fetch: (input, init) => serveTrackingMcp(new Request(input, init)),
  needsApproval: ["cancel_shipment"],
};

/** Messages each agent is for, which a router can be trained on (`npm start` does: DEMO_ROUTER=on). */
const EXAMPLES = {
  billing: [
    "I was charged twice for my order",
    "please refund order A1001",
    "there is a charge on my card I do not recognise",
    "my invoice shows the wrong amount",
    "I want my money back",
    "why was I billed again",
  ],
  shipping: [
    "where is my parcel",
    "track my order A1002",
    "change the delivery address of my order",
    "my package has not arrived yet",
    "cancel the shipment please",
    "my parcel arrived damaged, here is a photo",
    "when will my order be delivered",
  ],
  calculator: ["what is 12 times 7", "solve x^2 = 9", "calculate the square root of 81", "compute 15% of 200", "what is 3 + 4 * 2"],
  supportDesk: ["I want to talk to a person", "can I speak to a human", "put me through to someone real", "I need a real agent"],
};

const SHIPPING_INSTRUCTIONS =
  "You are the shipping specialist. Look the order up, track the parcel with the tracking service, report where it is. " +
  "Change the address, arrange a redelivery, ask where to leave a parcel when no one is home, offer delivery slots, " +
  "hold a parcel at a depot or cancel a shipment when asked. " +
  "When a customer sends a photo of a damaged parcel, open a damage claim with it. " +
  "If the question is not about shipping, transfer back to triage.";

/** What the example network can be given beside the network options. */
export interface SupportNetworkOptions extends Omit<NetworkOptions, "defaultModel"> {
  /** The tracking MCP server (the demo's in-process one by default). */
  tracking?: McpServerConfig;
  /** How long the support desk has to answer before the conversation goes back to triage (none by default). */
  supportDeskAnswerWithin?: Duration | undefined;
}

/** Builds the support network this Worker serves: a router and three specialists that can route back. */
export function createSupportNetwork(
  defaultModel = DEFAULT_MODEL,
  { tracking = DEMO_TRACKING_SERVER, supportDeskAnswerWithin, ...options }: SupportNetworkOptions = {},
): Network {
  const { fraudCheck, parcelSearch } = delegatedAgents();
  const billing = new Agent({
    name: "billing",
    description: "Handles charges, invoices, double charges and refunds.",
    instructions:
      "You are the billing specialist. Look the order up before acting, confirm the amount, and refund only what was " +
      "charged in error. If the question is not about billing, transfer back to triage.",
    tools: [lookupOrder, refund, fraudCheck.asTool({ name: "ask_fraud_check" }), rememberTool()],
    examples: EXAMPLES.billing,
  });
  const shipping = shippingAgent(tracking, parcelSearch);
  const calculator = new Agent({
    name: "calculator",
    description: "Solves arithmetic and equations step by step with calculator tools.",
    instructions:
      "You are a calculator assistant. You specialize in mathematical calculations and solving equations. " +
      "Always use your tools to compute.",
    tools: calculatorTools,
    examples: EXAMPLES.calculator,
  });
  // A person at the support desk: answers through the operator API and page, and hands back to an agent.
  const supportDesk = humanAgent({
    name: "support-desk",
    description: "A person at the support desk, for customers who ask for a human.",
    examples: EXAMPLES.supportDesk,
    ...(supportDeskAnswerWithin === undefined ? {} : { answerWithin: supportDeskAnswerWithin }),
  });
  const triage = new Agent({
    name: "triage",
    description: "Routes the customer to the right specialist.",
    instructions:
      "You route customers. Ask at most one clarifying question, then transfer billing questions to billing, delivery " +
      "questions to shipping and calculations to calculator.",
    // What a customer asks to be remembered is kept for their later conversations (signed in).
    tools: [rememberTool()],
    // The calculator gives the conversation back to whoever asked once it has answered.
    handoffs: [billing, shipping, handoff(calculator, { returns: "on-answer" }), supportDesk],
  });
  for (const specialist of [billing, shipping, calculator]) specialist.addHandoff(triage);
  for (const caller of [billing, shipping]) caller.addHandoff(handoff(calculator, { returns: "on-answer" }));
  return new Network(triage, { ...options, defaultModel });
}

/** The shipping specialist: its tools ask the customer each way a tool can, and its parcel search runs in the background. */
function shippingAgent(tracking: McpServerConfig, parcelSearch: Agent): Agent {
  return new Agent({
    name: "shipping",
    description: "Handles delivery status, tracking and address changes.",
    instructions: SHIPPING_INSTRUCTIONS,
    // schedule_followup: "I'll check again in an hour", a turn of its own when it is due.
    // arrange_redelivery asks the customer (a question), choose_safe_place has them pick (a choice); choose_delivery_slot
    // runs in the customer's page (a client tool).
    tools: [
      lookupOrder,
      changeAddress,
      arrangeRedelivery,
      chooseSafePlace,
      chooseDeliverySlot,
      openDamageClaim,
      followUpTool(),
      rememberTool(),
      parcelSearch.asTool({ name: "search_for_parcel", background: true }),
    ],
    mcpServers: [tracking],
    examples: EXAMPLES.shipping,
  });
}

/**
 * The agents others ask as tools: billing delegates a fraud check (it keeps the conversation; the checker's steps stream
 * nested), and shipping starts a search for a lost parcel in the background (the call answers at once; the search runs
 * from the conversation's alarm, and its result comes back later as a follow-up turn of shipping's). A search asked to
 * redeliver the parcel asks the customer when, and waits for their answer while the conversation goes on.
 */
function delegatedAgents(): { fraudCheck: Agent; parcelSearch: Agent } {
  const fraudCheck = new Agent({
    name: "fraud-check",
    description: "Checks an order's charges for signs of fraud and says what it found.",
    instructions: "You check an order for fraud: look it up, compare its charges, and say in one sentence what you found.",
    tools: [lookupOrder, flagOrder],
  });
  const parcelSearch = new Agent({
    name: "parcel-search",
    description: "Searches the carrier's depots for a lost parcel, which takes a while, and says where it is.",
    instructions:
      "You search for a lost parcel: look the order up, then say in one sentence where the parcel is and when it goes out again. " +
      "When asked to, arrange its redelivery (the customer is asked when and where).",
    tools: [lookupOrder, arrangeRedelivery],
  });
  return { fraudCheck, parcelSearch };
}
