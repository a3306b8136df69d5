import { env } from "cloudflare:workers";
import { ROW_VERSION } from "../../src/conversation/storage/stored-state.ts";
import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createSupportNetwork } from "../../src/agents/network.ts";
import { newConversation, type RunEvent, runTurn } from "../../src/runtime/index.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import type { ScriptedAnswer } from "../node/fake-openai-server.ts";
import { ScriptedModel } from "../support/scripted-model.ts";
import { parseSse, readSse, type ReceivedEvent } from "../support/sse.ts";
import { call, chat, postMessage, scenario, stored } from "../support/worker.ts";

const args = (value: unknown) => JSON.stringify(value);

function approve(conversationId: string, decisions: unknown[]): Promise<Response> {
  return call(`/v1/conversations/${conversationId}/approvals`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ decisions }),
  });
}

async function errorCode(res: Response): Promise<[number, string]> {
  return [res.status, ((await res.json()) as { error: { code: string } }).error.code];
}

/** The whole refusal: status, code, the message that says what to fix, and its details. */
async function refusal(res: Response): Promise<{ status: number; code: string; message: string; details?: unknown }> {
  const { error } = (await res.json()) as { error: { code: string; message: string; details?: unknown } };
  return { status: res.status, ...error };
}

/** Waits until the conversation's latest turn is no longer running. */
async function settled(conversationId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const res = await call(`/v1/conversations/${conversationId}`);
    if (res.status === 200 && ((await res.json()) as { status: string }).status !== "running") return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the turn did not end");
}

/** A scenario whose first turn suspends in billing on a refund of order A1001. */
async function suspendedRefund(extra: ScriptedAnswer[] = []) {
  const s = await scenario([
    { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: args({ reason: "double charge" }) }] },
    {
      toolCalls: [
        { id: "look", name: "lookup_order", arguments: args({ orderId: "A1001" }) },
        { id: "ref", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 129 }) },
      ],
    },
    ...extra,
  ]);
  const events = await chat(s.conversationId, s.tag("charged twice for A1001"));
  return { s, events };
}

