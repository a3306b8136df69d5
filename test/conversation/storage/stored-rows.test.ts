/**
 * Stored rows are read through their schemas (src/conversation/storage/row-schemas.ts, stored-state.ts): a row written
 * today reads back as it was written, a row that does not fit is an error naming the row and the key (never a wrong value
 * passed on), and what an earlier release stored is read in today's form.
 */
import { describe, expect, it } from "vitest";
import { MessageSchema, readRow, StoredEventSchema, TraceSchema } from "../../../src/conversation/storage/row-schemas.ts";
import { readHandoffRow, readStateRow, type StoredState, writeStateRow } from "../../../src/conversation/storage/stored-state.ts";
import { newHolding } from "../../../src/runtime/holding.ts";
import { TURN_START } from "../../../src/runtime/turn-progress.ts";

const waiting: StoredState = {
  conversationId: "c1",
  holding: { ...newHolding("billing"), handoffCount: 1, context: { orderId: "A1001" } },
  suspension: {
    assistant: { role: "assistant", agent: "billing", content: null, toolCalls: [{ id: "t1", name: "refund", arguments: "{}" }] },
    results: [null],
    pending: [{ kind: "approval", toolCallId: "t1", name: "refund", args: { amount: 5 }, agent: "billing", message: "Refund $5?" }],
    progress: { ...TURN_START, stepIndex: 1 },
    trailing: [],
  },
  decisions: [{ toolCallId: "t1", approved: false, reason: "no" }],
  owner: "user-1",
  createdAt: 1,
  title: "Refund",
};

describe("the state row", () => {
  it("reads back what was written, its wait whole", () => {
    expect(readStateRow(writeStateRow(waiting))).toEqual(waiting);
  });

  it("that does not fit is an error naming the row and the key: a request of no kind this release knows", () => {
    const row = JSON.parse(writeStateRow(waiting));
    row.suspension.pending[0].kind = "pick-a-date";
    expect(() => readStateRow(JSON.stringify(row))).toThrow(/stored state row does not fit[\s\S]*suspension\.pending\[0\]/);
  });

  it("that lacks a field its reader relies on is an error, not a value passed on", () => {
    const row = JSON.parse(writeStateRow(waiting));
    delete row.suspension.progress.usage;
    expect(() => readStateRow(JSON.stringify(row))).toThrow(/suspension\.progress\.usage/);
    const noAgent = JSON.parse(writeStateRow(waiting));
    noAgent.activeAgent = 7;
    expect(() => readStateRow(JSON.stringify(noAgent))).toThrow(/state row's holding[\s\S]*activeAgent/);
  });
});

describe("other rows", () => {
  it("a message that does not fit names its key", () => {
    expect(() => readRow(MessageSchema, JSON.stringify({ role: "tool", toolCallId: "t1", name: "x", content: "y" }), "message")).toThrow(
      /stored message does not fit[\s\S]*isError/,
    );
  });

  it("an event is checked against its own type's schema", () => {
    const delta = { id: 3, type: "text-delta", delta: "Hi" };
    expect(StoredEventSchema.parse(delta)).toEqual(delta);
    expect(StoredEventSchema.safeParse({ ...delta, delta: 7 }).success).toBe(false);
    expect(StoredEventSchema.safeParse({ id: 4, type: "no-such-event" }).success).toBe(false);
  });

  it("a trace stored when requests' spans were named `approval` reads them as `request`", () => {
    const span = { id: "s1", parentId: null, kind: "approval", name: "refund", start: 1, end: 2, attributes: {} };
    const trace = readRow(TraceSchema, JSON.stringify({ turn: 1, traceId: "t", spans: [span] }), "trace");
    expect(trace.spans[0]?.kind).toBe("request");
  });

  it("a handoff record of version 1 without a kind is a transfer; one that does not fit is an error", () => {
    expect(readHandoffRow(JSON.stringify({ from: "triage", to: "billing", toolCallId: "t1", reason: "refund" }))).toEqual({
      kind: "transfer",
      from: "triage",
      to: "billing",
      toolCallId: "t1",
      reason: "refund",
      stepIndex: 0,
    });
    expect(() => readHandoffRow(JSON.stringify({ v: 2, kind: "transfer", from: "triage" }))).toThrow(/handoff record[\s\S]*to/);
  });
});
