import { env } from "cloudflare:workers";
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { describe, expect, it, vi } from "vitest";
import { migrate, SCHEMA_VERSION } from "../../src/conversation/storage/schema.ts";
import { call, chat, dueFollowUp, postMessage, scenario, stored } from "../support/worker.ts";

/** Replaces a conversation's storage with what an earlier deploy wrote, then restarts the object. */
async function writeAsVersion1(conversationId: string, activeAgent: string, history: unknown[]): Promise<void> {
  const stub = env.CONVERSATIONS.getByName(conversationId);
  await runInDurableObject(stub, async (_instance, state) => {
    await state.storage.deleteAll();
    const sql = state.storage.sql;
    migrate(sql, 1);
    // Version 1 wrote the turn number and the last event id into the state row.
    sql.exec(
      `INSERT INTO state (id, data) VALUES (1, ?)`,
      JSON.stringify({ conversationId, activeAgent, handoffCount: 1, lastEventId: 9, turn: 1, suspension: null, decisions: [] }),
    );
    for (const message of history) sql.exec(`INSERT INTO messages (turn, data) VALUES (1, ?)`, JSON.stringify(message));
    sql.exec(`INSERT INTO turns (turn, status, started_at, ended_at) VALUES (1, 'completed', 1, 2)`);
    sql.exec(`INSERT INTO events (first_id, last_id, turn, data) VALUES (1, 9, 1, '[]')`);
    sql.exec(
      `INSERT INTO handoffs (turn, data) VALUES (1, ?)`,
      JSON.stringify({ from: "triage", to: activeAgent, toolCallId: "t0", stepIndex: 0 }),
    );
  });
  await evictDurableObject(stub);
}

