/**
 * Traces exported as OTLP/HTTP JSON after each turn (this project's Worker has a collector
 * configured that answers 429 to the first export, captures content and retries the provider), read back as a
 * collector would: decoded by OpenTelemetry's own protos in the receiver. The header's value, a
 * secret, appears nowhere else; nor do the configured secrets in captured content.
 */
import { describe, expect, it } from "vitest";
import { collected, exportedSpans, operation, TRACED_TURN } from "../support/otlp.ts";
import { call, chat, scenario } from "../support/worker.ts";
import { parseSse } from "../support/sse.ts";

type TraceJson = { spans: Array<{ kind: string; attributes: Record<string, unknown> }> };
const COLLECTOR = "busy-collector";

describe("OTLP export", () => {
  it("sends the turn's trace after a 429, with the header, GenAI attributes, the span tree and the content", async () => {
    const s = await scenario(TRACED_TURN);
    // The message quotes a configured secret: captured content is redacted like everything else.
    const events = await chat(s.conversationId, s.tag("charged twice, key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"));
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });

    const spans = await exportedSpans(COLLECTOR, s.conversationId, (found) => found.some((span) => span.name === "turn 1"));
    const received = await collected(COLLECTOR);
    expect(received[0]!.body).toBeNull(); // the 429
    expect(received.find((r) => r.decoded)!.headers["x-collector-key"]).toBe("otlp secret-value-123");

    const byId = new Map(spans.map((span) => [span.spanId, span]));
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    const roots = spans.filter((span) => span.parentSpanId === undefined);
    expect(roots.map((span) => span.name)).toEqual(["turn 1"]);
    expect(spans.every((span) => span.parentSpanId === undefined || byId.has(span.parentSpanId))).toBe(true);
    expect(operation(spans, "invoke_agent").map((span) => span.attributes["gen_ai.agent.name"])).toEqual(["triage", "billing"]);
    const [tool] = operation(spans, "execute_tool");
    expect([tool!.attributes["gen_ai.tool.name"], tool!.attributes["gen_ai.tool.call.id"]]).toEqual(["lookup_order", "l"]);
    expect(byId.get(tool!.parentSpanId!)!.attributes["gen_ai.operation.name"]).toBe("chat");
    const chats = operation(spans, "chat");
    expect(chats).toHaveLength(3);
    expect(chats.every((span) => span.kind === 3 && typeof span.attributes["gen_ai.usage.input_tokens"] === "number")).toBe(true);
    expect(chats.map((span) => span.attributes["gen_ai.response.finish_reasons"])).toEqual(["tool_calls", "tool_calls", "stop"]);
    const handoff = spans.find((span) => span.attributes["handoff.span.kind"] === "handoff")!;
    expect([handoff.attributes["handoff.from"], handoff.attributes["handoff.to"], handoff.attributes.reason]).toEqual([
      "triage",
      "billing",
      "a charge",
    ]);
    expect(Number(roots[0]!.endTimeUnixNano) >= Number(roots[0]!.startTimeUnixNano)).toBe(true);

    // Content, asked for with OTEL_CAPTURE_CONTENT: the message, each answer, each call's arguments and result.
    const input = JSON.parse(String(roots[0]!.attributes["gen_ai.input.messages"]));
    expect(input).toEqual([{ role: "user", parts: [{ type: "text", content: expect.stringContaining("charged twice") }] }]);
    expect(JSON.stringify(input)).not.toContain("AIzaSyD-9tSrke72PouQMnMX");
    expect(JSON.parse(String(chats[2]!.attributes["gen_ai.output.messages"]))).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "I see the double charge." }], finish_reason: "stop" },
    ]);
    expect(JSON.parse(String(chats[1]!.attributes["gen_ai.output.messages"]))[0].parts).toEqual([
      { type: "tool_call", id: "l", name: "lookup_order", arguments: { orderId: "A1001" } },
    ]);
    expect(JSON.parse(String(tool!.attributes["gen_ai.tool.call.arguments"]))).toEqual({ orderId: "A1001" });
    expect(JSON.parse(String(tool!.attributes["gen_ai.tool.call.result"]))).toMatchObject({ orderId: "A1001" });

    // Content is exported, never stored: the trace the API serves has none; the header's secret is in no response.
    const view = await (await call(`/v1/conversations/${s.conversationId}/turns/1/trace`)).text();
    expect(view).not.toContain("secret-value-123");
    expect(view).not.toContain("gen_ai.input.messages");
    expect(view).not.toContain("double charge");
  });

  it("sends a background delegation's spans once it has run, under the call that started it, in the trace of the turn that made it", async () => {
    const s = await scenario((tag) => [
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "lost" }) }] },
      {
        toolCalls: [{ id: "bg", name: "search_for_parcel", arguments: JSON.stringify({ request: tag("Find the parcel of order A1002") }) }],
      },
      { text: "Started." },
      { text: "At the Arlington depot." },
      { text: "Found: it is at the Arlington depot." },
    ]);
    await chat(s.conversationId, s.tag("my parcel is lost"));
    // The alarm runs the search by itself; its spans are sent once it has ended.
    const isRun = (span: { name: string }) => span.name === "invoke_agent delegated parcel-search";
    const spans = await exportedSpans(COLLECTOR, s.conversationId, (found) => found.some(isRun));
    const started = operation(spans, "execute_tool").find((span) => span.attributes["gen_ai.tool.call.id"] === "bg")!;
    const delegated = spans.find(isRun)!;
    expect(delegated.parentSpanId).toBe(started.spanId);
    expect(delegated.traceId).toBe(started.traceId);
    expect(spans.filter(isRun)).toHaveLength(1);
    expect(spans.find((span) => span.parentSpanId === delegated.spanId)?.name).toBe("chat parcel-search step 0");
    // The turn's trace, as the API serves it, shows the run under the call too.
    const trace = (await (await call(`/v1/conversations/${s.conversationId}/turns/1/trace`)).json()) as {
      spans: Array<{ id: string; parentId: string | null; kind: string; name: string; attributes: Record<string, unknown> }>;
    };
    const tool = trace.spans.find((span) => span.kind === "tool" && span.attributes["gen_ai.tool.call.id"] === "bg")!;
    expect(trace.spans.find((span) => span.name === "delegated parcel-search")).toMatchObject({ kind: "agent", parentId: tool.id });
  });

  it("sends each span of a turn that waited for an approval once, across its two legs, in one trace", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: "{}" }] },
      { toolCalls: [{ id: "ref", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "Refunded." },
    ]);
    expect((await chat(s.conversationId, s.tag("refund me"))).at(-1)).toMatchObject({ status: "awaiting_approval" });
    const first = await exportedSpans(COLLECTOR, s.conversationId, (found) => found.some((span) => span.name === "chat model call 1"));
    // The turn, the approval and the call waiting for it are held back for the leg that finishes them.
    expect(first.map((span) => span.name)).not.toContain("turn 1");
    expect(first.filter((span) => span.attributes["handoff.span.kind"] === "request")).toEqual([]);

    const res = await call(`/v1/conversations/${s.conversationId}/approvals`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decisions: [{ toolCallId: "ref", approved: true }] }),
    });
    expect(parseSse(await res.text()).at(-1)).toMatchObject({ type: "done", status: "completed" });
    const spans = await exportedSpans(COLLECTOR, s.conversationId, (found) => found.some((span) => span.name === "turn 1"));
    expect(new Set(spans.map((span) => span.spanId)).size).toBe(spans.length);
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    const approval = spans.filter((span) => span.attributes["handoff.span.kind"] === "request");
    expect(approval.map((span) => span.attributes.approved)).toEqual([true]);
    const refund = operation(spans, "execute_tool").filter((span) => span.attributes["gen_ai.tool.name"] === "refund");
    expect(refund.map((span) => span.attributes.error)).toEqual([false]);
    expect(spans.find((span) => span.name === "turn 1")!.attributes.status).toBe("completed");
    expect(operation(spans, "chat")).toHaveLength(3);
  });

  it("says how many times the provider's client retried a model call, on success and on failure", async () => {
    const busy = { status: 503, error: { message: "overloaded" }, headers: { "retry-after": "0" } };
    const s = await scenario([busy, { text: "Hello." }]);
    await chat(s.conversationId, s.tag("hi"));
    const trace = (await (await call(`/v1/conversations/${s.conversationId}/turns/1/trace`)).json()) as TraceJson;
    expect(trace.spans.find((span) => span.kind === "model")!.attributes).toMatchObject({
      retries: 1,
      "gen_ai.response.finish_reasons": "stop",
    });

    const down = await scenario([busy, busy, busy]);
    expect((await chat(down.conversationId, down.tag("hi"))).at(-1)).toMatchObject({ type: "error" });
    const failed = (await (await call(`/v1/conversations/${down.conversationId}/turns/1/trace`)).json()) as TraceJson;
    expect(failed.spans.find((span) => span.kind === "model")!.attributes).toMatchObject({
      retries: 2,
      error: expect.stringMatching(/^model_/),
    });
    expect(failed.spans.find((span) => span.kind === "turn")!.attributes).toMatchObject({ status: "failed" });
  });

  it("counts each conversation's own retries while two turns run at once through the isolate's one provider client", async () => {
    const busy = { status: 503, error: { message: "overloaded" }, headers: { "retry-after": "0" } };
    const retried = await scenario([busy, { text: "Hello." }]);
    const calm = await scenario([{ text: "Hi." }, { text: "Hi again." }]);
    const model = async (conversationId: string, turn: number) => {
      const trace = (await (await call(`/v1/conversations/${conversationId}/turns/${turn}/trace`)).json()) as TraceJson;
      return trace.spans.find((span) => span.kind === "model")!.attributes;
    };
    // The calm conversation's turns run while the other waits to retry: none of that retry is theirs.
    const [first] = await Promise.all([chat(retried.conversationId, retried.tag("hi")), chat(calm.conversationId, calm.tag("hi"))]);
    expect(first.at(-1)).toMatchObject({ type: "done", status: "completed" });
    await chat(calm.conversationId, calm.tag("and again"));
    expect(await model(retried.conversationId, 1)).toMatchObject({ retries: 1 });
    expect(await model(calm.conversationId, 1)).not.toHaveProperty("retries");
    expect(await model(calm.conversationId, 2)).not.toHaveProperty("retries");
  });
});
