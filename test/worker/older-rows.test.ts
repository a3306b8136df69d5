/**
 * Conversations stored by earlier releases, read by this one: the state row without a caller
 * stack or agents' states and with a suspension whose progress was loose fields, a turn opening
 * without them either, and handoff records that said their kind by convention (no kind for a
 * transfer, `<id>:returned` for an on-answer return, `operator-<n>` for a person's hand back).
 * The one reader upgrades them: the view, the turns, the UI messages and a resumed approval work.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrate } from "../../src/conversation/storage/schema.ts";
import { ROW_VERSION } from "../../src/conversation/storage/stored-state.ts";
import { NO_USAGE } from "../../src/runtime/usage.ts";
import { parseSse } from "../support/sse.ts";
import { scenario } from "../support/scenario.ts";
import { call, chat, stored } from "../support/worker.ts";

const args = (value: unknown) => JSON.stringify(value);

/** The object's storage as a release before schema 18 left it (the turn's wait in the state row): its next start migrates it. */
async function storedBeforeSchema18(state: DurableObjectState): Promise<void> {
  await state.storage.deleteAll();
  migrate(state.storage.sql, 17);
}

describe("rows stored by earlier releases", () => {
  // A suspension's progress was loose fields, then one value (still in rows without a version).
  const progressForms = {
    loose: (transfer: object) => ({ stepIndex: 1, turnHandoffs: [transfer], agentSteps: 1, errorSteps: 0 }),
    "one value": (transfer: object) => ({
      progress: { handoffs: [transfer], agentSteps: 1, errorSteps: 0, stepIndex: 2, usage: NO_USAGE },
    }),
  };

  it.each(Object.keys(progressForms) as Array<keyof typeof progressForms>)(
    "are read in today's form, and a suspension stored then (progress as %s) resumes as its agent",
    async (form) => {
      const s = await scenario([{ text: "Refunded, and that is all." }]);
      const id = s.conversationId;
      const question = s.tag("refund my order");
      const refund = { id: "r", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 10 }) };
      const transfer = { from: "triage", to: "billing", toolCallId: "t", reason: "money", stepIndex: 0 };
      await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
        await storedBeforeSchema18(state);
        const sql = state.storage.sql;
        const messages = [
          { role: "user", content: "add 2 and 2" },
          { role: "assistant", agent: "triage", content: null, toolCalls: [{ id: "c", name: "transfer_to_calculator", arguments: "{}" }] },
          { role: "tool", toolCallId: "c", name: "transfer_to_calculator", content: "Transferred to 'calculator'.", isError: false },
          { role: "assistant", agent: "calculator", content: "4." },
          { role: "system", agent: "triage", content: "The person at 'support-desk' handed the conversation back to 'triage': all good" },
          { role: "user", content: question },
          { role: "assistant", agent: "triage", content: null, toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: "{}" }] },
          { role: "tool", toolCallId: "t", name: "transfer_to_billing", content: "Transferred to 'billing'. money", isError: false },
        ];
        for (const [i, m] of messages.entries())
          sql.exec(`INSERT INTO messages (turn, data) VALUES (?, ?)`, i < 5 ? 1 : 2, JSON.stringify(m));
        const records = [
          { turn: 1, data: { from: "triage", to: "calculator", toolCallId: "c", stepIndex: 0 } },
          { turn: 1, data: { from: "calculator", to: "triage", toolCallId: "c:returned", stepIndex: 1, kind: "return" } },
          { turn: 1, data: { from: "support-desk", to: "triage", toolCallId: "operator-9", reason: "all good", stepIndex: 0 } },
          { turn: 2, data: transfer },
        ];
        for (const r of records) sql.exec(`INSERT INTO handoffs (turn, data) VALUES (?, ?)`, r.turn, JSON.stringify(r.data));
        const opening = { message: question, activeAgent: "triage", handoffCount: 3, context: {} };
        sql.exec(`INSERT INTO turns (turn, status, started_at, ended_at) VALUES (1, 'completed', 1, 2)`);
        sql.exec(
          `INSERT INTO turns (turn, status, started_at, ended_at, opening) VALUES (2, 'awaiting_approval', 3, 4, ?)`,
          JSON.stringify(opening),
        );
        const suspension = {
          assistant: { role: "assistant", agent: "billing", content: null, toolCalls: [refund] },
          results: [null],
          pending: [{ toolCallId: "r", name: "refund", args: { orderId: "A1001", amountUsd: 10 }, agent: "billing" }],
          ...progressForms[form](transfer),
        };
        const row = { conversationId: id, activeAgent: "billing", handoffCount: 4, suspension, decisions: [], context: {} };
        sql.exec(`INSERT INTO state (id, data) VALUES (1, ?)`, JSON.stringify(row));
        // The turn's events as that release stored them: its handoff event in the record's old form, the row without a version.
        const streamed = [
          { id: 1, type: "run-start", conversationId: id, agent: "triage", model: "m" },
          { id: 2, type: "handoff", ...transfer },
        ];
        sql.exec(`INSERT INTO events (first_id, last_id, turn, data) VALUES (1, 2, 2, ?)`, JSON.stringify(streamed));
      });
      // The next start migrates what that release stored: the turn's wait moves to its row in the ledger.
      await evictDurableObject(env.CONVERSATIONS.getByName(id));

      const view = await stored(id);
      expect(view).toMatchObject({ activeAgent: "billing", handoffCount: 4, callers: [], pendingApprovals: [{ toolCallId: "r" }] });
      expect(view.handoffs).toEqual([
        { turn: 1, kind: "transfer", from: "triage", to: "calculator", toolCallId: "c", stepIndex: 0 },
        { turn: 1, kind: "return", mode: "on-answer", from: "calculator", to: "triage", openedBy: "c", stepIndex: 1 },
        { turn: 1, kind: "hand-back", from: "support-desk", to: "triage", note: "all good" },
        { turn: 2, kind: "transfer", ...transfer },
      ]);
      const turns = (await (await call(`/v1/conversations/${id}/turns`)).json()) as Array<{ agents: string[] }>;
      expect(turns.map((t) => t.agents)).toEqual([
        ["triage", "calculator", "triage", "triage"],
        ["triage", "billing"],
      ]);
      const ui = (await (await call(`/v1/conversations/${id}/ui-messages`)).json()) as Array<{
        parts: Array<{ type: string; id?: string }>;
      }>;
      const handoffParts = ui.flatMap((m) => m.parts.filter((p) => p.type === "data-handoff").map((p) => p.id));
      expect(handoffParts).toEqual(["c", "return-c", "t"]);
      const replay = parseSse(await (await call(`/v1/conversations/${id}/events?after=0`)).text());
      expect(replay.map((e) => e.type)).toEqual(["run-start", "handoff"]);
      expect(replay[1]).toEqual({ sseEvent: "handoff", id: 2, type: "handoff", kind: "transfer", ...transfer });

      const res = await call(`/v1/conversations/${id}/approvals`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decisions: [{ toolCallId: "r", approved: true }] }),
      });
      expect(res.status).toBe(200);
      const events = parseSse(await res.text());
      // The turn's progress came from the loose fields: its next step is the suspended one's next, as billing.
      expect(events.find((e) => e.type === "step-start")).toMatchObject({ stepIndex: 2, agent: "billing" });
      expect(events.at(-1)).toMatchObject({
        type: "done",
        status: "completed",
        agent: "billing",
        handoffs: [{ kind: "transfer", to: "billing" }],
      });
      const after = await stored(id);
      expect(after.pendingApprovals).toEqual([]);
      expect(after.messages.at(-1)).toMatchObject({ role: "assistant", agent: "billing", content: "Refunded, and that is all." });
      // What this release wrote says its version: read as it is from now on, never through the upgrades of version 1. The
      // state row, which nothing changed, stays as it was, less the wait that moved to the turn's own run.
      await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
        const sql = state.storage.sql;
        const stateRow = JSON.parse(sql.exec<{ data: string }>(`SELECT data FROM state`).one().data);
        expect(stateRow).toEqual({ conversationId: id, activeAgent: "billing", handoffCount: 4, context: {} });
        const root = sql.exec<{ state: string; decisions: string | null }>(`SELECT state, decisions FROM runs WHERE path = ''`).one();
        expect({ ...root, state: JSON.parse(root.state) }).toEqual({
          state: { v: ROW_VERSION, suspension: null, asked: 0 },
          decisions: null,
        });
        expect(sql.exec<{ v: number }>(`SELECT v FROM events ORDER BY first_id DESC LIMIT 1`).one().v).toBe(ROW_VERSION);
      });
    },
  );
});

