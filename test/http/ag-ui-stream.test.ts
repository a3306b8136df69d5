/**
 * A turn's events as AG-UI events (`AgUiEncoder`), each sequence checked by the official client's
 * own reading of them (`HttpAgent`: its SSE parser and the verifier it applies to every run): the ends a
 * live test cannot make on demand (a cancelled turn, a failed one, a stream that breaks off or
 * ends without its turn's end), a person's messages, and decisions that leave calls waiting.
 */
import { describe, expect, it } from "vitest";
import { type BaseEvent, HttpAgent } from "@ag-ui/client";
import { AgUiEncoder } from "../../src/wire/ag-ui-stream.ts";
import { encodeSse, encodeTurn, type StoredEvent } from "../../src/wire/index.ts";

const run = { threadId: "t1", runId: "r1", isPerson: (name: string) => name === "desk" };

/**
 * The AG-UI events a turn's stream becomes, as the official client reads them: an `HttpAgent` whose
 * fetch answers with the encoded stream, so its SSE parser and its verifier see every event.
 */
async function agUi(body: ReadableStream<Uint8Array>, encoder = new AgUiEncoder(run)): Promise<BaseEvent[]> {
  return clientRead(encodeTurn(body, encoder));
}

async function clientRead(stream: ReadableStream<Uint8Array> | string): Promise<BaseEvent[]> {
  const events: BaseEvent[] = [];
  const agent = new HttpAgent({
    url: "https://worker.test/v1/ag-ui",
    threadId: run.threadId,
    fetch: async () => new Response(stream, { headers: { "content-type": "text/event-stream" } }),
  });
  // A run that ends in RUN_ERROR rejects; the events up to it are what is checked.
  await agent.runAgent({ runId: run.runId }, { onEvent: ({ event }) => void events.push(event) }).catch(() => {});
  return events;
}

const streamOf = (events: StoredEvent[]) => new Response(events.map(encodeSse).join("")).body!;

const start: StoredEvent[] = [
  { id: 1, type: "run-start", conversationId: "t1", agent: "triage", model: "m" },
  { id: 2, type: "step-start", stepIndex: 0, agent: "triage" },
  { id: 3, type: "text-delta", delta: "Let me" },
];