describe("approvals across requests", () => {
  it("suspends on refund, stores the pending call, and resumes as the same agent when approved", async () => {
    const { s, events } = await suspendedRefund([{ text: "Refunded 129 USD." }]);
    expect(events.find((e) => e.type === "approval-required")).toMatchObject({
      toolCallId: "ref",
      name: "refund",
      args: { orderId: "A1001", amountUsd: 129 },
      agent: "billing",
    });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "awaiting_approval", agent: "billing" });
    expect(events.filter((e) => e.type === "tool-result").map((e) => e.type === "tool-result" && e.name)).toEqual([
      "transfer_to_billing",
      "lookup_order",
    ]);

    const waiting = await stored(s.conversationId);
    expect(waiting).toMatchObject({
      status: "awaiting_approval",
      activeAgent: "billing",
      pendingApprovals: [{ toolCallId: "ref", agent: "billing" }],
    });
    expect(waiting.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);

    const res = await approve(s.conversationId, [{ toolCallId: "ref", approved: true }]);
    expect(res.status).toBe(200);
    const resumed = parseSse(await res.text());
    expect(resumed[0]).toMatchObject({ type: "run-start", agent: "billing", resumed: true });
    expect(resumed[0]!.id).toBe(events.at(-1)!.id + 1);
    expect(resumed.find((e) => e.type === "tool-result")).toMatchObject({
      toolCallId: "ref",
      isError: false,
      result: { orderId: "A1001", refundedUsd: 129, status: "refunded" },
    });
    expect(resumed.at(-1)).toMatchObject({
      type: "done",
      status: "completed",
      text: "Refunded 129 USD.",
      handoffs: [{ to: "billing" }],
      handoffCount: 1,
    });

    const { requests } = await s.sent();
    expect(requests[2]!.messages[0]!.content).toMatch(/^You are the billing specialist/);
    expect(requests[2]!.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["t", "look", "ref"]);
    const after = await stored(s.conversationId);
    expect(after).toMatchObject({ status: "completed", pendingApprovals: [] });
    // The decisions belonged to the suspension they decided: the turn's own run (the ledger's root) keeps neither once the
    // turn resumed, and the state row never held them.
    await runInDurableObject(env.CONVERSATIONS.getByName(s.conversationId), async (_instance, state) => {
      const sql = state.storage.sql;
      const root = sql.exec<{ mode: string; state: string; decisions: string | null }>(
        `SELECT mode, state, decisions FROM runs WHERE path = ''`,
      );
      expect(root.toArray().map((row) => ({ ...row, state: JSON.parse(row.state) }))).toEqual([
        { mode: "turn", state: { v: ROW_VERSION, suspension: null, asked: 0 }, decisions: null },
      ]);
      expect(JSON.parse(sql.exec<{ data: string }>(`SELECT data FROM state`).one().data)).not.toHaveProperty("suspension");
    });
  });

  it("records a decision as the calling agent's when the same step handed the conversation on", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: args({ reason: "double charge" }) }] },
      {
        toolCalls: [
          { id: "ref", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 129 }) },
          { id: "t2", name: "transfer_to_shipping", arguments: args({ reason: "and the parcel" }) },
        ],
      },
      { text: "Shipping here." },
    ]);
    await chat(s.conversationId, s.tag("charged twice, and where is my parcel"));
    const waiting = await stored(s.conversationId);
    expect(waiting).toMatchObject({ status: "awaiting_approval", pendingApprovals: [{ toolCallId: "ref", agent: "billing" }] });
    await (await approve(s.conversationId, [{ toolCallId: "ref", approved: false, reason: "no" }])).text();
    const { activeAgent, activity } = await stored(s.conversationId);
    expect(activeAgent).toBe("shipping");
    expect(activity).toContainEqual(expect.objectContaining({ kind: "denied", agent: "billing", toolCallId: "ref", tool: "refund" }));
  });

  it("answers a denial with an error result carrying the reason", async () => {
    const { s } = await suspendedRefund([{ text: "Understood, no refund." }]);
    const res = await approve(s.conversationId, [{ toolCallId: "ref", approved: false, reason: "already refunded by phone" }]);
    const resumed = parseSse(await res.text());
    expect(resumed.find((e) => e.type === "tool-result")).toMatchObject({
      isError: true,
      result: "A person declined this call: already refunded by phone",
    });
    const { requests } = await s.sent();
    expect(requests[2]!.messages.at(-1)).toMatchObject({
      role: "tool",
      tool_call_id: "ref",
      content: "A person declined this call: already refunded by phone",
    });
    // Declined by a requester no one signed in as: a denial, not an expiry (which is what no one decided).
    expect((await stored(s.conversationId)).activity).toContainEqual(
      expect.objectContaining({ kind: "denied", agent: "billing", toolCallId: "ref", tool: "refund" }),
    );
  });

  it("refuses a new message while approval is pending, and bad decisions, with clear codes", async () => {
    const { s } = await suspendedRefund([{ text: "done" }]);
    const blocked = await postMessage(s.conversationId, "hello?");
    expect(blocked.status).toBe(409);
    expect(await blocked.json()).toMatchObject({
      error: {
        code: "request_pending",
        // The code's name before it was named for requests of every kind, for clients that read it.
        alias: "approval_pending",
        message:
          "Tool calls are waiting for the user (approvals or answers): decide them first. Decide or answer them with POST /v1/conversations/:id/decisions.",
        details: { pending: ["ref"] },
      },
    });
    expect(await refusal(await approve(s.conversationId, [{ toolCallId: "nope", approved: true }]))).toEqual({
      status: 404,
      code: "request_not_found",
      alias: "approval_not_found",
      message: "No pending request 'nope'.",
      details: { toolCallId: "nope", pending: ["ref"] },
    });
    // `look` ran in the step without asking: its result is in the suspended step, so it is decided.
    expect(await refusal(await approve(s.conversationId, [{ toolCallId: "look", approved: true }]))).toEqual({
      status: 409,
      code: "request_already_decided",
      alias: "approval_already_decided",
      message: "Tool call 'look' was already decided.",
      details: { toolCallId: "look" },
    });
    expect(await errorCode(await approve(s.conversationId, [{ toolCallId: "ref", approved: "yes" }]))).toEqual([400, "invalid_request"]);
    expect(await errorCode(await approve(s.conversationId, []))).toEqual([400, "invalid_request"]);

    await (await approve(s.conversationId, [{ toolCallId: "ref", approved: true }])).text();
    expect(await errorCode(await approve(s.conversationId, [{ toolCallId: "ref", approved: true }]))).toEqual([
      409,
      "request_already_decided",
    ]);
    expect(await refusal(await approve(s.conversationId, [{ toolCallId: "other", approved: true }]))).toEqual({
      status: 409,
      code: "no_pending_request",
      alias: "no_pending_approval",
      message: "Nothing in this conversation is waiting for an approval or an answer.",
    });
    expect(await errorCode(await approve("never-started", [{ toolCallId: "ref", approved: true }]))).toEqual([
      404,
      "conversation_not_found",
    ]);
    expect((await stored(s.conversationId)).messages.filter((m) => m.role === "tool")).toHaveLength(3);
  });
});

