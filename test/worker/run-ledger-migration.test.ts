/**
 * Schema 16 moves a conversation's delegated runs into one ledger (`runs`): what schema 15 kept in `delegation_runs` (a
 * run's holder, wait and asks taken) and `background_runs` (a background run's status, spending, spans and wait) is read
 * back as it was, a background run's requests from its stored wait (kept once), and the old tables are gone. Schema 18
 * makes the turn the ledger's root run: its wait moves out of the state row into its own row.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { migrate } from "../../src/conversation/storage/schema.ts";

const holding = (activeAgent: string) => ({ activeAgent, handoffCount: 0, callers: [], agentStates: {}, context: {} });
const question = {
  kind: "question",
  toolCallId: "rd1",
  name: "arrange_redelivery",
  args: { orderId: "A1002" },
  agent: "parcel-search",
  message: "When?",
  schema: { type: "object" },
};
const suspension = (agent: string, request: Record<string, unknown>) => ({
  assistant: { role: "assistant", agent, content: null, toolCalls: [{ id: request.toolCallId, name: request.name, arguments: "{}" }] },
  results: [null],
  pending: [request],
  progress: {
    handoffs: [],
    agentSteps: 1,
    errorSteps: 0,
    stepIndex: 1,
    usage: { modelCalls: 1, inputTokens: 1, outputTokens: 1, toolCalls: 1 },
  },
  trailing: [],
});

describe("schema 16: one ledger of runs", () => {
  it("moves schema 15's delegated runs and background runs into runs, losing nothing and keeping a wait's requests once", async () => {
    const id = `ledger-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      // What an earlier deploy wrote: the object's own start migrated this storage already.
      await state.storage.deleteAll();
      const sql = state.storage.sql;
      migrate(sql, 15);
      sql.exec(
        `INSERT INTO state (id, data) VALUES (1, ?)`,
        JSON.stringify({ v: 2, conversationId: id, ...holding("shipping"), suspension: null, decisions: [], grant: "g" }),
      );
      sql.exec(`INSERT INTO turns (turn, status, started_at, ended_at) VALUES (1, 'completed', 1, 2)`);
      // A delegation in turn 1 that waits (path d), and the background search it started (path bg1), waiting for the user.
      const approval = { kind: "approval", toolCallId: "f", name: "flag_order", args: {}, agent: "checker" };
      sql.exec(
        `INSERT INTO delegation_runs (turn, path, data) VALUES (1, 'd', ?)`,
        JSON.stringify({ holding: holding("checker"), suspension: suspension("checker", approval), asked: 2 }),
      );
      sql.exec(`INSERT INTO delegations (turn, path, agent, data) VALUES (1, 'd', 'checker', '{"role":"user","content":"flag A1"}')`);
      sql.exec(
        `INSERT INTO delegation_runs (turn, path, data) VALUES (1, 'bg1', ?)`,
        JSON.stringify({ holding: holding("parcel-search"), suspension: suspension("parcel-search", question), asked: 0 }),
      );
      const decided = [{ toolCallId: "other", approved: false }];
      const wait = { id: "entry-1", requests: [{ ...question, delegated: { path: ["bg1"], toolCallId: "rd1" } }], decisions: decided };
      sql.exec(
        `INSERT INTO background_runs (id, turn, tool_call_id, agent, status, started_at, model_calls, input_tokens, output_tokens,
           tool_calls, spans, wait) VALUES ('entry-1', 1, 'bg1', 'parcel-search', 'awaiting_input', 5, 2, 30, 4, 1, '[]', ?)`,
        JSON.stringify(wait),
      );
      const entry = { agent: "parcel-search", request: "find it", askedBy: "shipping", toolCallId: "bg1" };
      sql.exec(`INSERT INTO schedule (id, kind, due_at, turn, data) VALUES ('entry-1', 'delegation', 9e12, 1, ?)`, JSON.stringify(entry));

      const store = new ConversationStore(state.storage);
      expect(store.readDelegation(["d"], 1)).toMatchObject({
        conversation: { holding: holding("checker"), history: [{ role: "user", content: "flag A1" }] },
        suspension: { pending: [approval] },
        asked: 2,
      });
      expect(store.runs.get("entry-1")).toMatchObject({ turn: 1, toolCallId: "bg1", agent: "parcel-search", status: "awaiting_input" });
      // Its requests are its stored wait's, under the call that asked it: as schema 15 kept them a second time.
      expect(store.runs.waits()).toEqual([wait]);
      expect(store.runs.spent()).toEqual({ modelCalls: 2, inputTokens: 30, outputTokens: 4, toolCalls: 1 });
      expect(store.runs.latest(10)).toEqual([
        { id: "entry-1", turn: 1, toolCallId: "bg1", agent: "parcel-search", status: "awaiting_input", startedAt: 5, endedAt: null },
      ]);
      const tables = sql
        .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table'`)
        .toArray()
        .map((t) => t.name);
      expect(tables).toContain("runs");
      expect(tables).not.toContain("delegation_runs");
      expect(tables).not.toContain("background_runs");
    });
  });

  it("keeps a background run that had ended as it ended: its status, end time, spending and spans, beside its run's state", async () => {
    const id = `ledger-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      await state.storage.deleteAll();
      const sql = state.storage.sql;
      migrate(sql, 15);
      sql.exec(
        `INSERT INTO state (id, data) VALUES (1, ?)`,
        JSON.stringify({ v: 2, conversationId: id, ...holding("shipping"), suspension: null, decisions: [], grant: "g" }),
      );
      sql.exec(`INSERT INTO turns (turn, status, started_at, ended_at) VALUES (1, 'completed', 1, 2)`);
      // Two searches of turn 1 that ended: one whose steps left a delegated run's row (the same turn and path), one without.
      sql.exec(
        `INSERT INTO delegation_runs (turn, path, data) VALUES (1, 'bg1', ?)`,
        JSON.stringify({ holding: holding("parcel-search"), suspension: null, asked: 0 }),
      );
      const span = { id: "s1", parentId: "c1", kind: "agent", name: "parcel-search", start: 10, end: 40, attributes: {} };
      sql.exec(
        `INSERT INTO background_runs (id, turn, tool_call_id, agent, status, started_at, ended_at, model_calls, input_tokens,
           output_tokens, tool_calls, spans, wait) VALUES ('entry-1', 1, 'bg1', 'parcel-search', 'completed', 5, 50, 2, 30, 4, 1, ?, NULL)`,
        JSON.stringify([span]),
      );
      sql.exec(
        `INSERT INTO background_runs (id, turn, tool_call_id, agent, status, started_at, ended_at, model_calls, input_tokens,
           output_tokens, tool_calls, spans, wait) VALUES ('entry-2', 1, 'bg2', 'parcel-search', 'failed', 7, 70, 1, 3, 2, 0, '[]', NULL)`,
      );

      const store = new ConversationStore(state.storage);
      expect(store.runs.latest(10)).toEqual([
        { id: "entry-2", turn: 1, toolCallId: "bg2", agent: "parcel-search", status: "failed", startedAt: 7, endedAt: 70 },
        { id: "entry-1", turn: 1, toolCallId: "bg1", agent: "parcel-search", status: "completed", startedAt: 5, endedAt: 50 },
      ]);
      // Ended, so not waiting; what each spent and its spans stay; the run's own state is its delegated row's.
      expect(store.runs.waits()).toEqual([]);
      expect(store.runs.spent()).toEqual({ modelCalls: 3, inputTokens: 33, outputTokens: 6, toolCalls: 1 });
      expect(store.runs.spans(1)).toEqual([span]);
      expect(store.runs.state(1, ["bg1"])).toEqual({ holding: holding("parcel-search"), suspension: null, asked: 0 });
      const modes = sql.exec<{ path: string; mode: string }>(`SELECT path, mode FROM runs ORDER BY path`).toArray();
      expect(modes).toEqual([
        { path: "bg1", mode: "background" },
        { path: "bg2", mode: "background" },
      ]);
    });
  });
});

describe("schema 18: the turn is the ledger's root run", () => {
  const refund = { kind: "approval", toolCallId: "r1", name: "refund", args: { orderId: "A1001" }, agent: "billing" };
  const ask = { ...question, toolCallId: "q1", agent: "billing" };

  it("moves the turn's wait (its suspended step and the decisions so far) out of the state row into its run, losing nothing", async () => {
    const id = `root-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      await state.storage.deleteAll();
      const sql = state.storage.sql;
      migrate(sql, 17);
      const waiting = { ...suspension("billing", refund), pending: [refund, ask] };
      waiting.assistant.toolCalls.push({ id: "q1", name: ask.name, arguments: "{}" });
      waiting.results.push(null);
      const decided = [{ toolCallId: "r1", approved: true }];
      sql.exec(
        `INSERT INTO state (id, data) VALUES (1, ?)`,
        JSON.stringify({
          v: 2,
          conversationId: id,
          ...holding("billing"),
          suspension: waiting,
          decisions: decided,
          grant: "g",
          owner: "u1",
        }),
      );
      sql.exec(`INSERT INTO turns (turn, status, started_at, ended_at) VALUES (1, 'completed', 1, 2)`);
      sql.exec(`INSERT INTO turns (turn, status, started_at, ended_at) VALUES (2, 'awaiting_input', 3, 4)`);

      const store = new ConversationStore(state.storage);
      expect(store.state()).toMatchObject({ turn: 2, holding: holding("billing"), suspension: waiting, decisions: decided, owner: "u1" });
      expect(store.runs.waits()).toEqual([{ id: undefined, requests: [refund, ask], decisions: decided }]);
      // One row for the turn's own run, whichever turn is the latest (turn 0 names it).
      const root = sql.exec<{ turn: number; mode: string; agent: string }>(`SELECT turn, mode, agent FROM runs WHERE path = ''`).one();
      expect(root).toEqual({ turn: 0, mode: "turn", agent: "billing" });
      const stateRow = JSON.parse(sql.exec<{ data: string }>(`SELECT data FROM state`).one().data);
      expect(stateRow).not.toHaveProperty("suspension");
      expect(stateRow).not.toHaveProperty("decisions");
      expect(stateRow).toMatchObject({ v: 2, conversationId: id, grant: "g", owner: "u1", activeAgent: "billing" });
    });
  });

  it("moves nothing for a conversation that did not wait, and its state reads as before", async () => {
    const id = `root-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      await state.storage.deleteAll();
      const sql = state.storage.sql;
      migrate(sql, 17);
      sql.exec(
        `INSERT INTO state (id, data) VALUES (1, ?)`,
        JSON.stringify({ v: 2, conversationId: id, ...holding("triage"), suspension: null, decisions: [], grant: "g" }),
      );
      const store = new ConversationStore(state.storage);
      expect(store.state()).toMatchObject({ turn: 0, suspension: null, decisions: [], grant: "g" });
      expect(sql.exec(`SELECT * FROM runs`).toArray()).toEqual([]);
    });
  });
});
