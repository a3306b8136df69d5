/**
 * Agents with MCP servers, in workerd: the official MCP client (through `McpConnections`) against
 * real MCP servers built with the official server package and served from Node
 * (test/node/mcp-test-server.ts), with a scripted model. What is checked is what a user sees: the
 * tools the model is offered, the events of the turn, the stored history, and what the servers
 * were asked.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { IDEMPOTENCY_META_KEY, McpConnections } from "../../src/mcp/index.ts";
import { Agent, type McpServerConfig, Network, type RunEvent } from "../../src/runtime/index.ts";
import { MemoryStore, runScripted, type ScriptStep } from "../../src/testing/index.ts";

const TOKEN = "mcp-bearer 5f2c9a7e-secret";

/** Every set of connections a test opens, closed after it (as a Durable Object's go with it). */
const opened: McpConnections[] = [];
function connections(options: ConstructorParameters<typeof McpConnections>[0] = {}): McpConnections {
  const mcp = new McpConnections(options);
  opened.push(mcp);
  return mcp;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((mcp) => mcp.close()));
});
const at = (path: string) => `${inject("mcpUrl")}/${path}`;

interface ServerStats {
  initialize: number;
  toolsList: number;
  toolsCall: number;
  authorization: string[];
  callMeta: unknown[];
  calls: Array<{ tool: string; inputResponses: unknown; requestState: unknown }>;
}

async function stats(base: string): Promise<ServerStats> {
  const all = (await (await fetch(at("__mcp/stats"))).json()) as Record<string, ServerStats>;
  return all[`/${base}`] ?? { initialize: 0, toolsList: 0, toolsCall: 0, authorization: [], callMeta: [], calls: [] };
}

/** triage (no MCP) hands off to shipping, which has the given servers. */
function network(servers: McpServerConfig[]): Network {
  const shipping = new Agent({ name: "shipping", description: "Deliveries.", instructions: "You ship.", mcpServers: servers });
  const triage = new Agent({ name: "triage", description: "Routes.", instructions: "You route.", handoffs: [shipping] });
  shipping.addHandoff(triage);
  return new Network(triage, { defaultModel: "m" });
}

/** A turn held by shipping from the start, through a fresh set of connections unless one is given. */
function shippingTurn(servers: McpServerConfig[], script: ScriptStep[], options: { mcp?: McpConnections; store?: MemoryStore } = {}) {
  const net = network(servers);
  const store = options.store ?? new MemoryStore("shipping");
  return runScripted(net, "where is A1001?", script, { store, mcp: options.mcp ?? connections() });
}

const results = (events: RunEvent[]) =>
  events
    .filter((e): e is Extract<RunEvent, { type: "tool-result" }> => e.type === "tool-result")
    .map((e) => ({ name: e.name, result: e.result, isError: e.isError }));

