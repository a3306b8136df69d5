/**
 * What an MCP tool costs over the same tool defined locally: turns of one tool call and a final
 * answer, run by the loop in Node with a scripted model, alternating between an agent whose
 * `track_parcel` is a local tool and one that reaches the same tool on the MCP test server
 * (official server package, stateful Streamable HTTP over loopback) through `McpConnections`.
 * Also counts the `tools/list` requests one conversation makes over 20 turns (target: one).
 *
 *   node bench/mcp.ts [-- --turns 200]
 */
import * as z from "zod";
import { McpConnections } from "../src/mcp/index.ts";
import { Agent, Network, tool } from "../src/runtime/index.ts";
import { MemoryStore, runScripted } from "../src/testing/index.ts";
import { startMcpTestServer } from "../test/node/mcp-test-server.ts";
import { median } from "./loop-overhead.ts";

const localTrack = tool({
  name: "tracking_track_parcel",
  description: "Where a parcel is.",
  parameters: z.object({ orderId: z.string() }),
  execute: ({ orderId }) => ({
    orderId,
    carrier: "ParcelPost",
    status: "shipped",
    latestScans: ["Out for delivery"],
    expectedDelivery: "today",
  }),
});

const script = () => [{ toolCalls: [{ name: "tracking_track_parcel", args: { orderId: "A1001" } }] }, { text: "On its way." }];

export async function mcpRows(turns = 200): Promise<string[]> {
  const server = await startMcpTestServer();
  const mcp = new McpConnections();
  const remote = new Network(
    new Agent({ name: "shipping", instructions: "x", mcpServers: [{ name: "tracking", url: `${server.url}/stateful/bench/mcp` }] }),
    {
      defaultModel: "m",
    },
  );
  const local = new Network(new Agent({ name: "shipping", instructions: "x", tools: [localTrack] }), { defaultModel: "m" });
  const times = { local: [] as number[], remote: [] as number[] };
  const stores = { local: new MemoryStore("shipping"), remote: new MemoryStore("shipping") };
  try {
    for (let i = 0; i <= turns; i++) {
      for (const side of ["local", "remote"] as const) {
        const start = performance.now();
        const turn = await runScripted(side === "local" ? local : remote, `turn ${i}`, script(), { store: stores[side], mcp });
        const ms = performance.now() - start;
        if (turn.events.at(-1)?.type !== "done") throw new Error(`a ${side} turn failed: ${JSON.stringify(turn.events.at(-1))}`);
        // The first turn opens the session and lists the tools: reported apart.
        if (i > 0) times[side].push(ms);
      }
    }
    // A fresh conversation's 20 turns, on a server path of their own.
    const counted = new Network(
      new Agent({ name: "shipping", instructions: "x", mcpServers: [{ name: "tracking", url: `${server.url}/stateful/twenty/mcp` }] }),
      {
        defaultModel: "m",
      },
    );
    const fresh = new McpConnections();
    const store = new MemoryStore("shipping");
    for (let i = 0; i < 20; i++) await runScripted(counted, `turn ${i}`, script(), { store, mcp: fresh });
    await fresh.close();
    const stats = (await (await fetch(`${server.url}/__mcp/stats`)).json()) as Record<string, { toolsList: number; initialize: number }>;
    const twenty = stats["/stateful/twenty"]!;
    const ms = (v: number) => `${v.toFixed(3)} ms`;
    const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)]!;
    const [l, r] = [median(times.local), median(times.remote)];
    return [
      `An MCP tool call against the same tool defined locally: ${turns} turns each (a call, then an answer), alternating, in Node; MCP server over loopback`,
      "",
      "| | local tool | MCP tool | added by MCP |",
      "|---|---:|---:|---:|",
      `| turn, median | ${ms(l)} | ${ms(r)} | ${ms(r - l)} (${(r / l).toFixed(1)}×) |`,
      `| turn, p95 | ${ms(p95(times.local))} | ${ms(p95(times.remote))} | ${ms(p95(times.remote) - p95(times.local))} |`,
      "",
      `\`tools/list\` requests over 20 turns of one conversation: ${twenty.toolsList} (target: 1); sessions opened: ${twenty.initialize}.`,
    ];
  } finally {
    await mcp.close();
    await server.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log((await mcpRows(Number(process.argv[process.argv.indexOf("--turns") + 1]) || 200)).join("\n"));
  process.exit(0);
}
