/**
 * MCP under `wrangler dev` (no nodejs_compat, the offline demo model): the demo's own tracking
 * server answers shipping's `tracking_track_parcel` with no network and is served at /mcp/tracking
 * for any MCP client; pointed at a real MCP server in Node (TRACKING_MCP_URL, with a bearer token),
 * the same turn reaches it over HTTP.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { MCP_TEST_TOKEN, startMcpTestServer } from "../node/mcp-test-server.ts";
import { chat, startWranglerDev } from "./wrangler-dev.ts";

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function persistTo(): string {
  const dir = mkdtempSync(join(tmpdir(), "handoff-mcp-"));
  dirs.push(dir);
  return dir;
}

describe("MCP under wrangler dev", () => {
  it("answers a delivery question with the demo's tracking MCP server, and serves that server at /mcp/tracking", async () => {
    const dev = await startWranglerDev({ persistTo: persistTo() });
    try {
      const events = await chat(dev.url, "mcp-demo", "Where is order A1002?");
      const tracked = events.find((e) => e.type === "tool-result" && e.name === "tracking_track_parcel");
      assert.deepEqual((tracked as { result?: { carrier?: string } } | undefined)?.result?.carrier, "ParcelPost");
      const done = events.at(-1) as { type: string; text?: string };
      assert.equal(done.type, "done");
      assert.match(done.text ?? "", /ParcelPost says: Label created/);

      const res = await fetch(`${dev.url}/mcp/tracking`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
      const body = await res.text();
      assert.equal(res.status, 200, body);
      assert.match(body, /"name":"track_parcel"/);
      assert.match(body, /"name":"cancel_shipment"/);
    } finally {
      await dev.stop();
    }
  });

  it("reaches a tracking MCP server of its own over HTTP, with the bearer token from a secret", async () => {
    const mcp = await startMcpTestServer();
    const dev = await startWranglerDev({
      persistTo: persistTo(),
      vars: { TRACKING_MCP_URL: `${mcp.url}/secured/e2e/mcp`, TRACKING_MCP_TOKEN: MCP_TEST_TOKEN },
    });
    try {
      const first = await chat(dev.url, "mcp-own", "Where is order A1001?");
      const tracked = first.find((e) => e.type === "tool-result" && e.name === "tracking_track_parcel") as
        | { result?: { status?: string } }
        | undefined;
      assert.equal(tracked?.result?.status, "shipped");
      await chat(dev.url, "mcp-own", "And where is order A1003?");
      const stats = (await (await fetch(`${mcp.url}/__mcp/stats`)).json()) as Record<
        string,
        { toolsList: number; toolsCall: number; authorization: string[] }
      >;
      const own = stats["/secured/e2e"]!;
      // Two turns, one listing: the second turn used the list the Durable Object kept.
      assert.deepEqual([own.toolsList, own.toolsCall], [1, 2]);
      assert.ok(own.authorization.every((value) => value === `Bearer ${MCP_TEST_TOKEN}`));
      const view = await (await fetch(`${dev.url}/v1/conversations/mcp-own`)).text();
      assert.ok(!view.includes("5f2c9a7e"), "the token is in no stored row");
    } finally {
      await dev.stop();
      await mcp.close();
    }
  });
});
