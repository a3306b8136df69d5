/**
 * The Worker's own path with an MCP server: this project's example network points its tracking
 * server at the MCP test server that wants a bearer token (TRACKING_MCP_URL, TRACKING_MCP_TOKEN, a
 * secret), and the provider is the fake OpenAI-compatible server. What the Durable Object does:
 * the tools offered after a handoff and not before, one `tools/list` for many turns (a restart between), an approval
 * across two requests, `GET /v1/agents`, and the token in no response, stored row, log or trace.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { captureLogs, conversationSurfaces } from "../support/surfaces.ts";
import { parseSse } from "../support/sse.ts";
import { call, chat, scenario, stored } from "../support/worker.ts";

const TOKEN = "mcp-bearer 5f2c9a7e-secret";

async function securedStats(): Promise<{ initialize: number; toolsList: number; toolsCall: number; authorization: string[] }> {
  const all = (await (await fetch(`${inject("mcpUrl")}/__mcp/stats`)).json()) as Record<
    string,
    { initialize: number; toolsList: number; toolsCall: number; authorization: string[] }
  >;
  return all["/secured"] ?? { initialize: 0, toolsList: 0, toolsCall: 0, authorization: [] };
}

describe("an MCP server in the example network", () => {
  it("offers shipping's MCP tools after the handoff and not before, lists them once for many turns, and shows them in /v1/agents", async () => {
    const before = await securedStats();
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: "{}" }] },
      { toolCalls: [{ id: "p", name: "tracking_track_parcel", arguments: JSON.stringify({ orderId: "A1001" }) }] },
      { text: "It is out for delivery." },
      { toolCalls: [{ id: "p2", name: "tracking_track_parcel", arguments: JSON.stringify({ orderId: "A1002" }) }] },
      { text: "Still waiting for pick-up." },
      { text: "Anything else?" },
    ]);
    const events = await chat(s.conversationId, s.tag("where is my parcel A1001?"));
    expect(events.find((e) => e.type === "tool-result" && e.name === "tracking_track_parcel")).toMatchObject({
      isError: false,
      result: { orderId: "A1001", carrier: "ParcelPost", latestScans: expect.arrayContaining(["Out for delivery"]) },
    });
    await chat(s.conversationId, "and A1002?");
    // The object restarts: the list comes back from its storage, not from the server.
    await evictDurableObject(env.CONVERSATIONS.getByName(s.conversationId));
    await chat(s.conversationId, "thanks");

    const { requests } = await s.sent();
    const offered = requests.map((r) => (r.tools ?? []).map((t) => t.function.name).filter((name) => name.startsWith("tracking_")));
    expect(offered[0]).toEqual([]);
    expect(offered.slice(1).every((names) => names.includes("tracking_track_parcel") && names.includes("tracking_cancel_shipment"))).toBe(
      true,
    );
    const spec = requests[1]!.tools!.find((t) => t.function.name === "tracking_track_parcel")!.function;
    expect(spec.parameters).toMatchObject({ properties: { orderId: { pattern: "^A\\d{4}$" } }, required: ["orderId"] });

    // Three turns, five model calls after the handoff, a restart between: one tools/list, two calls, all with the token.
    const after = await securedStats();
    expect([after.toolsList - before.toolsList, after.toolsCall - before.toolsCall]).toEqual([1, 2]);
    expect(after.authorization.slice(before.authorization.length).every((value) => value === `Bearer ${TOKEN}`)).toBe(true);

    const agents = (await (await call("/v1/agents")).json()) as {
      agents: Array<{ name: string; mcpServers: Array<{ name: string; status: string; tools: Array<{ name: string }> }> }>;
    };
    const shipping = agents.agents.find((a) => a.name === "shipping")!;
    expect(shipping.mcpServers[0]).toMatchObject({ name: "tracking", status: "listed" });
    expect(shipping.mcpServers[0]!.tools.map((t) => t.name)).toContain("tracking_track_parcel");
    expect(agents.agents.find((a) => a.name === "triage")!.mcpServers).toEqual([]);
  });

  it("waits for a person before tracking_cancel_shipment, and calls it in the request that approves it", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: "{}" }] },
      { toolCalls: [{ id: "c", name: "tracking_cancel_shipment", arguments: JSON.stringify({ orderId: "A1002" }) }] },
      { text: "The shipment is cancelled." },
    ]);
    const first = await chat(s.conversationId, s.tag("cancel the shipment of A1002"));
    expect(first.find((e) => e.type === "approval-required")).toMatchObject({ name: "tracking_cancel_shipment", agent: "shipping" });
    expect(first.at(-1)).toMatchObject({ type: "done", status: "awaiting_approval" });
    expect((await stored(s.conversationId)).pendingApprovals).toMatchObject([{ toolCallId: "c", name: "tracking_cancel_shipment" }]);

    const res = await call(`/v1/conversations/${s.conversationId}/approvals`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decisions: [{ toolCallId: "c", approved: true }] }),
    });
    const resumed = parseSse(await res.text());
    expect(resumed.find((e) => e.type === "tool-result")).toMatchObject({
      name: "tracking_cancel_shipment",
      isError: false,
      result: "The shipment of order A1002 is cancelled.",
    });
    expect(resumed.at(-1)).toMatchObject({ type: "done", status: "completed", agent: "shipping" });
  });

  it("never lets the server's token out: not in events, stored history, replays, traces or logs, even when the server echoes it", async () => {
    const logs = captureLogs();
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: "{}" }] },
      { toolCalls: [{ id: "w", name: "tracking_whoami", arguments: "{}" }] },
      { text: "Done." },
    ]);
    const events = await chat(s.conversationId, s.tag("which credentials does tracking see?"));
    logs.stop();
    const echoed = events.find((e) => e.type === "tool-result" && e.name === "tracking_whoami");
    expect(echoed).toMatchObject({ isError: false, result: "You called with: [redacted]" });

    const surfaces = [
      JSON.stringify(events),
      ...(await conversationSurfaces(s.conversationId)),
      JSON.stringify((await s.sent()).requests),
      logs.lines.join("\n"),
    ];
    for (const text of surfaces) expect(text).not.toContain("5f2c9a7e");
  });
});
