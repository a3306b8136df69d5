/**
 * Stored rows are read through their schemas (src/conversation/storage/row-schemas.ts, stored-state.ts): a row written
 * today reads back as it was written, a row that does not fit is an error naming the row and the key (never a wrong value
 * passed on), and what an earlier release stored is read in today's form.
 */
import { describe, expect, it } from "vitest";
import { MessageSchema, readRow, StoredEventSchema, TraceSchema } from "../../../src/conversation/storage/row-schemas.ts";
import {
  readHandoffRow,
  readRunState,
  readStateRow,
  type RunStateRow,
  type StateRow,
  writeRunState,
  writeStateRow,
} from "../../../src/conversation/storage/stored-state.ts";
import { backgroundStatus, turnStatus } from "../../../src/conversation/storage/run-accounts.ts";
import { newHolding } from "../../../src/runtime/holding.ts";
import { TURN_START } from "../../../src/runtime/turn-progress.ts";

const row: StateRow = {
  conversationId: "c1",
  holding: { ...newHolding("billing"), handoffCount: 1, context: { orderId: "A1001" } },
  owner: "user-1",
  createdAt: 1,
  title: "Refund",
};

const wait: RunStateRow = {
  suspension: {
    assistant: { role: "assistant", agent: "billing", content: null, toolCalls: [{ id: "t1", name: "refund", arguments: "{}" }] },
    results: [null],
    pending: [{ kind: "approval", toolCallId: "t1", name: "refund", args: { amount: 5 }, agent: "billing", message: "Refund $5?" }],
    progress: { ...TURN_START, stepIndex: 1 },
    trailing: [],
  },
  asked: 0,
};

describe("the state row", () => {
  it("reads back what was written", () => {
    expect(readStateRow(writeStateRow(row))).toEqual(row);
  });

  it("that lacks a field its reader relies on is an error naming the row and the key", () => {
    const noAgent = JSON.parse(writeStateRow(row));
    noAgent.activeAgent = 7;
    expect(() => readStateRow(JSON.stringify(noAgent))).toThrow(/stored state row's holding does not fit[\s\S]*activeAgent/);
  });
});

describe("a run's state (the turn's own wait among them)", () => {
  it("reads back what was written, its wait whole", () => {
    expect(readRunState(writeRunState(wait))).toEqual(wait);
  });

  it("that does not fit is an error naming the row and the key: a request of no kind this release knows", () => {
    const stored = JSON.parse(writeRunState(wait));
    stored.suspension.pending[0].kind = "pick-a-date";
    expect(() => readRunState(JSON.stringify(stored))).toThrow(/stored run's state does not fit[\s\S]*suspension\.pending\[0\]/);
    const noUsage = JSON.parse(writeRunState(wait));
    delete noUsage.suspension.progress.usage;
    expect(() => readRunState(JSON.stringify(noUsage))).toThrow(/suspension\.progress\.usage/);
  });

  it("moved from a state row of version 1 is upgraded as it was there: a request without a kind was an approval", () => {
    const { kind: _kind, ...untyped } = wait.suspension!.pending[0]!;
    const stored = { v: 1, suspension: { ...wait.suspension, pending: [untyped] }, asked: 0 };
    expect(readRunState(JSON.stringify(stored)).suspension?.pending[0]?.kind).toBe("approval");
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

describe("a run's stored status", () => {
  it("reads each status the turns and background runs are written with; any other is an error naming the row", () => {
    for (const status of ["running", "completed", "awaiting_approval", "awaiting_human", "failed", "cancelled", "rewound"] as const)
      expect(turnStatus(status)).toBe(status);
    for (const status of ["running", "completed", "awaiting_input", "failed", "interrupted"] as const)
      expect(backgroundStatus(status)).toBe(status);
    expect(() => turnStatus("interrupted")).toThrow(/A stored turn's status does not fit its schema/);
    expect(() => backgroundStatus("rewound")).toThrow(/A stored background run's status does not fit its schema/);
  });
});