describe("MCP tools", () => {
  it("sends each call's idempotency key in the request's _meta, the same key a local tool is given", async () => {
    const { events } = await shippingTurn(
      [{ name: "parcels", url: at("stateful/idempotency/mcp") }],
      [{ toolCalls: [{ id: "call-7", name: "parcels_report", args: { region: "north" } }] }, { text: "done" }],
      { store: new MemoryStore("shipping") },
    );
    expect(events.find((e) => e.type === "tool-result")).toMatchObject({ isError: false });
    expect((await stats("stateful/idempotency")).callMeta).toEqual([{ [IDEMPOTENCY_META_KEY]: "c1:call-7" }]);
  });

  it("offers the server's tools as <server>_<tool>, with descriptions and schemas as the server gives them", async () => {
    const { model } = await shippingTurn([{ name: "parcels", url: at("stateful/offer/mcp") }], [{ text: "hello" }]);
    const tools = model.requests[0]!.tools;
    expect(tools.map((t) => t.name)).toEqual([
      "transfer_to_triage",
      "parcels_track_parcel",
      "parcels_cancel_shipment",
      "parcels_hold_at_depot",
      "parcels_fail_always",
      "parcels_slow_echo",
      "parcels_report",
      "parcels_picture",
      "parcels_whoami",
      "parcels_verify_identity",
      "parcels_offer_slot",
      "parcels_grow",
    ]);
    expect(tools.find((t) => t.name === "parcels_track_parcel")).toMatchObject({
      description: "Where a parcel is: its carrier, the latest scans and when it is expected.",
      parameters: {
        type: "object",
        properties: { orderId: { type: "string", pattern: "^A\\d{4}$", description: "Order id, e.g. A1002" } },
        required: ["orderId"],
      },
    });
  });

  it("calls a tool and answers with its structured content; text, errors, images and links as the model reads them", async () => {
    const { events, store } = await shippingTurn(
      [{ name: "parcels", url: at("stateful/call/mcp") }],
      [
        {
          toolCalls: [
            { id: "a", name: "parcels_track_parcel", args: { orderId: "A1001" } },
            { id: "b", name: "parcels_fail_always", args: {} },
            { id: "c", name: "parcels_picture", args: {} },
            { id: "d", name: "parcels_report", args: { region: "north" } },
          ],
        },
        { text: "It is out for delivery." },
      ],
    );
    expect(results(events)).toEqual([
      {
        name: "parcels_track_parcel",
        result: {
          orderId: "A1001",
          carrier: "ParcelPost",
          status: "shipped",
          latestScans: ["Picked up in Leeds", "Sorted at London hub", "Out for delivery"],
          expectedDelivery: "today by 18:00",
        },
        isError: false,
      },
      { name: "parcels_fail_always", result: "Tool 'parcels_fail_always' failed: the warehouse system is down", isError: true },
      {
        name: "parcels_picture",
        result: "Here is the parcel.\n[image image/png, 12 bytes]\n[resource link https://tracking.example/parcels/A1001 (parcel A1001)]",
        isError: false,
      },
      { name: "parcels_report", result: { region: "north", parcels: 12, late: 1 }, isError: false },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed", text: "It is out for delivery." });
    expect(store.history.filter((m) => m.role === "tool").map((m) => m.role === "tool" && m.isError)).toEqual([false, true, false, false]);
  });

  it("answers a call past timeoutMs with an error result, and the turn goes on", async () => {
    const { events } = await shippingTurn(
      [{ name: "parcels", url: at("stateful/slow/mcp"), timeoutMs: 300 }],
      [{ toolCalls: [{ name: "parcels_slow_echo", args: { text: "late", ms: 3000 } }] }, { text: "The tracking service is slow." }],
    );
    expect(results(events)).toEqual([
      {
        name: "parcels_slow_echo",
        result: "Tool 'parcels_slow_echo' failed: The MCP server 'parcels' did not answer within 300 ms.",
        isError: true,
      },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });

  it("checks arguments against the tool's JSON Schema before calling it: a mismatch is an error result and no call", async () => {
    const before = await stats("stateful/schema");
    const { events } = await shippingTurn(
      [{ name: "parcels", url: at("stateful/schema/mcp") }],
      [{ toolCalls: [{ name: "parcels_track_parcel", args: { orderId: 1001 } }] }, { text: "Which order?" }],
    );
    expect(results(events)[0]).toMatchObject({
      isError: true,
      result: expect.stringMatching(/^Invalid arguments for 'parcels_track_parcel': .*orderId/s),
    });
    expect((await stats("stateful/schema")).toolsCall).toBe(before.toolsCall);
  });

  it("opens a new session when the server has forgotten its own (a restart), and the call succeeds", async () => {
    const mcp = connections();
    const server = { name: "parcels", url: at("stateful/restart/mcp") };
    const call = [{ toolCalls: [{ name: "parcels_track_parcel", args: { orderId: "A1002" } }] }, { text: "ok" }];
    const first = await shippingTurn([server], call, { mcp });
    await fetch(at("__mcp/restart"), { method: "POST" });
    const second = await shippingTurn([server], call, { mcp, store: first.store });
    expect(results(second.events)).toMatchObject([{ name: "parcels_track_parcel", isError: false }]);
    const counts = await stats("stateful/restart");
    expect([counts.initialize, counts.toolsList, counts.toolsCall]).toEqual([2, 1, 3]);
  });

  it("offers a handoff target's MCP tools after the swap, and not before", async () => {
    const net = network([{ name: "parcels", url: at("stateful/handoff/mcp") }]);
    const { model } = await runScripted(
      net,
      "where is my parcel?",
      [
        { toolCalls: [{ name: "transfer_to_shipping", args: {} }] },
        { toolCalls: [{ name: "parcels_track_parcel", args: { orderId: "A1001" } }] },
        { text: "On its way." },
      ],
      { mcp: connections() },
    );
    const mcpTools = model.requests.map((r) => r.tools.filter((t) => t.name.startsWith("parcels_")).length);
    expect(mcpTools).toEqual([0, 11, 11]);
    expect(model.requests.map((r) => r.agent)).toEqual(["triage", "shipping", "shipping"]);
  });

  it("offers only the allowed tools, less the denied ones", async () => {
    const { model } = await shippingTurn(
      [{ name: "parcels", url: at("stateful/lists/mcp"), allowTools: ["track_parcel", "report", "grow"], denyTools: ["grow"] }],
      [{ toolCalls: [{ name: "parcels_grow", args: {} }] }, { text: "no" }],
    );
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual(["transfer_to_triage", "parcels_track_parcel", "parcels_report"]);
    expect(model.requests[1]!.messages.at(-1)).toMatchObject({
      role: "tool",
      isError: true,
      content: expect.stringContaining("Unknown tool 'parcels_grow'"),
    });
  });

  it("lists a server's tools once and uses the list until its TTL, or until the server says it changed", async () => {
    const mcp = connections();
    const server = { name: "parcels", url: at("stateful/changes/mcp") };
    let store: MemoryStore | undefined;
    for (let turn = 0; turn < 3; turn++)
      store = (await shippingTurn([server], [{ text: "hi" }], { mcp, ...(store ? { store } : {}) })).store;
    expect((await stats("stateful/changes")).toolsList).toBe(1);

    // `grow` adds a tool; the server sends notifications/tools/list_changed on its stream.
    await shippingTurn([server], [{ toolCalls: [{ name: "parcels_grow", args: {} }] }, { text: "grown" }], { mcp, store: store! });
    let offered: string[] = [];
    for (let i = 0; i < 20 && !offered.includes("parcels_fresh_tool"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      offered = (await shippingTurn([server], [{ text: "hi" }], { mcp, store: store! })).model.requests[0]!.tools.map((t) => t.name);
    }
    expect(offered).toContain("parcels_fresh_tool");

    // With no TTL, every step lists again.
    const fresh = connections();
    const uncached = { ...server, url: at("stateful/ttl/mcp"), cacheTtlMs: 0 };
    await shippingTurn([uncached], [{ toolCalls: [{ name: "parcels_report", args: { region: "south" } }] }, { text: "ok" }], {
      mcp: fresh,
    });
    expect((await stats("stateful/ttl")).toolsList).toBe(2);
  });

  it("falls back to the older HTTP+SSE transport for a server that only speaks that", async () => {
    const { events } = await shippingTurn(
      [{ name: "old", url: at("legacy/fallback/sse") }],
      [{ toolCalls: [{ name: "old_track_parcel", args: { orderId: "A1003" } }] }, { text: "Delivered." }],
    );
    expect(results(events)).toMatchObject([{ name: "old_track_parcel", isError: false, result: { status: "delivered" } }]);
  });

  it("sends the headers a function reads from the environment; without them the server's tools are missing, with a warning", async () => {
    const env = { TRACKING_TOKEN: TOKEN };
    const secured: McpServerConfig = {
      name: "parcels",
      url: at("secured/headers/mcp"),
      headers: (vars) => ({ authorization: `Bearer ${String(vars.TRACKING_TOKEN)}` }),
    };
    const ok = await shippingTurn([secured], [{ toolCalls: [{ name: "parcels_report", args: { region: "south" } }] }, { text: "ok" }], {
      mcp: connections({ env }),
    });
    expect(results(ok.events)).toMatchObject([{ isError: false, result: { region: "south" } }]);
    expect((await stats("secured/headers")).authorization.every((value) => value === `Bearer ${TOKEN}`)).toBe(true);

    const refused = await shippingTurn(
      [
        { ...secured, headers: {} },
        { name: "down", url: "http://127.0.0.1:9/mcp" },
      ],
      [{ text: "I cannot track it now." }],
    );
    const warnings = refused.events.filter((e) => e.type === "warning");
    expect(warnings.map((w) => w.type === "warning" && w.code)).toEqual(["mcp_unavailable", "mcp_unavailable"]);
    expect(warnings.map((w) => w.type === "warning" && w.message).join("\n")).toMatch(/'parcels'.*401[\s\S]*'down'.*could not be reached/);
    expect(refused.model.requests[0]!.tools.map((t) => t.name)).toEqual(["transfer_to_triage"]);
    expect(refused.events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });

  it("waits for a person before a tool named in needsApproval, and calls it once approved", async () => {
    const mcp = connections();
    const server: McpServerConfig = { name: "parcels", url: at("stateful/approval/mcp"), needsApproval: ["cancel_shipment"] };
    const first = await shippingTurn(
      [server],
      [{ toolCalls: [{ id: "x", name: "parcels_cancel_shipment", args: { orderId: "A1002" } }] }],
      { mcp },
    );
    expect(first.events.find((e) => e.type === "approval-required")).toMatchObject({
      name: "parcels_cancel_shipment",
      args: { orderId: "A1002" },
    });
    expect((await stats("stateful/approval")).toolsCall).toBe(0);
    const resumed = await runScripted(
      network([server]),
      { kind: "resume", suspension: first.store.suspension!, decisions: [{ toolCallId: "x", approved: true }] },
      [{ text: "Cancelled." }],
      { store: first.store, mcp },
    );
    expect(results(resumed.events)).toEqual([
      { name: "parcels_cancel_shipment", result: "The shipment of order A1002 is cancelled.", isError: false },
    ]);
    expect((await stats("stateful/approval")).toolsCall).toBe(1);
  });

  it("asks the user what a server elicits (a form), and sends the answer back with the call: accept, then decline", async () => {
    const server: McpServerConfig = { name: "parcels", url: at("secured/elicit-form/mcp"), headers: { authorization: `Bearer ${TOKEN}` } };
    const ask = [{ toolCalls: [{ id: "h", name: "parcels_hold_at_depot", args: { orderId: "A1002" } }] }];
    const first = await shippingTurn([server], ask);
    expect(first.status).toBe("awaiting_input");
    expect(first.events.find((e) => e.type === "input-required")).toMatchObject({
      kind: "elicitation",
      mode: "form",
      server: "parcels",
      toolCallId: "h",
      message: "Hold the parcel of order A1002 at a depot for you to collect?",
      schema: { type: "object", properties: { confirm: { type: "boolean" }, depot: { enum: ["Leeds", "London", "Bristol"] } } },
    });
    const resumed = await runScripted(
      network([server]),
      { kind: "resume", suspension: first.suspension!, decisions: [{ toolCallId: "h", answer: { confirm: true, depot: "London" } }] },
      [{ text: "Held in London." }],
      { store: first.store, mcp: connections() },
    );
    expect(results(resumed.events)).toEqual([
      { name: "parcels_hold_at_depot", result: "The parcel of order A1002 is held at the London depot for collection.", isError: false },
    ]);

    const again = await shippingTurn([server], ask);
    const declined = await runScripted(
      network([server]),
      { kind: "resume", suspension: again.suspension!, decisions: [{ toolCallId: "h", approved: false }] },
      [{ text: "Not held." }],
      { store: again.store, mcp: connections() },
    );
    expect(results(declined.events)).toEqual([
      { name: "parcels_hold_at_depot", result: "The customer did not confirm: the parcel of order A1002 was not held.", isError: false },
    ]);
  });

  it("asks the user to open a server's https URL (URL mode), shows its host, and echoes the server's requestState", async () => {
    const server: McpServerConfig = { name: "parcels", url: at("secured/elicit-url/mcp"), headers: { authorization: `Bearer ${TOKEN}` } };
    const first = await shippingTurn([server], [{ toolCalls: [{ id: "v", name: "parcels_verify_identity", args: {} }] }]);
    expect(first.events.find((e) => e.type === "input-required")).toMatchObject({
      kind: "elicitation",
      mode: "url",
      url: "https://verify.carrier.example/start?case=42",
      host: "verify.carrier.example",
    });
    const resumed = await runScripted(
      network([server]),
      { kind: "resume", suspension: first.suspension!, decisions: [{ toolCallId: "v", approved: true }] },
      [{ text: "Verified." }],
      { store: first.store, mcp: connections() },
    );
    expect(results(resumed.events)).toEqual([
      { name: "parcels_verify_identity", result: "verification: accept, state state-verify-42", isError: false },
    ]);
    // A URL that is not https is never shown: the call fails, and the model reads why.
    const plain = await shippingTurn(
      [server],
      [{ toolCalls: [{ id: "p", name: "parcels_verify_identity", args: { url: "http://verify.carrier.example/" } }] }, { text: "ok" }],
    );
    expect(plain.status).toBe("completed");
    expect(results(plain.events)[0]).toMatchObject({ isError: true, result: expect.stringContaining("must be https") });
  });

  it("sends the answer back with the requestState of the request the user answered, in one call, the server asked once", async () => {
    const server: McpServerConfig = { name: "parcels", url: at("secured/offer-slot/mcp"), headers: { authorization: `Bearer ${TOKEN}` } };
    const first = await shippingTurn([server], [{ toolCalls: [{ id: "s", name: "parcels_offer_slot", args: {} }] }]);
    const asked = first.events.find((e) => e.type === "input-required");
    expect(asked).toMatchObject({ kind: "elicitation", mode: "form", message: expect.stringMatching(/^Take delivery slot \d+\?$/) });
    // What the call remembered (the server's answer) stays inside the run: clients see the request only.
    expect(asked).not.toHaveProperty("recorded");
    const slot = /slot (\d+)/.exec((asked as { message: string }).message)![1];
    const resumed = await runScripted(
      network([server]),
      { kind: "resume", suspension: first.suspension!, decisions: [{ toolCallId: "s", answer: { take: true } }] },
      [{ text: "Booked." }],
      { store: first.store, mcp: connections() },
    );
    expect(results(resumed.events)).toEqual([{ name: "parcels_offer_slot", result: `The user took slot-${slot}.`, isError: false }]);
    // Two calls in all: the one that asked, and the one with the answer and the asking call's requestState.
    expect((await stats("secured/offer-slot")).calls).toEqual([
      { tool: "offer_slot", inputResponses: null, requestState: null },
      { tool: "offer_slot", inputResponses: { slot: { action: "accept", content: { take: true } } }, requestState: `slot-${slot}` },
    ]);
  });

  it("asks a needsApproval function per call, with the server's tool name and the arguments", async () => {
    const asked: Array<{ tool: string; args: Record<string, unknown> }> = [];
    const server: McpServerConfig = {
      name: "parcels",
      url: at("stateful/approve-fn/mcp"),
      needsApproval: (call) => {
        asked.push(call);
        return call.args.region === "south";
      },
    };
    const { events } = await shippingTurn(
      [server],
      [
        {
          toolCalls: [
            { id: "n", name: "parcels_report", args: { region: "north" } },
            { id: "s", name: "parcels_report", args: { region: "south" } },
          ],
        },
      ],
    );
    expect(asked).toEqual([
      { tool: "report", args: { region: "north" } },
      { tool: "report", args: { region: "south" } },
    ]);
    expect(events.filter((e) => e.type === "approval-required").map((e) => e.type === "approval-required" && e.toolCallId)).toEqual(["s"]);
    expect(results(events)).toMatchObject([{ name: "parcels_report", isError: false, result: { region: "north" } }]);
  });
});