describe("a turn stored before turns kept their opening", () => {
  it("is not retried (there is nothing to rewind to), the conversation stays as it was, and it is listed", async () => {
    const s = await scenario([{ text: "First answer." }]);
    const id = s.conversationId;
    await chat(id, s.tag("hello"));
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      state.storage.sql.exec(`UPDATE turns SET opening = NULL`);
    });
    const before = await stored(id);
    const res = await call(`/v1/conversations/${id}/retry`, { method: "POST" });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      error: { code: "nothing_to_retry", message: "There is no turn to run again: send a message instead." },
    });
    expect(await stored(id)).toEqual(before);
    // Listed all the same: who held a turn stored before openings, with no handoff to name them, is not known.
    const turns = await call(`/v1/conversations/${id}/turns`);
    expect(turns.status).toBe(200);
    expect(await turns.json()).toEqual([expect.objectContaining({ turn: 1, status: "completed", agents: [], handoffs: [] })]);
  });
  it("is held, when listed, by whoever the last handoff of the turn before handed it to", async () => {
    const s = await scenario([{ text: "First answer." }]);
    const id = s.conversationId;
    await chat(id, s.tag("hello"));
    const records = [
      { from: "triage", to: "billing", toolCallId: "t1", stepIndex: 0 },
      { from: "billing", to: "shipping", toolCallId: "t2", stepIndex: 1 },
    ];
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec(`UPDATE turns SET opening = NULL`);
      for (const r of records) sql.exec(`INSERT INTO handoffs (turn, data) VALUES (1, ?)`, JSON.stringify(r));
      sql.exec(`INSERT INTO turns (turn, status, started_at, ended_at) VALUES (2, 'completed', 3, 4)`);
    });
    await evictDurableObject(env.CONVERSATIONS.getByName(id));
    const turns = (await (await call(`/v1/conversations/${id}/turns`)).json()) as Array<{ agents: string[] }>;
    expect(turns.map((t) => t.agents)).toEqual([["triage", "billing", "shipping"], ["shipping"]]);
  });
});

