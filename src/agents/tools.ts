import * as z from "zod";
import { tool } from "../runtime/index.ts";
import { findOrder } from "./orders.ts";

const orderId = z.string().min(1).describe("The order id, for example A1001.");

export const lookupOrder = tool({
  name: "lookup_order",
  description: "Fetch an order by id: item, amount, status, charges and shipping address.",
  parameters: z.object({ orderId }),
  describe: ({ orderId }) => `Looked up order ${orderId}`,
  execute: ({ orderId }) => {
    const order = findOrder(orderId);
    if (!order) throw new Error(`No order '${orderId}'.`);
    return order;
  },
});

export const refund = tool({
  name: "refund",
  description: "Refund an order, fully or in part. A person must approve every refund.",
  parameters: z.object({ orderId, amountUsd: z.number().positive().describe("Amount to refund in US dollars.") }),
  needsApproval: true,
  approvalMessage: ({ orderId, amountUsd }) => `Refund ${amountUsd} USD for order ${orderId}?`,
  describe: ({ orderId, amountUsd }) => `Refund of ${amountUsd} USD for order ${orderId}`,
  execute: ({ orderId, amountUsd }) => {
    const order = findOrder(orderId);
    if (!order) throw new Error(`No order '${orderId}'.`);
    if (amountUsd > order.amountUsd) throw new Error(`Cannot refund ${amountUsd} USD: order ${order.orderId} was ${order.amountUsd} USD.`);
    return { orderId: order.orderId, refundedUsd: amountUsd, status: "refunded" };
  },
});

export const changeAddress = tool({
  name: "change_address",
  description: "Change the shipping address of an order that has not been delivered yet.",
  parameters: z.object({ orderId, address: z.string().min(5).describe("The new full address.") }),
  describe: ({ orderId }) => `Changed the address of order ${orderId}`,
  execute: ({ orderId, address }) => {
    const order = findOrder(orderId);
    if (!order) throw new Error(`No order '${orderId}'.`);
    if (order.status === "delivered") throw new Error(`Order ${order.orderId} was already delivered.`);
    return { orderId: order.orderId, previousAddress: order.shippingAddress, newAddress: address };
  },
});

/** The fraud checker's flag: a person approves it first (asked of the user through billing, which asked the checker). */
export const flagOrder = tool({
  name: "flag_order",
  description: "Flags an order for the fraud team. A person must approve it.",
  parameters: z.object({ orderId }),
  needsApproval: true,
  approvalMessage: ({ orderId }) => `Report order ${orderId} to the fraud team?`,
  describe: ({ orderId }) => `Reported order ${orderId} to the fraud team`,
  execute: ({ orderId }) => {
    const order = findOrder(orderId);
    if (!order) throw new Error(`No order '${orderId}'.`);
    return { orderId: order.orderId, flagged: true };
  },
});

/** What `arrange_redelivery` asks the customer (`ctx.ask`): a day, and where to leave the parcel. */
const Redelivery = z.object({
  day: z.iso.date().describe("Day of the redelivery"),
  where: z.enum(["front door", "neighbour", "parcel locker"]).describe("Where to leave it"),
});

export const arrangeRedelivery = tool({
  name: "arrange_redelivery",
  description: "Books a redelivery of a missed parcel. Asks the customer for the day and where to leave it.",
  parameters: z.object({ orderId }),
  describe: ({ orderId }) => `Booked a redelivery of order ${orderId}`,
  execute: async ({ orderId }, ctx) => {
    const order = findOrder(orderId);
    if (!order) throw new Error(`No order '${orderId}'.`);
    const { day, where } = await ctx.ask({
      message: `When should order ${order.orderId} come again, and where should it be left?`,
      schema: Redelivery,
    });
    return { orderId: order.orderId, redeliveryDay: day, leaveAt: where };
  },
});

/**
 * A damage claim for an order, with the customer's photo of it: the photo is read from the conversation's files (by the
 * id its message carries), and the claim form this tool writes is saved beside it, for the customer to keep.
 */