describe("two calls waiting in one step", () => {
  it("takes a decision for one with 202 and the other still pending, refuses it twice, and resumes once both are decided", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: args({ reason: "two charges" }) }] },
      {
        toolCalls: [
          { id: "r1", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 10 }) },
          { id: "r2", name: "refund", arguments: args({ orderId: "A1002", amountUsd: 20 }) },
        ],
      },
      { text: "One refunded, one not." },
    ]);
    await chat(s.conversationId, s.tag("refund both"));
    const first = await approve(s.conversationId, [{ toolCallId: "r1", approved: true }]);
    expect([first.status, await first.json()]).toEqual([202, { status: "awaiting_approval", pending: ["r2"] }]);
    // Decided in an earlier request, not yet run: still decided.
    expect(await refusal(await approve(s.conversationId, [{ toolCallId: "r1", approved: false }]))).toEqual({
      status: 409,
      code: "request_already_decided",
      alias: "approval_already_decided",
      message: "Tool call 'r1' was already decided.",
      details: { toolCallId: "r1" },
    });
    // The same answer again beside the one left is refused as well over HTTP (only the AI SDK route, whose client resends, drops it).
    expect(
      await refusal(
        await approve(s.conversationId, [
          { toolCallId: "r1", approved: true },
          { toolCallId: "r2", approved: true },
        ]),
      ),
    ).toMatchObject({ status: 409, code: "request_already_decided", details: { toolCallId: "r1" } });
    expect(await stored(s.conversationId)).toMatchObject({ status: "awaiting_approval" });
    expect((await s.sent()).requests).toHaveLength(2);

    const events = parseSse(
      await (await approve(s.conversationId, [{ toolCallId: "r2", approved: false, reason: "not this one" }])).text(),
    );
    expect(events.filter((e) => e.type === "tool-result").map((e) => [e.toolCallId, e.isError])).toEqual([
      ["r1", false],
      ["r2", true],
    ]);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed", text: "One refunded, one not." });
    expect((await s.sent()).requests).toHaveLength(3);
  });
});

describe("one run at a time", () => {
  it("answers 409 run_in_progress at once to a message or approval while a run is going, and loses nothing", async () => {
    const s = await scenario([{ text: "a long answer that takes its time", holdAfter: 2 }, { text: "second turn" }]);
    const first = await postMessage(s.conversationId, s.tag("first"));
    const reader = readSse(first.body!);
    expect((await reader.next()).value).toMatchObject({ type: "run-start" });

    expect(await errorCode(await postMessage(s.conversationId, "second"))).toEqual([409, "run_in_progress"]);
    expect(await errorCode(await approve(s.conversationId, [{ toolCallId: "x", approved: true }]))).toEqual([409, "run_in_progress"]);
    expect(await errorCode(await call(`/v1/conversations/${s.conversationId}`, { method: "DELETE" }))).toEqual([409, "run_in_progress"]);
    // The view says it runs, with no storage figures for a turn not ended; the turns list, with no end and no duration yet.
    expect(await stored(s.conversationId)).toMatchObject({ status: "running", lastTurnStorage: null });
    const turns = (await (await call(`/v1/conversations/${s.conversationId}/turns`)).json()) as object[];
    expect(turns.at(-1)).toMatchObject({ turn: 1, status: "running", endedAt: null, durationMs: null });

    await s.release();
    const rest: ReceivedEvent[] = [];
    for await (const event of reader) rest.push(event);
    expect(rest.at(-1)).toMatchObject({ type: "done", text: "a long answer that takes its time" });
    await chat(s.conversationId, "now the second");
    expect((await stored(s.conversationId)).messages.map((m) => m.content)).toEqual([
      s.tag("first"),
      "a long answer that takes its time",
      "now the second",
      "second turn",
    ]);
  });
});

