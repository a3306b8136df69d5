/**
 * This project's side of the peer bench: the same job as the peer's starter (one agent, one tool,
 * `lookup_order`, used over several steps), built as a team would build it with the package's
 * entry points, so the two Workers differ only in the runtime under them.
 */
import * as z from "zod";
import { createHandoffWorker } from "../../../src/cloudflare/index.ts";
import { Agent, Network, tool } from "../../../src/runtime/index.ts";

const ORDERS: Record<string, { orderId: string; item: string; amountUsd: number; status: string; charges: number }> = {
  A1001: { orderId: "A1001", item: "Mechanical keyboard", amountUsd: 129, status: "shipped", charges: 2 },
  A1002: { orderId: "A1002", item: "USB-C dock", amountUsd: 89.5, status: "processing", charges: 1 },
};

const lookupOrder = tool({
  name: "lookup_order",
  description: "Fetch an order by id: item, amount, status and charges.",
  parameters: z.object({ orderId: z.string().min(1).describe("The order id, for example A1001.") }),
  execute: ({ orderId }) => ORDERS[orderId] ?? { error: `No order ${orderId}` },
});

const assistant = new Agent({
  name: "assistant",
  instructions: "You are a support assistant. Look orders up with lookup_order before answering about them.",
  tools: [lookupOrder],
});

const worker = createHandoffWorker({ network: new Network(assistant, { defaultModel: "gpt-4o-mini" }) });

export const Conversation = worker.Conversation;
export default { fetch: worker.fetch };
