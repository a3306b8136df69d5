/**
 * A remote A2A agent inside the Worker (workerd, Node compatibility off in its wrangler.toml):
 * the conversation's Durable Object hands over to it, streams its answer, keeps its context for
 * the next message, and gives the conversation back when it fails; its bearer token, a secret,
 * reaches no event, stored row, replay or log even when the remote echoes it.
 */
import { describe, expect, it } from "vitest";
import { captureLogs, conversationSurfaces } from "../support/surfaces.ts";
import { call, chat, scenario, stored } from "../support/worker.ts";

const transfer = { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: '{"reason":"billing"}' }] };
const said = (events: Array<{ type: string; delta?: string }>) => events.map((e) => (e.type === "text-delta" ? e.delta : "")).join("");

describe("a remote agent in the Worker", () => {
  it("holds the conversation across messages in one remote context, and its token is redacted everywhere", async () => {
    const logs = captureLogs();
    const s = await scenario([transfer]);
    const first = await chat(s.conversationId, s.tag("whoami, billing?"));
    expect(first.find((e) => e.type === "handoff")).toMatchObject({ kind: "transfer", from: "triage", to: "billing" });
    // The remote was sent the token (it echoes it) and the echo is redacted.
    expect(said(first)).toBe("You called with [redacted].");
    expect(first.at(-1)).toMatchObject({ type: "done", status: "completed", agent: "billing" });
    const second = await chat(s.conversationId, "and my last invoice?");
    expect(said(second)).toBe('Billing here: you said "and my last invoice?".');
    const conversation = await stored(s.conversationId);
    expect(conversation.activeAgent).toBe("billing");
    // The remote hop is a span of its own in the turn's trace, naming where it went.
    const trace = (await (await call(`/v1/conversations/${s.conversationId}/turns/1/trace`)).json()) as {
      spans: Array<{ name: string; attributes: Record<string, unknown> }>;
    };
    expect(trace.spans.find((span) => span.name === "remote agent billing (call 1)")?.attributes).toMatchObject({
      "gen_ai.system": "a2a",
      "a2a.remote.url": expect.stringMatching(/\/\.well-known\/agent-card\.json$/),
    });
    logs.stop();
    for (const text of [JSON.stringify(first), ...(await conversationSurfaces(s.conversationId)), logs.lines.join("\n")])
      expect(text).not.toContain("3c9f-secret");
  });

  it("gives the conversation back to triage when the remote fails, and triage answers in the same turn", async () => {
    const s = await scenario([transfer, { text: "Billing is down; I can help with anything else." }]);
    const events = await chat(s.conversationId, s.tag("this will fail"));
    expect(events.find((e) => e.type === "warning")).toMatchObject({ code: "remote_failed" });
    expect(events.filter((e) => e.type === "handoff").map((e) => e.kind)).toEqual(["transfer", "hand-back"]);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed", agent: "triage" });
    expect((await stored(s.conversationId)).activeAgent).toBe("triage");
  });
});