describe("a turn as AG-UI events", () => {
  it("closes the open text and step before a cancelled run's RUN_FINISHED", async () => {
    const events = await agUi(
      streamOf([...start, { id: 4, type: "done", status: "cancelled", text: "Let me", agent: "triage", handoffs: [], handoffCount: 0 }]),
    );
    expect(events.map((e) => e.type)).toEqual([
      "RUN_STARTED",
      "STATE_SNAPSHOT",
      "STEP_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "STEP_FINISHED",
      "RUN_FINISHED",
    ]);
    expect(events.at(-1)).toMatchObject({ threadId: "t1", runId: "r1", outcome: { type: "cancelled" } });
    expect(events[3]).toMatchObject({ role: "assistant", name: "triage" });
  });

  it("ends a failed turn with RUN_ERROR carrying the API's code", async () => {
    const events = await agUi(streamOf([...start, { id: 4, type: "error", code: "model_unavailable", message: "The model is down." }]));
    expect(events.at(-1)).toEqual({ type: "RUN_ERROR", code: "model_unavailable", message: "The model is down." });
  });

  it("says RUN_ERROR stream_interrupted when the conversation's stream breaks off, or ends before its turn did", async () => {
    let pulls = 0;
    const broken = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulls++ === 0) controller.enqueue(new TextEncoder().encode(start.map(encodeSse).join("")));
        else controller.error(new Error("the object went away"));
      },
    });
    expect((await agUi(broken)).at(-1)).toMatchObject({ type: "RUN_ERROR", code: "stream_interrupted", message: "the object went away" });
    expect((await agUi(streamOf(start))).at(-1)).toMatchObject({ type: "RUN_ERROR", code: "stream_interrupted" });
  });

  it("draws a handoff to a person as an activity, the person as the holder, and their messages named after them", async () => {
    const events = await agUi(
      streamOf([
        ...start,
        { id: 4, type: "step-finish", stepIndex: 0, finishReason: "tool_calls" },
        { id: 5, type: "handoff", kind: "transfer", from: "triage", to: "desk", toolCallId: "c1", stepIndex: 0 },
        { id: 6, type: "operator-message", agent: "desk", text: "Ada here.", operator: "Ada" },
        { id: 7, type: "done", status: "awaiting_human", text: "", agent: "desk", handoffs: [], handoffCount: 1 },
      ]),
    );
    expect(events.find((e) => e.type === "ACTIVITY_SNAPSHOT")).toMatchObject({
      activityType: "handoff",
      content: { kind: "transfer", from: "triage", to: "desk" },
    });
    expect(events.filter((e) => e.type === "STATE_SNAPSHOT").at(-1)).toMatchObject({
      snapshot: { holder: { name: "desk", kind: "person" } },
    });
    expect(events.filter((e) => e.type === "TEXT_MESSAGE_START").at(-1)).toMatchObject({ name: "Ada" });
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" } });
  });

  it("follows a person: only their message it had not sent, then the run finishes and the rest of the stream is not read", async () => {
    let cancelled = false;
    const held: StoredEvent[] = [
      ...start,
      { id: 4, type: "done", status: "awaiting_human", text: "", agent: "desk", handoffs: [], handoffCount: 1 },
      { id: 5, type: "operator-message", agent: "desk", text: "Seen already.", operator: "Ada" },
      { id: 6, type: "operator-message", agent: "desk", text: "New.", operator: "Ada" },
    ];
    const open = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode(held.map(encodeSse).join(""))),
      cancel: () => void (cancelled = true),
    });
    const events = await agUi(open, new AgUiEncoder({ ...run, follow: { after: 5 } }));
    expect(events.map((e) => e.type)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "RUN_FINISHED",
    ]);
    expect(events[2]).toMatchObject({ delta: "New." });
    expect(cancelled).toBe(true);
  });

  it("ends a run whose decisions leave calls waiting on the interrupts still open", async () => {
    const encoder = new AgUiEncoder(run);
    const waiting = {
      kind: "approval" as const,
      toolCallId: "c2",
      name: "refund",
      agent: "billing",
      args: { orderId: "A1" },
      expiresAt: "2026-12-05T00:00:00Z",
    };
    const events = await clientRead(encoder.interrupted([waiting]));
    expect(events.map((e) => e.type)).toEqual(["RUN_STARTED", "RUN_FINISHED"]);
    expect(events[1]).toMatchObject({
      type: "RUN_FINISHED",
      outcome: {
        type: "interrupt",
        interrupts: [{ id: "c2", toolCallId: "c2", reason: "tool_approval", expiresAt: "2026-12-05T00:00:00Z" }],
      },
    });
  });

  it("shows a delegation as AG-UI's subagent events: started under the call, its text and calls attributed to it, finished with its answer", async () => {
    const nested = (id: number, event: Record<string, unknown>, path = ["fc"]): StoredEvent =>
      ({ id, type: "delegated", path, agent: path.length > 1 ? "clerk" : "fraud-check", event }) as unknown as StoredEvent;
    const events = await agUi(
      streamOf([
        { id: 1, type: "run-start", conversationId: "t1", agent: "billing", model: "m" },
        { id: 2, type: "step-start", stepIndex: 0, agent: "billing" },
        { id: 3, type: "tool-call", toolCallId: "fc", name: "ask_fraud_check", args: { request: "check" }, plan: "tool" },
        nested(4, { type: "run-start", conversationId: "t1/fraud-check", agent: "fraud-check", model: "m" }),
        nested(5, { type: "tool-call", toolCallId: "lk", name: "lookup_order", args: { orderId: "A1" }, plan: "tool" }),
        nested(6, { type: "tool-result", toolCallId: "lk", name: "lookup_order", result: "found", isError: false }),
        nested(7, { type: "run-start", conversationId: "t1/fraud-check/clerk", agent: "clerk", model: "m" }, ["fc", "ck"]),
        nested(8, { type: "done", status: "completed", text: "Filed.", agent: "clerk", handoffs: [], handoffCount: 0 }, ["fc", "ck"]),
        nested(9, { type: "text-delta", delta: "Not fraud." }),
        nested(10, { type: "done", status: "completed", text: "Not fraud.", agent: "fraud-check", handoffs: [], handoffCount: 0 }),
        { id: 11, type: "tool-result", toolCallId: "fc", name: "ask_fraud_check", result: "Not fraud.", isError: false },
        { id: 12, type: "step-finish", stepIndex: 0, finishReason: "tool_calls" },
        { id: 13, type: "done", status: "completed", text: "", agent: "billing", handoffs: [], handoffCount: 0 },
      ]),
    );
    const sub = events.filter((e) => "subagentRunId" in e) as Array<BaseEvent & Record<string, unknown>>;
    expect(sub[0]).toMatchObject({ type: "SUBAGENT_STARTED", subagentRunId: "fc", name: "fraud-check", parentToolCallId: "fc" });
    expect(sub.find((e) => e.type === "TOOL_CALL_RESULT")).toMatchObject({ toolCallId: "lk", subagentRunId: "fc" });
    expect(sub.find((e) => e.subagentRunId === "fc/ck")).toMatchObject({
      type: "SUBAGENT_STARTED",
      parentToolCallId: "ck",
      parentSubagentRunId: "fc",
    });
    expect(sub.filter((e) => e.type === "SUBAGENT_FINISHED").map((e) => [e.subagentRunId, e.result])).toEqual([
      ["fc/ck", "Filed."],
      ["fc", "Not fraud."],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" } });
  });
});