describe("a client that drops", () => {
  it("does not stop the run; Last-Event-ID picks up exactly where it left off", async () => {
    const s = await scenario([
      {
        text: "Checking that order for you now.",
        holdAfter: 4,
        toolCalls: [{ id: "l", name: "lookup_order", arguments: args({ orderId: "A1002" }) }],
      },
      { text: "Order A1002 is processing." },
    ]);
    const res = await postMessage(s.conversationId, s.tag("where is A1002"));
    const seen: ReceivedEvent[] = [];
    for await (const event of readSse(res.body!)) {
      seen.push(event);
      if (event.type === "text-delta") break; // the client goes away mid-answer
    }
    // A client that stays connected from the start, for comparison.
    const connected = call(`/v1/conversations/${s.conversationId}/events?after=0`);
    await s.release();
    const full = parseSse(await (await connected).text());
    await settled(s.conversationId);

    const caughtUp = await call(`/v1/conversations/${s.conversationId}/events`, { headers: { "last-event-id": String(seen.at(-1)!.id) } });
    const rest = parseSse(await caughtUp.text());
    expect([...seen, ...rest]).toEqual(full);
    expect(full.at(-1)).toMatchObject({ type: "done", text: "Order A1002 is processing." });
    expect(rest[0]!.id).toBe(seen.at(-1)!.id + 1);
    expect((await stored(s.conversationId)).messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  it("replays a finished turn's events after ?after=, and rejects a bad cursor", async () => {
    const s = await scenario([{ text: "hello there" }]);
    const events = await chat(s.conversationId, s.tag("hi"));
    const replay = parseSse(await (await call(`/v1/conversations/${s.conversationId}/events?after=${events[2]!.id}`)).text());
    expect(replay).toEqual(events.slice(3));
    expect(await errorCode(await call(`/v1/conversations/${s.conversationId}/events?after=-1`))).toEqual([400, "invalid_request"]);
    expect(await refusal(await call(`/v1/conversations/nobody-here/events`))).toEqual({
      status: 404,
      code: "conversation_not_found",
      message: "No conversation 'nobody-here'. Create it with POST /v1/conversations.",
    });
  });
});

describe("crash consistency", () => {
  it("a failure between tool execution and commit leaves a valid history, and the next message works", async () => {
    const s = await scenario([{ text: "Back in business." }]);
    const stub = env.CONVERSATIONS.getByName(s.conversationId);
    const events: RunEvent[] = [];
    await runInDurableObject(stub, async (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(s.conversationId, "triage", "grant");
      store.beginTurn();
      const model = new ScriptedModel([
        { toolCalls: [{ id: "t", name: "transfer_to_billing" }] },
        { toolCalls: [{ id: "l", name: "lookup_order", args: { orderId: "A1001" } }] },
      ]);
      for await (const event of runTurn({
        conversationId: s.conversationId,
        network: createSupportNetwork(),
        model,
        conversation: newConversation("triage"),
        input: { kind: "message", text: s.tag("break it") },
        store: {
          commitStep: (commit) => {
            if (commit.messages.some((m) => m.role === "tool" && m.name === "lookup_order")) throw new Error("storage went away");
            store.commitStep(commit, []);
          },
        },
      })) {
        events.push(event);
      }
    });
    expect(events.find((e) => e.type === "tool-call" && e.name === "lookup_order")).toBeDefined();
    expect(events.at(-1)).toMatchObject({ type: "error", code: "internal_error" });
    await evictDurableObject(stub);

    const before = await stored(s.conversationId);
    expect(before).toMatchObject({ activeAgent: "billing", status: "failed" });
    expect(before.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    const next = await chat(s.conversationId, "are you there?");
    expect(next[0]).toMatchObject({ type: "run-start", agent: "billing" });
    const { requests } = await s.sent();
    expect(requests[0]!.messages.slice(1).map((m) => m.role)).toEqual(["user", "assistant", "tool", "user"]);
  });

  it("a reset mid-run records the turn as failed and the next message works from the last committed step", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: "{}" }] },
      { text: "This answer never finishes", holdAfter: 2 },
      { text: "Shipping, after the restart." },
    ]);
    const res = await postMessage(s.conversationId, s.tag("where is my parcel"));
    const seen: string[] = [];
    try {
      for await (const event of readSse(res.body!)) {
        seen.push(event.type);
        // The target is mid-answer (the provider holds the rest): reset every Durable Object.
        if (event.type === "text-delta") await abortAllDurableObjects();
      }
    } catch {
      // The stream breaks with the object; a client would reconnect with Last-Event-ID.
    }
    expect(seen).toContain("handoff");
    expect(seen.at(-1)).toBe("text-delta");
    await s.release();

    const after = await stored(s.conversationId);
    expect(after).toMatchObject({ activeAgent: "shipping", status: "failed" });
    expect(after.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    // A client reconnecting to the cut turn gets its end: one terminal error, past any lost id.
    const replay = parseSse(await (await call(`/v1/conversations/${s.conversationId}/events?after=0`)).text());
    expect(replay.filter((e) => e.type === "error" || e.type === "done")).toEqual([
      expect.objectContaining({ type: "error", code: "interrupted" }),
    ]);
    expect(replay.at(-1)!.id).toBeGreaterThan(100_000);
    const next = await chat(s.conversationId, "hello again");
    expect(next.at(-1)).toMatchObject({ type: "done", agent: "shipping", text: "Shipping, after the restart." });
    // What the recovery wrote is not the next turn's: it writes the rows any plain turn does.
    expect((await stored(s.conversationId)).lastTurnStorage?.rowsWritten).toBe(8);
  });

  it("an eviction between turns loses nothing: the next start reads the stored state back", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: "{}" }] },
      { text: "shipping" },
      { text: "shipping again" },
    ]);
    const first = await chat(s.conversationId, s.tag("my parcel"));
    await evictDurableObject(env.CONVERSATIONS.getByName(s.conversationId));
    const second = await chat(s.conversationId, "and the other one?");
    expect(second[0]).toMatchObject({ type: "run-start", agent: "shipping", id: first.at(-1)!.id + 1 });
    expect((await stored(s.conversationId)).messages).toHaveLength(6);
  });
});

