/**
 * Traces exported as OTLP/HTTP JSON after each turn (this project's Worker has a collector
 * configured that answers 429 to the first export): retried, with the configured header, the
 * GenAI attributes and the span tree; the header's value, a secret, appears nowhere else.
 */
import { describe, expect, inject, it } from "vitest";
import { call, chat, scenario } from "../support/worker.ts";

type Attribute = { key: string; value: Record<string, unknown> };
type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: Attribute[] };
type Export = { body: { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> } | null; headers: Record<string, string> };

const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value && Object.values(value)[0];
};

async function exports(): Promise<Export[]> {
  for (let i = 0; i < 100; i++) {
    const received = (await (await fetch(`${inject("fakeOpenAIUrl")}/otlp/busy-collector`)).json()) as Export[];
    if (received.some((e) => e.body !== null)) return received;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("no trace arrived at the collector");
}

describe("OTLP export", () => {
  it("sends the turn's trace after a 429, with the header, GenAI attributes and the span tree", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "a charge" }) }] },
      { toolCalls: [{ id: "l", name: "lookup_order", arguments: JSON.stringify({ orderId: "A1001" }) }] },
      { text: "I see the double charge." },
    ]);
    const events = await chat(s.conversationId, s.tag("charged twice"));
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });

    const received = await exports();
    expect(received[0]!.body).toBeNull(); // the 429
    const sent = received.find((e) => e.body !== null)!;
    expect(sent.headers["x-collector-key"]).toBe("otlp secret-value-123");
    const spans = sent.body!.resourceSpans[0]!.scopeSpans[0]!.spans;
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    expect(spans.every((span) => span.parentSpanId === undefined || byId.has(span.parentSpanId))).toBe(true);
    const agents = spans.filter((span) => attr(span, "gen_ai.operation.name") === "invoke_agent");
    expect(agents.map((span) => attr(span, "gen_ai.agent.name"))).toEqual(["triage", "billing"]);
    const tool = spans.find((span) => attr(span, "gen_ai.operation.name") === "execute_tool")!;
    expect([attr(tool, "gen_ai.tool.name"), attr(tool, "gen_ai.tool.call.id")]).toEqual(["lookup_order", "l"]);
    expect(attr(byId.get(tool.parentSpanId!)!, "gen_ai.operation.name")).toBe("chat");
    const chats = spans.filter((span) => attr(span, "gen_ai.operation.name") === "chat");
    expect(chats).toHaveLength(3);
    expect(chats.every((span) => span.kind === 3 && attr(span, "gen_ai.usage.input_tokens") !== undefined)).toBe(true);
    const handoff = spans.find((span) => attr(span, "handoff.span.kind") === "handoff")!;
    expect([attr(handoff, "handoff.from"), attr(handoff, "handoff.to")]).toEqual(["triage", "billing"]);
    expect(spans.every((span) => attr(span, "gen_ai.conversation.id") === s.conversationId)).toBe(true);

    // The header value is a secret: it is in no response of the API.
    const view = await (await call(`/v1/conversations/${s.conversationId}/turns/1/trace`)).text();
    expect(view).not.toContain("secret-value-123");
  });
});
