/**
 * An MCP server's header value written in the code, not taken from an environment variable: the
 * conversation learns it from its network and redacts it on every path through the Durable Object
 * — events, the stored history, replays, UI messages, traces, what the provider is sent, logs —
 * even when the server echoes it back in a tool result.
 */
import { describe, expect, it } from "vitest";
import { captureLogs, conversationSurfaces } from "../support/surfaces.ts";
import { chat, scenario } from "../support/worker.ts";

describe("an MCP header value written in code", () => {
  it("never leaves the Durable Object, even when the server echoes it", async () => {
    const logs = captureLogs();
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: "{}" }] },
      { toolCalls: [{ id: "w", name: "tracking_whoami", arguments: "{}" }] },
      { text: "Done." },
    ]);
    const events = await chat(s.conversationId, s.tag("which credentials does tracking see?"));
    logs.stop();
    // The server did get the header (it answered), and what it echoed is redacted.
    expect(events.find((e) => e.type === "tool-result" && e.name === "tracking_whoami")).toMatchObject({
      isError: false,
      result: "You called with: [redacted]",
    });
    const surfaces = [
      JSON.stringify(events),
      ...(await conversationSurfaces(s.conversationId)),
      JSON.stringify((await s.sent()).requests),
      logs.lines.join("\n"),
    ];
    for (const text of surfaces) expect(text).not.toContain("5f2c9a7e");
  });
});