describe("DELETE /v1/conversations/:id", () => {
  it("erases the conversation entirely", async () => {
    const s = await scenario([
      { toolCalls: [{ name: "transfer_to_billing", arguments: "{}" }] },
      { text: "billing" },
      { text: "fresh start" },
    ]);
    await chat(s.conversationId, s.tag("bill"));
    const res = await call(`/v1/conversations/${s.conversationId}`, { method: "DELETE" });
    expect(res.status).toBe(204);
    expect(await errorCode(await call(`/v1/conversations/${s.conversationId}`))).toEqual([404, "conversation_not_found"]);
    expect(await errorCode(await call(`/v1/conversations/${s.conversationId}`, { method: "DELETE" }))).toEqual([
      404,
      "conversation_not_found",
    ]);
    const events = await chat(s.conversationId, s.tag("hello"));
    expect(events[0]).toMatchObject({ type: "run-start", agent: "triage", id: 1 });
    expect((await stored(s.conversationId)).messages).toHaveLength(2);
  });
});

describe("storage", () => {
  it("writes the same rows for a turn late in a conversation as early on", async () => {
    const s = await scenario(Array.from({ length: 8 }, (_, i) => ({ text: `answer ${i}` })));
    const rows: number[] = [];
    for (let i = 0; i < 8; i++) {
      await chat(s.conversationId, i === 0 ? s.tag("start") : `message ${i}`);
      rows.push((await stored(s.conversationId)).lastTurnStorage!.rowsWritten);
    }
    // Exactly, so a row added to every turn shows here; the first turn also creates the conversation.
    expect(rows).toEqual([9, 8, 8, 8, 8, 8, 8, 8]);
  });

  it("reads what the conversation spent back from its turns once the object starts again", async () => {
    const s = await scenario([
      {
        toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: args({ reason: "a charge" }) }],
        usage: { promptTokens: 7, completionTokens: 2 },
      },
      {
        toolCalls: [{ id: "look", name: "lookup_order", arguments: args({ orderId: "A1001" }) }],
        usage: { promptTokens: 9, completionTokens: 1 },
      },
      { text: "one", usage: { promptTokens: 11, completionTokens: 3 } },
      { text: "two", usage: { promptTokens: 13, completionTokens: 5 } },
    ]);
    await chat(s.conversationId, s.tag("first"));
    await chat(s.conversationId, "second");
    const spent = { modelCalls: 4, inputTokens: 40, outputTokens: 11, toolCalls: 1 };
    expect((await stored(s.conversationId)).usage).toEqual(spent);
    await evictDurableObject(env.CONVERSATIONS.getByName(s.conversationId));
    expect((await stored(s.conversationId)).usage).toEqual(spent);
  });

  it("counts the bytes a turn writes (and no inbox rows with no inbox), and lists a failed turn with its error and how long it ran", async () => {
    const long = "z".repeat(6_000);
    const s = await scenario([{ text: "ok" }, { status: 400, error: { message: "bad request", type: "invalid_request_error" } }]);
    await chat(s.conversationId, s.tag(long));
    const lastTurnStorage = (await stored(s.conversationId)).lastTurnStorage!;
    // The message is written once with the turn (the history row; the turn's opening keeps it too), and the rest is small.
    expect(lastTurnStorage.bytesWritten).toBeGreaterThanOrEqual(2 * long.length);
    expect(lastTurnStorage.bytesWritten).toBeLessThan(3 * long.length);
    // No inbox is bound here, so the view counts no inbox rows (not `null`: the field is left out).
    expect(Object.keys(lastTurnStorage)).toEqual(["rowsWritten", "bytesWritten"]);
    expect((await chat(s.conversationId, "again")).at(-1)).toMatchObject({ type: "error" });
    const turns = (await (await call(`/v1/conversations/${s.conversationId}/turns`)).json()) as Array<{
      status: string;
      error: string | null;
      startedAt: number;
      endedAt: number;
      durationMs: number;
    }>;
    expect(turns.map((t) => [t.status, t.error])).toEqual([
      ["completed", null],
      ["failed", expect.stringMatching(/^model_/)],
    ]);
    for (const t of turns) expect(t.durationMs).toBe(t.endedAt - t.startedAt);
  });

  it("cuts an oversized tool output with a marker instead of failing the commit", async () => {
    const huge = "x".repeat(3 * 1024 * 1024);
    const s = await scenario([
      { toolCalls: [{ id: "big", name: "transfer_to_billing", arguments: args({ reason: huge }) }] },
      { text: "ok" },
    ]);
    const events = await chat(s.conversationId, s.tag("huge"));
    expect(events.at(-1)).toMatchObject({ type: "done" });
    const tool = (await stored(s.conversationId)).messages.find((m) => m.role === "tool")!;
    expect(tool.content.length).toBeLessThan(300 * 1024);
    expect(tool.content).toMatch(/\[truncated: \d+ more characters\]$/);
    // The stored events are cut the same way: the call's arguments (its JSON, as text) and the result it got.
    const replay = parseSse(await (await call(`/v1/conversations/${s.conversationId}/events?after=0`)).text());
    const called = replay.find((e) => e.type === "tool-call") as unknown as { args: unknown };
    expect(typeof called.args).toBe("string");
    const cutOff = JSON.stringify({ reason: huge }).length - 256 * 1024;
    expect(called.args as string).toMatch(new RegExp(`^\\{"reason":"x{1000}.*\\n\\[truncated: ${cutOff} more characters\\]$`, "s"));
    expect((called.args as string).length).toBeLessThan(300 * 1024);
    const result = replay.find((e) => e.type === "tool-result") as unknown as { result: unknown };
    expect(JSON.stringify(result.result).length).toBeLessThan(300 * 1024);
    // The transfer's reason is cut in every row that keeps it (the call in the history, the handoff, its event, the turn's end), and the turn is stored as done.
    const handoff = replay.find((e) => e.type === "handoff") as unknown as { reason: string };
    expect(handoff.reason).toMatch(/^x{1000}.*\n\[truncated: \d+ more characters\]$/s);
    expect(handoff.reason.length).toBeLessThan(300 * 1024);
    expect(replay.at(-1)).toMatchObject({ type: "done", status: "completed" });
    const view = await stored(s.conversationId);
    const transfer = view.messages.find((m) => m.role === "assistant") as unknown as { toolCalls: Array<{ arguments: string }> };
    expect(transfer.toolCalls[0]!.arguments.length).toBeLessThan(300 * 1024);
    expect(JSON.stringify(view.handoffs).length).toBeLessThan(300 * 1024);
  });
});

