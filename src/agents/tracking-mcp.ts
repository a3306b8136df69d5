/**
 * The demo's parcel-tracking service, an MCP server built with the official MCP server package:
 * the shipping agent reaches it as the MCP server `tracking`, so a newcomer sees an MCP tool
 * called in `npm start`. The Worker serves it at /mcp/tracking (stateless Streamable HTTP) for
 * any MCP client; the demo network calls the same handler in-process, so it works offline and
 * needs no URL of its own.
 */
import { createMcpHandler, inputRequired, inputResponse, McpServer } from "@modelcontextprotocol/server";
import * as z from "zod";
import { ORDERS } from "./orders.ts";

const CARRIER: Record<string, { carrier: string; scans: string[]; eta: string | null }> = {
  A1001: { carrier: "ParcelPost", scans: ["Picked up in Leeds", "Sorted at London hub", "Out for delivery"], eta: "today by 18:00" },
  A1002: { carrier: "ParcelPost", scans: ["Label created, waiting for pick-up"], eta: "in 3 to 5 days" },
  A1003: { carrier: "QuickShip", scans: ["Picked up in Bristol", "Delivered, left with a neighbour"], eta: null },
};
const cancelled = new Set<string>();
const held = new Map<string, string>();

/** What `hold_at_depot` asks the customer to confirm, by elicitation (a form). */
const HoldConfirmation = z.object({
  confirm: z.boolean().describe("Hold the parcel at the depot"),
  depot: z.enum(["Leeds", "London", "Bristol"]).describe("Depot to collect from"),
});

const orderId = z
  .string()
  .regex(/^A\d{4}$/)
  .describe("Order id, e.g. A1002");

const Tracking = z.object({
  orderId: z.string(),
  carrier: z.string(),
  status: z.string(),
  latestScans: z.array(z.string()),
  expectedDelivery: z.string().nullable(),
});

/** A fresh server with the tracking tools (the handler makes one per request). */
export function trackingMcpServer(): McpServer {
  const server = new McpServer({ name: "parcel-tracking", version: "1.0.0" });
  server.registerTool(
    "track_parcel",
    {
      description: "Where a parcel is: its carrier, the latest scans and when it is expected.",
      inputSchema: z.object({ orderId }),
      outputSchema: Tracking,
    },
    async ({ orderId: id }) => {
      const tracking = CARRIER[id];
      if (!tracking) return { content: [{ type: "text", text: `No parcel is tracked for order ${id}.` }], isError: true };
      const status = cancelled.has(id) ? "cancelled" : (ORDERS.find((o) => o.orderId === id)?.status ?? "unknown");
      const output = { orderId: id, carrier: tracking.carrier, status, latestScans: tracking.scans, expectedDelivery: tracking.eta };
      return { content: [{ type: "text", text: JSON.stringify(output) }], structuredContent: output };
    },
  );
  server.registerTool(
    "cancel_shipment",
    {
      description: "Stops a parcel that has not left the warehouse. A person must approve it.",
      inputSchema: z.object({ orderId }),
    },
    async ({ orderId: id }) => {
      const order = ORDERS.find((o) => o.orderId === id);
      if (!order || order.status !== "processing")
        return { content: [{ type: "text", text: `Order ${id} has already left the warehouse; it cannot be cancelled.` }], isError: true };
      cancelled.add(id);
      return { content: [{ type: "text", text: `The shipment of order ${id} is cancelled.` }] };
    },
  );
  server.registerTool(
    "hold_at_depot",
    {
      description:
        "Holds a parcel at a depot for the customer to collect. The customer confirms it and picks the depot (an MCP elicitation).",
      inputSchema: z.object({ orderId }),
    },
    async ({ orderId: id }, ctx) => {
      // The 2026-07-28 revision's way to ask: answer input_required, and read the answer when the call comes again.
      const answer = inputResponse(ctx.mcpReq.inputResponses, "confirm");
      if (answer.kind === "missing")
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: `Hold the parcel of order ${id} at a depot for you to collect?`,
              requestedSchema: HoldConfirmation,
            }),
          },
        });
      const form = answer.kind === "elicit" && answer.action === "accept" ? HoldConfirmation.safeParse(answer.content) : undefined;
      if (!form?.success || !form.data.confirm)
        return { content: [{ type: "text", text: `The customer did not confirm: the parcel of order ${id} was not held.` }] };
      held.set(id, form.data.depot);
      return { content: [{ type: "text", text: `The parcel of order ${id} is held at the ${form.data.depot} depot for collection.` }] };
    },
  );
  return server;
}

const handler = createMcpHandler(() => trackingMcpServer());

/** Answers one MCP request (POST a JSON-RPC message, as Streamable HTTP has it). */
export function serveTrackingMcp(request: Request): Promise<Response> {
  return handler.fetch(request);
}