describe("handoff records of version 1 that said their kind", () => {
  it("are read as they are, and an on-call return without a mode as on call", async () => {
    const s = await scenario([{ text: "Hello." }]);
    const id = s.conversationId;
    await chat(id, s.tag("hello"));
    const records = [
      { kind: "return", from: "calculator", to: "triage", toolCallId: "rt", reason: "It is 4.", stepIndex: 2 },
      { kind: "return", mode: "on-answer", from: "calculator", to: "billing", openedBy: "c2", stepIndex: 3 },
      { kind: "hand-back", from: "support-desk", to: "triage", note: "over to you" },
      { kind: "transfer", from: "triage", to: "shipping", toolCallId: "t9", reason: "parcel", stepIndex: 0 },
    ];
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      for (const r of records) state.storage.sql.exec(`INSERT INTO handoffs (turn, data) VALUES (1, ?)`, JSON.stringify(r));
    });
    // The object caches the history; a new start reads the rows.
    await evictDurableObject(env.CONVERSATIONS.getByName(id));
    expect((await stored(id)).handoffs).toEqual([
      { turn: 1, kind: "return", mode: "on-call", from: "calculator", to: "triage", toolCallId: "rt", reason: "It is 4.", stepIndex: 2 },
      { turn: 1, kind: "return", mode: "on-answer", from: "calculator", to: "billing", openedBy: "c2", stepIndex: 3 },
      { turn: 1, kind: "hand-back", from: "support-desk", to: "triage", note: "over to you" },
      { turn: 1, kind: "transfer", from: "triage", to: "shipping", toolCallId: "t9", reason: "parcel", stepIndex: 0 },
    ]);
  });
});

describe("a suspension stored with its progress as loose fields", () => {
  /** Billing waits for a refund's approval in turn 1, the turn's counts kept as loose fields. */
  async function storeSuspension(id: string, question: string, amountUsd: number, counts: object) {
    const refund = { id: "r", name: "refund", arguments: args({ orderId: "A1001", amountUsd }) };
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      await storedBeforeSchema18(state);
      const sql = state.storage.sql;
      sql.exec(`INSERT INTO messages (turn, data) VALUES (1, ?)`, JSON.stringify({ role: "user", content: question }));
      const opening = { message: question, activeAgent: "billing", handoffCount: 0, context: {} };
      sql.exec(
        `INSERT INTO turns (turn, status, started_at, ended_at, opening) VALUES (1, 'awaiting_approval', 1, 2, ?)`,
        JSON.stringify(opening),
      );
      const suspension = {
        assistant: { role: "assistant", agent: "billing", content: null, toolCalls: [refund] },
        results: [null],
        pending: [{ toolCallId: "r", name: "refund", args: { orderId: "A1001", amountUsd }, agent: "billing" }],
        stepIndex: 0,
        turnHandoffs: [],
        ...counts,
      };
      const row = { conversationId: id, activeAgent: "billing", handoffCount: 0, suspension, decisions: [], context: {} };
      sql.exec(`INSERT INTO state (id, data) VALUES (1, ?)`, JSON.stringify(row));
    });
    await evictDurableObject(env.CONVERSATIONS.getByName(id));
  }

  // Each count stored at its limit's edge: the approved refund (more than the order's 129 USD fails) is the last step.
  it.each([
    { kept: "the agent's steps", amountUsd: 10, counts: { agentSteps: 10, errorSteps: 0 }, isError: false, code: "max_steps" },
    {
      kept: "the failed steps in a row",
      amountUsd: 1000,
      counts: { agentSteps: 1, errorSteps: 2 },
      isError: true,
      code: "too_many_tool_errors",
    },
  ])("keeps $kept: after the approval the turn stops with $code", async ({ amountUsd, counts, isError, code }) => {
    const s = await scenario([{ text: "Never asked for." }]);
    const id = s.conversationId;
    await storeSuspension(id, s.tag("refund my order"), amountUsd, counts);
    const res = await call(`/v1/conversations/${id}/approvals`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decisions: [{ toolCallId: "r", approved: true }] }),
    });
    const events = parseSse(await res.text());
    expect(events.find((e) => e.type === "tool-result")).toMatchObject({ toolCallId: "r", isError });
    expect(events.find((e) => e.type === "error")).toMatchObject({ code });
    expect((await s.sent()).requests).toHaveLength(0);
  });
});