describe("replays of stored events", () => {
  it("replay the latest turn from the start once the conversation has had others", async () => {
    const s = await scenario([{ text: "first answer" }, { text: "second answer" }]);
    await chat(s.conversationId, s.tag("one"));
    const second = await chat(s.conversationId, "two");
    const replay = parseSse(await (await call(`/v1/conversations/${s.conversationId}/events?after=0`)).text());
    expect(replay.map((e) => e.id)).toEqual(second.map((e) => e.id));
  });

  it("give a reader who joins a resumed leg each event once: the turn's stored rows up to the leg, then the leg as it streams", async () => {
    const { s } = await suspendedRefund([
      { toolCalls: [{ id: "again", name: "lookup_order", arguments: args({ orderId: "A1001" }) }] },
      { text: "Refunded, and the order shows it.", holdAfter: 2 },
    ]);
    const resumed = await approve(s.conversationId, [{ toolCallId: "ref", approved: true }]);
    const reader = readSse(resumed.body!);
    // The leg has committed its refund and its lookup, and holds inside its last model call.
    for await (const event of reader) if (event.type === "text-delta") break;
    const joined = call(`/v1/conversations/${s.conversationId}/events?after=0`);
    await s.release();
    for await (const _ of reader);
    const ids = parseSse(await (await joined).text()).map((e) => e.id);
    expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
    const stored = parseSse(await (await call(`/v1/conversations/${s.conversationId}/events?after=0`)).text());
    expect(ids).toEqual(stored.map((e) => e.id));
  });
});

