/** MCP tool names as the model sees them, and a result as the model reads it: pure rules, no server. */
import { describe, expect, it } from "vitest";
import { mcpResultValue } from "../../src/runtime/tools/mcp-tools.ts";
import { Agent, mcpToolName, Network } from "../../src/runtime/index.ts";
import { noMcpClient } from "../../src/mcp/tool-lists.ts";
import { runScripted } from "../../src/testing/index.ts";

describe("MCP tool names", () => {
  it("fold to [a-zA-Z0-9_-] within 64 characters, and take _2, _3 when the name is taken", () => {
    expect(mcpToolName("tracking", "track_parcel", new Set())).toBe("tracking_track_parcel");
    expect(mcpToolName("crm.eu", "find contact/by-email", new Set())).toBe("crm_eu_find_contact_by-email");
    expect(mcpToolName("süd", "größe", new Set())).toBe("sud_gro_e");
    const long = mcpToolName("server", "x".repeat(100), new Set());
    expect(long).toHaveLength(64);
    const taken = new Set([long]);
    const second = mcpToolName("server", "x".repeat(100), taken);
    expect([second.length, second.endsWith("_2")]).toEqual([64, true]);
    expect(mcpToolName("a", "b", new Set(["a_b", "a_b_2"]))).toBe("a_b_3");
  });
});

describe("an MCP result as the model reads it", () => {
  it("is the structured content when there is some, else the blocks in lines; isError throws its text", () => {
    expect(mcpResultValue({ content: [{ type: "text", text: "{}" }], structuredContent: { n: 1 } })).toEqual({ n: 1 });
    expect(
      mcpResultValue({
        content: [
          { type: "text", text: "one" },
          { type: "audio", mimeType: "audio/wav", data: "AAAA" },
          { type: "resource", resource: { uri: "file:///a.txt", text: "body" } },
          { type: "resource", resource: { uri: "file:///b.bin" } },
          { type: "elicitation", anything: true },
        ],
      }),
    ).toBe("one\n[audio audio/wav, 3 bytes]\n[resource file:///a.txt]\nbody\n[resource file:///b.bin]\n[elicitation content]");
    expect(() => mcpResultValue({ content: [{ type: "text", text: "no such order" }], isError: true })).toThrow("no such order");
    expect(() => mcpResultValue({ isError: true })).toThrow("the server reported an error without a message");
    expect(mcpResultValue({})).toBe("");
  });
});

describe("a Worker given no MCP client", () => {
  it("runs an agent that names an MCP server: the server is a warning saying what to add, the turn completes", async () => {
    const agent = new Agent({
      name: "support",
      instructions: "You help.",
      mcpServers: [{ name: "tracking", url: "https://tracking.example/mcp" }],
    });
    const { events, outcome, model } = await runScripted(
      new Network(agent, { defaultModel: "m" }),
      "where is my parcel?",
      [{ text: "I cannot reach tracking now." }],
      { mcp: noMcpClient },
    );
    expect(outcome).toEqual({ status: "completed" });
    expect(events.find((e) => e.type === "warning")).toMatchObject({
      code: "mcp_unavailable",
      message: expect.stringContaining('give createHandoffWorker `mcp: mcpClient()` (import { mcpClient } from "handoff-runtime/mcp")'),
    });
    expect(model.requests[0]!.tools.map((t) => t.name)).toEqual([]);
  });
});