describe("deploys that change the schema and the network", () => {
  it("migrates a conversation written by schema version 1 on first access, losing nothing", async () => {
    const s = await scenario([{ text: "Billing, after the upgrade." }]);
    const history = [
      { role: "user", content: s.tag("charged twice") },
      { role: "assistant", agent: "triage", content: null, toolCalls: [{ id: "t0", name: "transfer_to_billing", arguments: "{}" }] },
      { role: "tool", toolCallId: "t0", name: "transfer_to_billing", content: "Transferred to 'billing'.", isError: false },
      { role: "assistant", agent: "billing", content: "Which order?" },
    ];
    await writeAsVersion1(s.conversationId, "billing", history);

    const before = await stored(s.conversationId);
    expect(before).toMatchObject({
      activeAgent: "billing",
      handoffCount: 1,
      turn: 1,
      lastEventId: 9,
      usage: { modelCalls: 0 },
      compactions: [],
    });
    expect(before.messages).toEqual(history);
    const events = await chat(s.conversationId, "order A1001");
    expect(events[0]).toMatchObject({ type: "run-start", agent: "billing", id: 10 });
    const after = await stored(s.conversationId);
    expect(after.messages).toHaveLength(6);
    expect(after).toMatchObject({ turn: 2, usage: { modelCalls: 1, inputTokens: 42, outputTokens: 7 } });
    await runInDurableObject(env.CONVERSATIONS.getByName(s.conversationId), (_i, state) => {
      expect(state.storage.sql.exec<{ version: number }>(`SELECT version FROM schema_version`).one().version).toBe(SCHEMA_VERSION);
    });
  });

  it("hands a conversation whose agent was removed to the entry agent, with a warning and a note; old tool calls stay valid", async () => {
    const s = await scenario([{ text: "Triage here, how can I help?" }]);
    await writeAsVersion1(s.conversationId, "loyalty_desk", [
      { role: "user", content: s.tag("points please") },
      {
        role: "assistant",
        agent: "loyalty_desk",
        content: null,
        toolCalls: [{ id: "p1", name: "award_points", arguments: '{"points":50}' }],
      },
      { role: "tool", toolCallId: "p1", name: "award_points", content: '{"awarded":50}', isError: false },
      { role: "assistant", agent: "loyalty_desk", content: "Done." },
    ]);
    const events = await chat(s.conversationId, "and now?");
    expect(events.slice(0, 2).map((e) => e.type)).toEqual(["run-start", "warning"]);
    expect(events[1]).toMatchObject({
      code: "agent_missing",
      message: "Agent 'loyalty_desk' no longer exists; 'triage' took over the conversation.",
    });
    const { requests } = await s.sent();
    expect(requests[0]!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "system", "user"]);
    expect(requests[0]!.messages[2]).toMatchObject({ tool_calls: [{ id: "p1", function: { name: "award_points" } }] });
    expect(await stored(s.conversationId)).toMatchObject({ activeAgent: "triage" });
  });

  it("names the answer after that note on the AI SDK route as the stored conversation does", async () => {
    const s = await scenario([{ text: "Triage here." }]);
    await writeAsVersion1(s.conversationId, "loyalty_desk", [
      { role: "user", content: s.tag("points please") },
      { role: "assistant", agent: "loyalty_desk", content: "Done." },
    ]);
    const res = await call(`/v1/conversations/${s.conversationId}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ id: "u2", role: "user", parts: [{ type: "text", text: "and now?" }] }] }),
    });
    const chunks = (await res.text())
      .split("\n\n")
      .filter((frame) => frame.startsWith("data: {"))
      .map((frame) => JSON.parse(frame.slice(6)) as { type: string; messageId?: string });
    const ui = (await (await call(`/v1/conversations/${s.conversationId}/ui-messages`)).json()) as Array<{ id: string; role: string }>;
    // The history: the user, the removed agent's answer, the note, the new user message, triage's answer.
    expect(chunks.find((chunk) => chunk.type === "start")?.messageId).toBe(ui.at(-1)!.id);
    expect(ui.at(-1)!.role).toBe("assistant");
  });
});

describe("rate limits and usage", () => {
  it("answers 429 with Retry-After past the per-conversation turn rate, and keeps usage totals", async () => {
    const s = await scenario(Array.from({ length: 32 }, (_, i) => ({ text: `answer ${i}` })));
    const started = Date.now();
    for (let i = 0; i < 30; i++) {
      const res = await postMessage(s.conversationId, i === 0 ? s.tag("start") : `message ${i}`);
      expect(res.status).toBe(200);
      await res.text();
    }
    const limited = await postMessage(s.conversationId, "one too many");
    expect(limited.status).toBe(429);
    // The window frees when the first of the 30 turns is a minute old: no sooner, and no later than that.
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(retryAfter).toBeGreaterThanOrEqual(60 - Math.ceil((Date.now() - started) / 1000));
    expect(await limited.json()).toEqual({
      error: {
        code: "rate_limited",
        message: `This conversation takes 30 new turns a minute; try again in ${retryAfter} s.`,
        details: { retryAfter },
      },
    });
    // A minute on, the 30 turns have left the window and one more is taken.
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 60_001 });
    try {
      const again = await postMessage(s.conversationId, "a minute on");
      expect(again.status).toBe(200);
      await again.text();
    } finally {
      vi.useRealTimers();
    }
    const view = await stored(s.conversationId);
    expect(view.messages).toHaveLength(62);
    expect(view).toMatchObject({ usage: { modelCalls: 31, inputTokens: 31 * 42, outputTokens: 31 * 7, toolCalls: 0 } });
    expect((await call(`/v1/conversations/${s.conversationId}`)).status).toBe(200);
  });
});

describe("what counts as a new turn", () => {
  it("counts a retry toward the per-conversation rate, as a message", async () => {
    const s = await scenario(Array.from({ length: 31 }, (_, i) => ({ text: `answer ${i}` })));
    for (let i = 0; i < 29; i++) await (await postMessage(s.conversationId, i === 0 ? s.tag("start") : `message ${i}`)).text();
    const retried = await call(`/v1/conversations/${s.conversationId}/retry`, { method: "POST" });
    expect(retried.status).toBe(200);
    await retried.text();
    const limited = await postMessage(s.conversationId, "the 31st");
    expect(limited.status).toBe(429);
    await limited.text();
  });
});

describe("what is not a new turn", () => {
  it("counts neither a resume, the alarm's follow-up nor a person's answer and hand back toward the per-conversation rate", async () => {
    const json = { "content-type": "application/json" };
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "double charge" }) }] },
      { toolCalls: [{ id: "ref", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "Refunded." },
      { text: "Following up, as promised." },
      ...Array.from({ length: 27 }, (_, i) => ({ text: `answer ${i}` })),
      { toolCalls: [{ id: "p", name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "asked for a person" }) }] },
      { text: "The 30th new turn." },
    ]);
    const id = s.conversationId;
    expect((await chat(id, s.tag("charged twice"))).at(-1)).toMatchObject({ status: "awaiting_approval" });
    const approve = { method: "POST", headers: json, body: JSON.stringify({ decisions: [{ toolCallId: "ref", approved: true }] }) };
    await (await call(`/v1/conversations/${id}/approvals`, approve)).text();
    await runDurableObjectAlarm(await dueFollowUp(id, "billing"));
    expect((await stored(id)).messages.at(-1)).toMatchObject({ content: "Following up, as promised." });
    for (let i = 0; i < 27; i++) await (await postMessage(id, `message ${i}`)).text();
    expect((await chat(id, "a person, please")).at(-1)).toMatchObject({ status: "awaiting_human" });
    const person = (path: string, body: unknown) =>
      call(`/v1/conversations/${id}/operator/${path}`, { method: "POST", headers: json, body: JSON.stringify(body) });
    expect((await person("messages", { text: "Sam here." })).status).toBe(200);
    expect((await person("handoff", { to: "triage" })).status).toBe(200);
    // 29 new turns so far: one more is taken, the one after is not.
    expect((await chat(id, "the 30th")).at(-1)).toMatchObject({ type: "done", text: "The 30th new turn." });
    expect((await postMessage(id, "the 31st")).status).toBe(429);
  });
});

describe("compaction in storage", () => {
  it("stores a marker row: GET shows every original message and the summary the model is sent", async () => {
    const { Agent, Network, runTurn } = await import("../../src/runtime/index.ts");
    const id = `compaction-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      const store = new ConversationStore(state.storage);
      const network = new Network(new Agent({ name: "triage", instructions: "t", contextBudget: 600 }), {
        defaultModel: "m",
        compaction: { keepTurns: 1 },
      });
      const model = {
        async *stream(request: { instructions: string }) {
          yield {
            type: "text-delta" as const,
            delta: request.instructions.startsWith("Summarize") ? "the user asked many things" : "a fairly long answer ".repeat(8),
          };
          yield { type: "finish" as const, finishReason: "stop" };
        },
      };
      for (let turn = 0; turn < 12; turn++) {
        store.create(id, "triage", "grant");
        store.beginTurn();
        const pending: never[] = [];
        for await (const _event of runTurn({
          conversationId: id,
          network,
          model,
          store: { commitStep: (commit) => store.commitStep(commit, pending) },
          conversation: store.snapshot(),
          input: { kind: "message", text: `question number ${turn}` },
        }));
        store.endTurn({ status: "completed" }, []);
      }
    });
    const view = await stored(id);
    expect(view.messages).toHaveLength(24);
    expect(view.compactions.length).toBeGreaterThan(0);
    expect(view.compactions.at(-1)).toMatchObject({ summary: "the user asked many things", agent: "triage" });
    expect(view.messages[view.compactions.at(-1)!.replaces]).toMatchObject({ role: "user" });
    // A fork takes the compactions with the rows it copies: the same summary stands in for the same messages there.
    const res = await call(`/v1/conversations/${id}/fork`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ afterTurn: 12 }),
    });
    expect(res.status).toBe(201);
    const forked = await stored(((await res.json()) as { id: string }).id);
    expect(forked.compactions).toEqual(view.compactions);
  });
});

describe("migration 10: the outbox", () => {
  it("moves the notifications a schema-9 schedule held into the outbox, same id, time, attempt and body; timers stay", async () => {
    const id = `outbox-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      await state.storage.deleteAll();
      const sql = state.storage.sql;
      migrate(sql, 9);
      const body = JSON.stringify({ id: "n1", reason: "person_answered" });
      sql.exec(
        `INSERT INTO schedule (id, kind, due_at, turn, data) VALUES ('n1', 'notify', 5, 1, ?)`,
        JSON.stringify({ body, attempt: 2 }),
      );
      sql.exec(
        `INSERT INTO schedule (id, kind, due_at, turn, data) VALUES ('f1', 'follow-up', 7, 1, ?)`,
        JSON.stringify({ note: "n", agent: "a", toolCallId: "c" }),
      );
      migrate(sql);
      expect(sql.exec(`SELECT id, due_at, attempt, body FROM outbox`).toArray()).toEqual([{ id: "n1", due_at: 5, attempt: 2, body }]);
      expect(sql.exec(`SELECT id, kind FROM schedule`).toArray()).toEqual([{ id: "f1", kind: "follow-up" }]);
    });
  });
});