export const openDamageClaim = tool({
  name: "open_damage_claim",
  description:
    "Opens a damage claim for an order with the customer's photo of the damage (the photo's file id), and gives them the claim form.",
  parameters: z.object({ orderId, photoId: z.string().min(1).describe("The id of the customer's photo, as their message carries it.") }),
  describe: ({ orderId }) => `Opened a damage claim for order ${orderId}`,
  execute: async ({ orderId, photoId }, ctx) => {
    const order = findOrder(orderId);
    if (!order) throw new Error(`No order '${orderId}'.`);
    const photo = await ctx.files.read(photoId);
    // A number of the call's own: the same however often it runs (its idempotency key).
    const number = [...ctx.idempotencyKey].reduce((hash, char) => (hash * 31 + char.charCodeAt(0)) >>> 0, 7) % 100_000;
    const claimId = `DC-${order.orderId}-${String(number).padStart(5, "0")}`;
    const form = [
      `Damage claim ${claimId}`,
      `Order: ${order.orderId} (${order.item})`,
      `Photo: ${photoId} (${photo.byteLength} bytes)`,
      "Status: open",
    ];
    const saved = await ctx.files.save({
      bytes: new TextEncoder().encode(`${form.join("\n")}\n`),
      mediaType: "text/plain",
      name: `claim-${claimId}.txt`,
    });
    return { claimId, orderId: order.orderId, photoBytes: photo.byteLength, form: saved.name };
  },
});

/** Where a parcel is left when no one is home: the customer picks a place, or says one in their own words (a choice). */
export const chooseSafePlace = tool({
  name: "choose_safe_place",
  description: "Asks the customer where the courier should leave an order when no one is home, and records it.",
  parameters: z.object({ orderId }),
  describe: ({ orderId }) => `Recorded where to leave order ${orderId}`,
  execute: async ({ orderId }, ctx) => {
    const order = findOrder(orderId);
    if (!order) throw new Error(`No order '${orderId}'.`);
    const place = await ctx.ask({
      message: `Where should the courier leave order ${order.orderId} when no one is home?`,
      options: ["Front door", "With a neighbour", "Parcel locker"],
      other: "Somewhere else",
    });
    return { orderId: order.orderId, safePlace: place };
  },
});

/** A client tool: no execute here, the customer's page shows the slots and sends back the one picked. */
export const chooseDeliverySlot = tool({
  name: "choose_delivery_slot",
  description: "Shows the customer the delivery slots in their browser and returns the one they pick.",
  parameters: z.object({ orderId, slots: z.array(z.string()).min(1).describe("Slots to offer, e.g. 'Mon 9:00-12:00'.") }),
  outputSchema: z.object({ slot: z.string().min(1) }),
});

const pair = z.object({ a: z.number(), b: z.number() });

/** A calculator tool: `a <symbol> b`, said as such ("12 × 7"); its description is the model's, as it always was. */
function operation(name: string, description: string, symbol: string, run: (a: number, b: number) => number) {
  return tool({ name, description, parameters: pair, describe: ({ a, b }) => `${a} ${symbol} ${b}`, execute: ({ a, b }) => run(a, b) });
}

/** Calculator tools, for the demo's maths agent. */
export const calculatorTools = [
  operation("sum_numbers", "Return a + b.", "+", (a, b) => a + b),
  operation("multiply_numbers", "Return a * b.", "×", (a, b) => a * b),
  operation("subtract_numbers", "Return a - b.", "−", (a, b) => a - b),
  operation("divide_numbers", "Return a / b.", "÷", (a, b) => {
    if (b === 0) throw new Error("Division by zero.");
    return a / b;
  }),
  operation("power", "Return a raised to the power b.", "^", (a, b) => a ** b),
  tool({
    name: "square_root",
    description: "Return the square root of a.",
    parameters: z.object({ a: z.number() }),
    describe: ({ a }) => `√${a}`,
    execute: ({ a }) => {
      if (a < 0) throw new Error(`The square root of a negative number (${a}) is not real.`);
      return Math.sqrt(a);
    },
  }),
];