describe("events of a step that streamed more than a row holds", () => {
  it("are split across rows and replayed whole", async () => {
    const long = "0123456789abcdef".repeat(50_000); // 800 KB of text in 13 deltas of 64 KB
    const s = await scenario([{ text: long, chunkChars: 64 * 1024 }]);
    const events = await chat(s.conversationId, s.tag("talk a lot"));
    expect(events.at(-1)).toMatchObject({ type: "done" });
    const replay = parseSse(await (await call(`/v1/conversations/${s.conversationId}/events?after=0`)).text());
    expect(replay.map((e) => e.id)).toEqual(events.map((e) => e.id));
    expect(
      replay
        .filter((e) => e.type === "text-delta")
        .map((e) => (e.type === "text-delta" ? e.delta : ""))
        .join(""),
    ).toBe(long);
    await runInDurableObject(env.CONVERSATIONS.getByName(s.conversationId), (_instance, state) => {
      const rows = state.storage.sql.exec<{ size: number }>(`SELECT length(data) AS size FROM events`).toArray();
      expect(rows.length).toBeGreaterThan(2);
      // A row is closed before an event would take it past 512 KiB (its brackets aside): no delta of 64 KiB more.
      expect(Math.max(...rows.map((r) => r.size))).toBeLessThanOrEqual(512 * 1024 + 2);
    });
  });
});
