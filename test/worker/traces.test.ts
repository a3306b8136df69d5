/**
 * A trace per turn, through the Worker: GET …/turns and GET …/turns/:n/trace after scripted turns —
 * a handoff, two transfers in one step, an approval across two requests (one trace for both legs),
 * a provider failure.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import type { Span, TurnTrace } from "../../src/traces/turn-trace.ts";
import { call, chat, scenario, stored } from "../support/worker.ts";
import { openSocket } from "../support/socket.ts";

const args = (value: unknown) => JSON.stringify(value);
const json = { "content-type": "application/json" };

async function trace(id: string, turn: number): Promise<TurnTrace> {
  const res = await call(`/v1/conversations/${id}/turns/${turn}/trace`);
  expect(res.status).toBe(200);
  return (await res.json()) as TurnTrace;
}

/** The spans as a tree of kinds and names, parents before children: what the trace says happened. */
function tree(spans: Span[], parentId: string | null = null): unknown[] {
  return spans.filter((s) => s.parentId === parentId).map((s) => [`${s.kind} ${s.name}`, ...tree(spans, s.id)]);
}

describe("a turn's trace", () => {
  it("shows each agent's tenure, its model calls and tools, and the handoff between them", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: args({ reason: "a charge" }) }] },
      { toolCalls: [{ id: "l", name: "lookup_order", arguments: args({ orderId: "A1001" }) }] },
      { text: "Charged twice: I see it." },
      { text: "Anything else?" },
    ]);
    const log = vi.spyOn(console, "log");
    const error = vi.spyOn(console, "error");
    await chat(s.conversationId, s.tag("charged twice"));
    const { turn, traceId, spans } = await trace(s.conversationId, 1);
    expect(turn).toBe(1);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(spans.every((sp) => /^[0-9a-f]{16}$/.test(sp.id))).toBe(true);
    expect(tree(spans)).toEqual([
      [
        "turn turn 1",
        ["agent triage", ["model model call 0"], ["handoff triage → billing"]],
        ["agent billing", ["model model call 1", ["tool lookup_order"]], ["model model call 2"]],
      ],
    ]);
    const model = spans.find((sp) => sp.name === "model call 2")!;
    expect(model.attributes).toMatchObject({ "gen_ai.response.finish_reasons": "stop", "gen_ai.usage.input_tokens": expect.any(Number) });
    expect(model.attributes.timeToFirstTokenMs).toBeGreaterThanOrEqual(0);
    expect(spans.every((sp) => sp.end !== null && sp.end >= sp.start)).toBe(true);
    expect(spans.find((sp) => sp.kind === "handoff")!.attributes).toEqual({
      from: "triage",
      to: "billing",
      reason: "a charge",
      kind: "transfer",
    });
    expect(spans[0]!.attributes.status).toBe("completed");

    // One JSON log line per handoff and per turn, with no content.
    const lines = log.mock.calls.map(([line]) => String(line)).filter((line) => line.includes(s.conversationId));
    log.mockRestore();
    // Nothing failed on the way, after the turn either (no collector is configured here: nothing is exported).
    expect(error.mock.calls).toEqual([]);
    error.mockRestore();
    expect(lines.map((line) => JSON.parse(line) as { event: string })).toEqual([
      { event: "handoff", conversationId: s.conversationId, turn: 1, kind: "transfer", from: "triage", to: "billing" },
      {
        event: "turn",
        conversationId: s.conversationId,
        turn: 1,
        status: "completed",
        agents: ["triage", "billing"],
        durationMs: expect.any(Number),
      },
    ]);
    // How long the leg ran (its trace's root span, start to end): three model calls over HTTP take some time, and not a minute.
    const { durationMs } = JSON.parse(lines.at(-1)!) as { durationMs: number };
    expect(durationMs).toBeGreaterThan(0);
    expect(durationMs).toBeLessThan(60_000);
    expect(durationMs).toBe(spans[0]!.end! - spans[0]!.start);

    // A second turn, held by billing throughout.
    await chat(s.conversationId, "thanks");
    const turns = (await (await call(`/v1/conversations/${s.conversationId}/turns`)).json()) as Array<{
      turn: number;
      status: string;
      handoffs: unknown[];
      usage: { modelCalls: number };
    }>;
    expect(turns).toMatchObject([
      {
        turn: 1,
        status: "completed",
        agents: ["triage", "billing"],
        handoffs: [{ from: "triage", to: "billing" }],
        usage: { modelCalls: 3, toolCalls: 1 },
      },
      { turn: 2, status: "completed", agents: ["billing"], handoffs: [], usage: { modelCalls: 1 } },
    ]);
  });

  it("keeps a refused handoff, with why, beside the one taken", async () => {
    const s = await scenario([
      {
        toolCalls: [
          { id: "a", name: "transfer_to_billing", arguments: args({ reason: "charge" }) },
          { id: "b", name: "transfer_to_shipping", arguments: args({ reason: "parcel" }) },
        ],
      },
      { text: "Billing here." },
    ]);
    await chat(s.conversationId, s.tag("both"));
    const { spans } = await trace(s.conversationId, 1);
    expect(spans.filter((sp) => sp.kind === "handoff").map((sp) => sp.name)).toEqual(["triage → billing"]);
    const refused = spans.filter((sp) => sp.kind === "refused-handoff");
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      name: "transfer_to_shipping",
      attributes: { reason: expect.stringContaining("Only one transfer per step") },
    });
  });

  it("spans both legs of a turn that waited for an approval, the wait included", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: args({ reason: "refund" }) }] },
      { toolCalls: [{ id: "r", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "Refunded." },
    ]);
    await chat(s.conversationId, s.tag("refund it"));
    const waiting = await trace(s.conversationId, 1);
    const log = vi.spyOn(console, "log");
    expect(waiting.spans.find((sp) => sp.kind === "request")).toMatchObject({ end: null, name: "approval for refund" });
    const res = await call(`/v1/conversations/${s.conversationId}/approvals`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ decisions: [{ toolCallId: "r", approved: true }] }),
    });
    await res.text();
    const lines = log.mock.calls.map(([line]) => String(line)).filter((line) => line.includes(s.conversationId));
    log.mockRestore();
    // The resumed leg's line: the whole turn's holders, each once in a row (the resumed leg is a new tenure span).
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ event: "turn", status: "completed", agents: ["triage", "billing"] });
    const { spans, traceId } = await trace(s.conversationId, 1);
    expect(traceId).toBe(waiting.traceId);
    const approval = spans.find((sp) => sp.kind === "request")!;
    expect(approval.end).not.toBeNull();
    expect(approval.attributes).toMatchObject({ approved: true, "gen_ai.tool.call.id": "r", "handoff.request.kind": "approval" });
    expect(spans.find((sp) => sp.kind === "tool" && sp.name === "refund")!.attributes).toMatchObject({ error: false });
    expect(spans.filter((sp) => sp.kind === "turn")).toHaveLength(1);
    expect(spans.filter((sp) => sp.kind === "model").map((sp) => sp.name)).toEqual(["model call 0", "model call 1", "model call 2"]);
  });

  it("logs each handoff once, in the leg that made it, over a turn of three legs", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: args({ reason: "refund" }) }] },
      { toolCalls: [{ id: "r1", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 10 }) }] },
      { toolCalls: [{ id: "r2", name: "refund", arguments: args({ orderId: "A1002", amountUsd: 5 }) }] },
      { text: "Both refunded." },
    ]);
    const log = vi.spyOn(console, "log");
    await chat(s.conversationId, s.tag("two refunds"));
    for (const toolCallId of ["r1", "r2"]) {
      const res = await call(`/v1/conversations/${s.conversationId}/approvals`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ decisions: [{ toolCallId, approved: true }] }),
      });
      await res.text();
    }
    const lines = log.mock.calls
      .map(([line]) => String(line))
      .filter((line) => line.includes(s.conversationId))
      .map((line) => JSON.parse(line) as { event: string; status?: string });
    log.mockRestore();
    expect(lines.filter((l) => l.event === "turn").map((l) => l.status)).toEqual(["awaiting_approval", "awaiting_approval", "completed"]);
    expect(lines.filter((l) => l.event === "handoff")).toEqual([
      { event: "handoff", conversationId: s.conversationId, turn: 1, kind: "transfer", from: "triage", to: "billing" },
    ]);
  });

  it("records a provider failure on the turn, and answers 404 for a turn with no trace", async () => {
    const s = await scenario([{ status: 500, error: { message: "down" } }]);
    await chat(s.conversationId, s.tag("hi"));
    const { spans } = await trace(s.conversationId, 1);
    expect(spans[0]!.attributes).toMatchObject({ status: "failed", error: expect.stringMatching(/^model_/) });
    const none = await call(`/v1/conversations/${s.conversationId}/turns/7/trace`);
    expect([none.status, await none.json()]).toEqual([
      404,
      { error: { code: "turn_not_found", message: "No trace of turn 7: only the latest turns keep theirs (turns 1 to 1 exist)." } },
    ]);
    expect((await call(`/v1/conversations/${s.conversationId}/turns/zero/trace`)).status).toBe(400);
  });

  /** Three turns each ending with its trace, `kept` traces kept (TRACE_TURNS): which turns' traces read back, and the rows. */
  async function keptOfThree(kept: number): Promise<[Array<number | undefined>, number]> {
    const id = `traces-${crypto.randomUUID()}`;
    return runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(id, "triage", "grant");
      for (let turn = 1; turn <= 3; turn++) {
        store.beginTurn(`message ${turn}`);
        store.commitStep({ messages: [{ role: "user", content: `message ${turn}` }] }, []);
        store.endTurn({ status: "completed" }, [], { turn, traceId: "0".repeat(32), spans: [] }, kept);
      }
      const rows = state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM traces").one().n;
      return [[1, 2, 3].map((turn) => store.traces.read(turn)?.turn), rows];
    });
  }

  it("is kept for the latest turns only, one row per turn", async () => {
    expect(await keptOfThree(2)).toEqual([[undefined, 2, 3], 2]);
  });

  it("is kept for no turn, and no row written, with TRACE_TURNS=0", async () => {
    expect(await keptOfThree(0)).toEqual([[undefined, undefined, undefined], 0]);
  });

  it("makes a turn started with a traceparent header the child of that span; a malformed one is ignored", async () => {
    const s = await scenario([{ text: "one" }, { text: "two" }]);
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const send = (message: string, headers: Record<string, string>) =>
      call(`/v1/conversations/${s.conversationId}/messages`, {
        method: "POST",
        headers: { ...json, ...headers },
        body: JSON.stringify({ message }),
      });
    await (await send(s.tag("first"), { traceparent })).text();
    const first = await trace(s.conversationId, 1);
    expect(first.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(first.spans.find((sp) => sp.kind === "turn")!.parentId).toBe("00f067aa0ba902b7");
    await (await send("second", { traceparent: "00-nothex-00f067aa0ba902b7-01" })).text();
    const second = await trace(s.conversationId, 2);
    expect(second.traceId).not.toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(second.spans.find((sp) => sp.kind === "turn")!.parentId).toBeNull();
  });

  it("makes each socket turn a trace of its own: the upgrade's traceparent is no turn's parent, a frame's own is its turn's", async () => {
    const s = await scenario([{ text: "one" }, { text: "two" }, { text: "three" }]);
    await (
      await call(`/v1/conversations/${s.conversationId}/messages`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({ message: s.tag("first") }),
      })
    ).text();
    const upgrade = `00-${"a".repeat(32)}-${"b".repeat(16)}-01`;
    const after = (await stored(s.conversationId)).lastEventId;
    const socket = await openSocket(s.conversationId, `?after=${after}`, { traceparent: upgrade });
    const turnEnd = (n: number) =>
      socket.until((f) => f.type === "done" && socket.frames.filter((g) => g.type === "done").length >= n, `turn ${n}'s end`);
    socket.send({ type: "message", message: "second" });
    await turnEnd(1);
    socket.send({ type: "message", message: "third", traceparent: `00-${"c".repeat(32)}-${"d".repeat(16)}-01` });
    await turnEnd(2);
    socket.ws.close();
    const [second, third] = [await trace(s.conversationId, 2), await trace(s.conversationId, 3)];
    expect(second.traceId).not.toBe("a".repeat(32));
    expect(second.spans.find((sp) => sp.kind === "turn")!.parentId).toBeNull();
    expect(third.traceId).toBe("c".repeat(32));
    expect(third.spans.find((sp) => sp.kind === "turn")!.parentId).toBe("d".repeat(16));
  });
});
