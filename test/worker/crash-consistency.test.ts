/**
 * A commit and its events are one: the Durable Object is killed between every pair of writes of a
 * turn with a transfer, a tool and an approval (its storage refuses every write past the N-th
 * transaction, as a process gone at that point would), started again, and the replay of its events
 * must tell the story its stored view tells: every handoff counted has its event and the holder is
 * the last one's target, every stored tool result has its `tool-result` event after its
 * `tool-call`, no result event answers a call the history does not, a suspension that waits is
 * announced, and a step that committed into a suspension is held once (waiting, not answered in the
 * history too). Where the kill left calls waiting, deciding them resumes the turn to its end.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, inject, it, vi } from "vitest";
import * as z from "zod";
import { ConversationObject, type ConversationSetup, type WorkerVars } from "../../src/cloudflare/index.ts";
import { findHistoryProblem } from "../../src/runtime/messages.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import type { StoredEvent } from "../../src/wire/index.ts";
import { echo, refund, withApprovals } from "../support/networks.ts";
import { Agent, type Decision, Network, type Tool, tool } from "../../src/runtime/index.ts";
import { INTERRUPTED_CALL } from "../../src/runtime/wait/suspension.ts";
import { parseSse } from "../support/sse.ts";
import { until } from "../support/until.ts";
import { ScriptedModel, type ScriptStep } from "../support/scripted-model.ts";
import { mcpClient } from "../../src/mcp/index.ts";

class Killed extends Error {}

let script: ScriptStep[] = [];
let network: () => Network = withApprovals;

class ScriptedConversation extends ConversationObject {
  protected setup(): ConversationSetup {
    return { network: network(), offlineModel: new ScriptedModel(script), mcp: mcpClient() };
  }
}

/** triage asks a helper as a tool (a delegation); the helper echoes, then answers. */
function delegating(): Network {
  const helper = new Agent({ name: "helper", instructions: "You help.", tools: [echo] });
  return new Network(new Agent({ name: "triage", instructions: "You are triage.", tools: [helper.asTool()] }), { defaultModel: "m" });
}

/** No provider configured: the scripted model answers. */
const offline = { ...env, OPENAI_BASE_URL: undefined, OPENAI_API_KEY: undefined } as WorkerVars;

/**
 * Kills the object's storage after `writes` transactions: that one and every later write throws,
 * as they would for a process gone at that point. `revive` puts the storage back for the next start.
 */
function dying(storage: DurableObjectStorage, writes: number): { killed: () => boolean; revive: () => void } {
  let left = writes;
  const dead = () => left < 0;
  const { sql } = storage;
  const own = { transactionSync: storage.transactionSync, setAlarm: storage.setAlarm, deleteAlarm: storage.deleteAlarm, exec: sql.exec };
  const patched = storage as unknown as Record<string, unknown>;
  patched.transactionSync = <T>(write: () => T): T => {
    if (--left < 0) throw new Killed("killed");
    return own.transactionSync.call(storage, write) as T;
  };
  for (const name of ["setAlarm", "deleteAlarm"] as const)
    patched[name] = (...args: unknown[]) =>
      dead() ? Promise.resolve() : (own[name] as (...a: unknown[]) => Promise<void>).apply(storage, args);
  (sql as unknown as Record<string, unknown>).exec = (query: string, ...bindings: SqlStorageValue[]) => {
    if (dead() && !/^\s*SELECT/i.test(query)) throw new Killed("killed");
    return own.exec.call(sql, query, ...bindings);
  };
  return {
    killed: dead,
    revive: () => {
      for (const name of ["transactionSync", "setAlarm", "deleteAlarm"] as const) delete patched[name];
      delete (sql as unknown as Record<string, unknown>).exec;
    },
  };
}

async function drain(result: { ok: boolean; value?: unknown }): Promise<void> {
  if (!result.ok) return;
  const events = (result.value as { events?: ReadableStream }).events;
  if (events) await new Response(events).text();
}

/** What the replay and the stored view disagree on; empty when they tell one story. */
function disagreements(store: ConversationStore): string[] {
  const events: StoredEvent[] = [];
  const next = store.events.replay("every", 0);
  for (let batch = next(); batch; batch = next()) events.push(...batch);
  const state = store.state()!;
  const problems: string[] = [];
  // Every stored event is an event, in id order, whatever the kill left.
  for (const [i, event] of events.entries())
    if (typeof event !== "object" || typeof event.type !== "string" || (i > 0 && !(event.id > events[i - 1]!.id)))
      problems.push(`stored event ${i} is not an event in order: ${JSON.stringify(event)}`);
  // Every leg starts with run-start (a client reads legs so: the AI SDK and AG-UI encoders among them), a recovered one too.
  for (const [i, event] of events.entries())
    if ((i === 0 || events[i - 1]!.type === "done" || events[i - 1]!.type === "error") && event.type !== "run-start")
      problems.push(`event ${event.id} (${event.type}) starts a leg without run-start`);
  const handoffEvents = events.filter((e) => e.type === "handoff");
  // Every change of hands is an event and a row; the count is of transfers only (docs/handoffs.md).
  const transfers = handoffEvents.filter((e) => "kind" in e && e.kind === "transfer").length;
  if (handoffEvents.length !== store.handoffs().length || transfers !== state.holding.handoffCount)
    problems.push(
      `handoffs: ${handoffEvents.length} events, ${store.handoffs().length} rows, ${transfers} transfers, count ${state.holding.handoffCount}`,
    );
  const holder = handoffEvents.at(-1)?.to ?? "triage";
  if (holder !== state.holding.activeAgent) problems.push(`held by ${state.holding.activeAgent}, the replay says ${holder}`);
  const position = (type: string, id: string) => events.findIndex((e) => e.type === type && "toolCallId" in e && e.toolCallId === id);
  // A step that suspended keeps the results of its calls that ran with the suspension, until it resumes.
  const results = [...store.messages(), ...(state.suspension?.results ?? [])].flatMap((m) => (m?.role === "tool" ? [m.toolCallId] : []));
  for (const id of results) {
    const result = position("tool-result", id);
    if (result < 0) problems.push(`stored result of ${id} has no tool-result event`);
    else if (position("tool-call", id) < 0 || position("tool-call", id) > result)
      problems.push(`tool-result ${id} has no tool-call before it`);
  }
  for (const event of events) {
    if (event.type !== "tool-result") continue;
    if (!results.includes(event.toolCallId)) problems.push(`tool-result ${event.toolCallId} answers no stored call`);
    if (events.filter((e) => e.type === "tool-result" && e.toolCallId === event.toolCallId).length > 1)
      problems.push(`tool-result ${event.toolCallId} twice`);
  }
  for (const pending of state.suspension?.pending ?? [])
    if (position("approval-required", pending.toolCallId) < 0 && position("input-required", pending.toolCallId) < 0)
      problems.push(`waiting call ${pending.toolCallId} was never announced`);
  const history = findHistoryProblem(store.messages());
  if (history) problems.push(`history: ${history}`);
  // A step that committed into a suspension is there once: waiting, not also answered in the history.
  const calls = store.messages().flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []).map((c) => c.id) : []));
  for (const id of new Set(calls)) if (calls.filter((c) => c === id).length > 1) problems.push(`call ${id} is in the history twice`);
  for (const call of state.suspension?.assistant.toolCalls ?? [])
    if (calls.includes(call.id)) problems.push(`call ${call.id} is in the history while its step still waits`);
  return problems;
}

const LEG_ONE: ScriptStep[] = [
  { toolCalls: [{ id: "t", name: "transfer_to_billing", args: { reason: "a refund" } }] },
  { toolCalls: [{ id: "e", name: "echo", args: { text: "A1001" } }] },
  // The refund waits for approval; the echo beside it runs first.
  {
    toolCalls: [
      { id: "r", name: "refund", args: { amount: 50 } },
      { id: "e2", name: "echo", args: { text: "refund asked" } },
    ],
  },
];

/** The turn, as a client drives it: the message, then the approval once the refund waits. */
async function playTurn(conversation: ConversationObject, conversationId: string): Promise<void> {
  const requester = { conversationId };
  try {
    await drain(await conversation.sendMessage(requester, "I want a refund for A1001"));
    const view = await conversation.getView(requester);
    if (view.ok && view.value.pendingApprovals.length > 0)
      await drain(await conversation.decide(requester, [{ toolCallId: "r", approved: true }]));
  } catch (error) {
    if (!(error instanceof Killed)) throw error;
  }
}

describe("a kill between any two writes of a turn", () => {
  it("leaves a replay that agrees with the stored conversation, and calls left waiting can still be decided", async () => {
    const outcomes: string[] = [];
    for (let writes = 0; ; writes++) {
      const id = `crash-${writes}-${crypto.randomUUID()}`;
      const done = await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
        script = [...LEG_ONE, { text: "Refunded." }];
        const { killed, revive } = dying(state.storage, writes);
        await playTurn(new ScriptedConversation(state, offline), id);
        revive();
        if (!killed()) return true;
        // The next start: a new object over what was stored.
        const restarted = new ConversationStore(state.storage);
        if (!restarted.state()) return false;
        expect(disagreements(restarted), `killed after ${writes} writes`).toEqual([]);
        const waiting = restarted.state()!.suspension?.pending.map((p) => p.toolCallId) ?? [];
        outcomes.push(`${writes}: ${restarted.turns.record(1)?.status} ${waiting.join(",")}`.trim());
        if (waiting.length === 0) return false;
        script = [{ text: "Refunded." }];
        const again = new ScriptedConversation(state, offline);
        await drain(await again.decide({ conversationId: id }, [{ toolCallId: "r", approved: true }]));
        const resumed = new ConversationStore(state.storage);
        expect(disagreements(resumed), `decided after a kill after ${writes} writes`).toEqual([]);
        expect(resumed.messages().at(-1)).toMatchObject({ role: "assistant", content: "Refunded." });
        return false;
      });
      if (done) break;
      expect(writes, "the turn should end within 40 writes").toBeLessThan(40);
    }
    // Kills fell in both legs, and at least one left the refund waiting for its decision.
    expect(outcomes.length).toBeGreaterThan(6);
    expect(outcomes.some((o) => o.endsWith(" r"))).toBe(true);
  });
});

describe("a kill between any two writes of a delegating turn", () => {
  it("answers the delegating call as interrupted (or with the child's answer), and the replay agrees with both histories", async () => {
    const answers = new Set<string>();
    try {
      network = delegating;
      for (let writes = 0; ; writes++) {
        const id = `crash-delegating-${writes}-${crypto.randomUUID()}`;
        const done = await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
          script = [
            { toolCalls: [{ id: "d", name: "ask_helper", args: { request: "echo A1001" } }] },
            { toolCalls: [{ id: "e", name: "echo", args: { text: "A1001" } }] },
            { text: "Echoed A1001." },
            { text: "The helper echoed it." },
          ];
          const { killed, revive } = dying(state.storage, writes);
          try {
            await drain(await new ScriptedConversation(state, offline).sendMessage({ conversationId: id }, "ask the helper"));
          } catch (error) {
            if (!(error instanceof Killed)) throw error;
          }
          revive();
          if (!killed()) return true;
          const restarted = new ConversationStore(state.storage);
          if (!restarted.state()) return false;
          expect(disagreements(restarted), `killed after ${writes} writes`).toEqual([]);
          const answer = restarted.messages().find((m) => m.role === "tool" && m.toolCallId === "d");
          if (answer?.role === "tool") answers.add(answer.content === INTERRUPTED_CALL ? "interrupted" : answer.content);
          // Each step of the helper stored in its history was announced: its nested events are in the replay.
          const replayed: StoredEvent[] = [];
          const next = restarted.events.replay("every", 0);
          for (let batch = next(); batch; batch = next()) replayed.push(...batch);
          const nestedResults = replayed.flatMap((e) =>
            e.type === "delegated" && e.event.type === "tool-result" ? [e.event.toolCallId] : [],
          );
          const childResults = restarted.delegation(1, ["d"]).flatMap((m) => (m.role === "tool" ? [m.toolCallId] : []));
          expect(nestedResults, `killed after ${writes} writes`).toEqual(childResults);
          return false;
        });
        if (done) break;
        expect(writes, "the turn should end within 40 writes").toBeLessThan(40);
      }
    } finally {
      network = withApprovals;
    }
    // Some kills fell while the helper ran (its call answered as interrupted), some after it answered.
    expect([...answers].sort()).toEqual(["Echoed A1001.", "interrupted"]);
  });
});

/** What the test tools did, by conversation: a call that ran twice for one answer shows here. */
const ran: string[] = [];

const askDay = tool({
  name: "ask_day",
  description: "Asks the user which day, then books it.",
  parameters: z.object({}),
  execute: async (_args, ctx) => {
    const day = await ctx.ask({ message: "Which day?", schema: z.string() });
    ran.push(`${ctx.conversationId}:${day}`);
    return `booked ${day}`;
  },
});
/** A client tool: the user's client runs it, and its output is the answer. */
const pickColor = tool({ name: "pick_color", description: "The user picks a colour.", parameters: z.object({}) });
const refundOnce = tool({
  name: "refund",
  description: "Refunds an amount, once a person approves.",
  parameters: z.object({ amount: z.number() }),
  needsApproval: true,
  execute: ({ amount }, ctx) => (ran.push(`${ctx.conversationId}:${amount}`), `refunded ${amount}`),
});

/** The test servers' bearer token (test/node/mcp-test-server.ts, which runs in Node). */
const MCP_TEST_TOKEN = "mcp-bearer 5f2c9a7e-secret";
const mcpServer = (path: string) => ({
  name: "parcels",
  url: `${inject("mcpUrl")}/secured/${path}/mcp`,
  headers: { authorization: `Bearer ${MCP_TEST_TOKEN}` },
});
/**
 * The calls an MCP test server's path was sent with the user's answer; the call that asked is made once (the rerun
 * remembers its answer, so the user's answer goes back with the requestState of the request they saw).
 */
async function answeredCalls(path: string): Promise<number> {
  const all = (await (await fetch(`${inject("mcpUrl")}/__mcp/stats`)).json()) as Record<
    string,
    { calls: Array<{ inputResponses: unknown }> }
  >;
  const calls = all[`/secured/${path}`]?.calls ?? [];
  expect(calls.filter((c) => c.inputResponses === null).length, `${path}: the server asked once`).toBeLessThanOrEqual(1);
  return calls.filter((c) => c.inputResponses !== null).length;
}

interface RequestCase {
  network: (id: string) => Network;
  /** The turn: the call that asks, then what the model says once it is answered. */
  script: ScriptStep[];
  /** What a fresh model says when the turn is resumed after a restart. */
  resumed: ScriptStep[];
  decision: Decision;
  /** How many times the answered call did what it does (ran its effect, was answered, called its server with the answer). */
  effects: (id: string, store: ConversationStore) => Promise<number>;
}

/** triage alone, with these tools and (by path) the MCP test server's. */
const single = (tools: Tool[], mcp?: string) =>
  new Network(new Agent({ name: "triage", instructions: "You are triage.", tools, ...(mcp ? { mcpServers: [mcpServer(mcp)] } : {}) }), {
    defaultModel: "m",
  });
const byConversation = (id: string) => ran.filter((r) => r.startsWith(`${id}`)).length;
const mcpPath = (kind: string, id: string) => `crash-${kind}-${id}`;

const REQUEST_CASES: Record<string, RequestCase> = {
  "a question answered": {
    network: () => single([askDay]),
    script: [{ toolCalls: [{ id: "q", name: "ask_day", args: {} }] }, { text: "Booked." }],
    resumed: [{ text: "Booked." }],
    decision: { toolCallId: "q", answer: "monday" },
    effects: async (id) => byConversation(id),
  },
  "a client tool answered": {
    network: () => single([pickColor]),
    script: [{ toolCalls: [{ id: "c", name: "pick_color", args: {} }] }, { text: "Red it is." }],
    resumed: [{ text: "Red it is." }],
    decision: { toolCallId: "c", answer: "red" },
    effects: async (_id, store) => store.messages().filter((m) => m.role === "tool" && m.toolCallId === "c" && m.content === "red").length,
  },
  "an elicitation answered (form)": {
    network: (id) => single([], mcpPath("form", id)),
    script: [{ toolCalls: [{ id: "s", name: "parcels_offer_slot", args: {} }] }, { text: "Booked the slot." }],
    resumed: [{ text: "Booked the slot." }],
    decision: { toolCallId: "s", answer: { take: true } },
    effects: (id) => answeredCalls(mcpPath("form", id)),
  },
  "an elicitation answered (URL)": {
    network: (id) => single([], mcpPath("url", id)),
    script: [{ toolCalls: [{ id: "v", name: "parcels_verify_identity", args: {} }] }, { text: "Verified." }],
    resumed: [{ text: "Verified." }],
    decision: { toolCallId: "v", approved: true },
    effects: (id) => answeredCalls(mcpPath("url", id)),
  },
  "a delegated approval decided": {
    network: () => {
      const helper = new Agent({ name: "helper", instructions: "You help.", tools: [refundOnce] });
      return single([helper.asTool()]);
    },
    script: [
      { toolCalls: [{ id: "d", name: "ask_helper", args: { request: "refund 50" } }] },
      { toolCalls: [{ id: "r", name: "refund", args: { amount: 50 } }] },
      { text: "Refunded 50." },
      { text: "The helper refunded it." },
    ],
    resumed: [{ text: "Refunded 50." }, { text: "The helper refunded it." }],
    decision: { toolCallId: "d", approved: true },
    effects: async (id) => byConversation(id),
  },
};

describe("a kill between any two writes of a turn that waits for the user and is answered", () => {
  it.each(Object.keys(REQUEST_CASES))(
    "%s: the replay agrees with the state, every leg starts with run-start, and the answered call did its work at most once",
    async (name) => {
      const c = REQUEST_CASES[name]!;
      const outcomes = new Set<string>();
      try {
        for (let writes = 0; ; writes++) {
          const id = `crash-asks-${writes}-${crypto.randomUUID()}`;
          network = () => c.network(id);
          const done = await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
            script = [...c.script];
            const { killed, revive } = dying(state.storage, writes);
            try {
              const conversation = new ScriptedConversation(state, offline);
              await drain(await conversation.sendMessage({ conversationId: id }, "go"));
              const view = await conversation.getView({ conversationId: id });
              if (view.ok && view.value.pendingRequests.length > 0)
                await drain(await conversation.decide({ conversationId: id }, [c.decision]));
            } catch (error) {
              if (!(error instanceof Killed)) throw error;
            }
            revive();
            const wasKilled = killed();
            let store = new ConversationStore(state.storage);
            if (!store.state()) return !wasKilled;
            expect(disagreements(store), `killed after ${writes} writes`).toEqual([]);
            // The kill fell before the decision was stored: the request still waits, and is answered on the next start.
            if (store.state()!.suspension && store.state()!.decisions.length === 0) {
              script = [...c.resumed];
              await drain(await new ScriptedConversation(state, offline).decide({ conversationId: id }, [c.decision]));
              store = new ConversationStore(state.storage);
              expect(disagreements(store), `answered after a kill after ${writes} writes`).toEqual([]);
            }
            const effects = await c.effects(id, store);
            expect(effects, `killed after ${writes} writes`).toBeLessThanOrEqual(1);
            // Not killed (or answered after the restart): the call did its work exactly once.
            if (!wasKilled) expect(effects).toBe(1);
            outcomes.add(effects === 1 ? "done" : "interrupted");
            return !wasKilled;
          });
          if (done) break;
          expect(writes, "the turn should end within 40 writes").toBeLessThan(40);
        }
      } finally {
        network = withApprovals;
      }
      // Kills fell before the answer (it is taken on the next start) and while the answered call ran (interrupted).
      expect([...outcomes].sort()).toEqual(["done", "interrupted"]);
    },
  );
});

/** triage starts a helper in the background (which echoes, or refunds after an approval); its result comes back as a follow-up turn. */
function delegatingInBackground(): Network {
  const helper = new Agent({ name: "helper", instructions: "You help.", tools: [echo, refund] });
  return new Network(new Agent({ name: "triage", instructions: "You are triage.", tools: [helper.asTool({ background: true })] }), {
    defaultModel: "m",
  });
}

const runningBackground = (storage: DurableObjectStorage) =>
  storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM runs WHERE mode = 'background' AND status = 'running'`).one().n;

/** Approves what a background run waits for, if it waits. */
async function approveBackground(conversation: ConversationObject, id: string): Promise<void> {
  const view = await conversation.getView({ conversationId: id });
  const waiting = view.ok ? view.value.pendingRequests : [];
  if (waiting.length)
    await conversation.decide(
      { conversationId: id },
      waiting.map((p) => ({ toolCallId: p.toolCallId, approved: true })),
    );
}

/**
 * The next starts' alarms, each with every entry due (and what a background run waits for approved), until nothing is
 * scheduled and no background run is left running.
 */
async function ringUntilDone(state: DurableObjectState, id: string): Promise<void> {
  // A new object's model starts its script again: what is left to answer is a helper not started yet, and the follow-up.
  script = Array.from({ length: 4 }, () => ({ text: "Told the user." }));
  for (let rings = 0; rings < 10; rings++) {
    await approveBackground(new ScriptedConversation(state, offline), id);
    state.storage.sql.exec(`UPDATE schedule SET due_at = 0`);
    await new ScriptedConversation(state, offline).alarm();
    await until(
      async () => runningBackground(state.storage),
      (n) => n === 0,
      "the background run's end",
    );
    if (state.storage.sql.exec(`SELECT id FROM schedule`).toArray().length === 0) return;
  }
  const left = state.storage.sql.exec(`SELECT kind, data FROM schedule`).toArray();
  const messages = new ConversationStore(state.storage).messages();
  throw new Error(`the schedule did not empty within 10 rings: ${JSON.stringify(left)} ${JSON.stringify(messages)}`);
}

/** The helper echoes; or it refunds, which waits for the user's approval (given between rings) before it runs. */
const backgroundScripts: Record<"echo" | "approval", ScriptStep[]> = {
  echo: [
    { toolCalls: [{ id: "bg", name: "ask_helper", args: { request: "echo A1001" } }] },
    { text: "Started." },
    { toolCalls: [{ id: "e", name: "echo", args: { text: "A1001" } }] },
    { text: "Echoed A1001." },
    { text: "Told the user." },
  ],
  approval: [
    { toolCalls: [{ id: "bg", name: "ask_helper", args: { request: "refund 50" } }] },
    { text: "Started." },
    { toolCalls: [{ id: "r", name: "refund", args: { amount: 50 } }] },
    { text: "Refunded 50." },
    { text: "Told the user." },
  ],
};

describe("a kill between any two writes of a background delegation", () => {
  it.each(["echo", "approval"] as const)(
    "delivers its result (its answer, or interrupted) to the agent that asked exactly once, and the conversation agrees with its replay (%s)",
    async (kind) => {
      const notes = new Set<string>();
      try {
        network = delegatingInBackground;
        for (let writes = 0; ; writes++) {
          const id = `crash-background-${kind}-${writes}-${crypto.randomUUID()}`;
          const done = await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
            script = [...backgroundScripts[kind]];
            const { killed, revive } = dying(state.storage, writes);
            // The test rings the alarm itself: the object's own alarm never rings beside it.
            const noAlarm = () => Object.assign(state.storage, { setAlarm: () => Promise.resolve() });
            noAlarm();
            try {
              const conversation = new ScriptedConversation(state, offline);
              await drain(await conversation.sendMessage({ conversationId: id }, "start the helper"));
              state.storage.sql.exec(`UPDATE schedule SET due_at = 0`);
              await conversation.alarm();
              if (kind === "approval") {
                // The helper runs until it waits for the user (or the kill cuts it off); the approval carries it on from the next ring.
                await until(
                  async () => killed() || runningBackground(state.storage) === 0,
                  (over) => over,
                  "the helper's wait",
                );
                if (killed()) throw new Killed("killed");
                await approveBackground(conversation, id);
                state.storage.sql.exec(`UPDATE schedule SET due_at = 0`);
                await conversation.alarm();
              }
            } catch (error) {
              if (!(error instanceof Killed)) throw error;
            }
            // The scripted run goes on until its next write fails (or to its end): it is over long before this.
            await new Promise((resolve) => setTimeout(resolve, 50));
            revive();
            noAlarm();
            const wasKilled = killed();
            await ringUntilDone(state, id);
            delete (state.storage as unknown as Record<string, unknown>).setAlarm;
            const restarted = new ConversationStore(state.storage);
            if (!restarted.state()) return !wasKilled;
            expect(disagreements(restarted), `killed after ${writes} writes`).toEqual([]);
            const told = restarted.messages().filter((m) => m.role === "system" && /asked in the background/.test(m.content));
            const asked = restarted.messages().some((m) => m.role === "assistant" && m.toolCalls?.some((c) => c.id === "bg"));
            // Once the call was made, its result came back once; before, nothing ran in the background.
            expect(told.length, `killed after ${writes} writes`).toBe(asked ? 1 : 0);
            for (const { content } of told)
              notes.add(
                /has finished/.test(String(content)) ? "answer" : /interrupted/.test(String(content)) ? "interrupted" : String(content),
              );
            expect(runningBackground(state.storage)).toBe(0);
            const waits = state.storage.sql.exec(`SELECT entry FROM runs WHERE decisions IS NOT NULL`).toArray();
            expect(waits, `killed after ${writes} writes`).toEqual([]);
            // Not killed: the approved refund ran, and its answer is what the agent that asked was told.
            if (!wasKilled && kind === "approval") expect(String(told[0]?.content)).toMatch(/has finished: Refunded 50\.$/);
            return !wasKilled;
          });
          if (done) break;
          expect(writes, "the run should end within 40 writes").toBeLessThan(40);
        }
      } finally {
        network = withApprovals;
      }
      // Some kills fell while the helper ran (interrupted), some after its last step was stored (its answer).
      expect([...notes].sort()).toEqual(["answer", "interrupted"]);
    },
  );
});

/**
 * Sends one message with the object's storage killed after each number of writes in turn, until a
 * run is not killed; for each kill, the stream's event types, the last event's code or status, and
 * the turn's status and the history's length on the next start.
 */
async function killedTurns(steps: ScriptStep[], message: string): Promise<string[]> {
  const ends: string[] = [];
  for (let writes = 0; ; writes++) {
    const id = `dies-${writes}-${crypto.randomUUID()}`;
    const done = await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      script = [...steps];
      const { killed, revive } = dying(state.storage, writes);
      let events: ReturnType<typeof parseSse> = [];
      try {
        const result = await new ScriptedConversation(state, offline).sendMessage({ conversationId: id }, message);
        if (result.ok) events = parseSse(await new Response(result.value.events).text());
      } catch (error) {
        if (!(error instanceof Killed)) throw error;
      }
      revive();
      if (!killed()) return true;
      if (events.length === 0) return false;
      const restarted = new ConversationStore(state.storage);
      const last = events.at(-1) as { code?: string; status?: string };
      const status = restarted.turns.record(1)?.status ?? "none";
      ends.push(
        `${writes}: ${events.map((e) => e.type).join(",")} ${String(last.code ?? last.status)} ${status} ${restarted.messages().length}`,
      );
      return false;
    });
    if (done) return ends;
    expect(writes, "the turn should end within 40 writes").toBeLessThan(40);
  }
}

/**
 * One turn of `script` in a fresh conversation whose storage `breaks` (patching it; it is put back
 * after): the events streamed, the turn as stored after, and what was logged as an error.
 */
async function turnOnBrokenStorage(prefix: string, breaks: (storage: DurableObjectStorage) => () => void) {
  const id = `${prefix}-${crypto.randomUUID()}`;
  return runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
    script = [{ text: "Hello there." }];
    const mend = breaks(state.storage);
    const logged = vi.spyOn(console, "error");
    try {
      const result = await new ScriptedConversation(state, offline).sendMessage({ conversationId: id }, "hello");
      const events = result.ok ? parseSse(await new Response(result.value.events).text()) : [];
      return { events, turn: new ConversationStore(state.storage).turns.record(1), errors: logged.mock.calls.map(String) };
    } finally {
      logged.mockRestore();
      mend();
    }
  });
}

describe("storage that fails outside a step's commit", () => {
  it("stores the turn failed with internal_error at once when only its end's write failed", async () => {
    const { events, turn, errors } = await turnOnBrokenStorage("end-fails-once", (storage) => {
      const { sql } = storage;
      const exec = sql.exec;
      let failed = false;
      (sql as unknown as Record<string, unknown>).exec = (query: string, ...bindings: SqlStorageValue[]) => {
        if (!failed && /UPDATE turns SET status = \?/.test(query) && bindings[0] === "completed") {
          failed = true;
          throw new Error("disk busy");
        }
        return exec.call(sql, query, ...bindings);
      };
      return () => delete (sql as unknown as Record<string, unknown>).exec;
    });
    expect(events.at(-1)).toMatchObject({ type: "error", code: "internal_error", message: "The turn could not be stored." });
    expect(turn).toMatchObject({ status: "failed", error: "internal_error" });
    // The operator's log says what failed.
    expect(errors).toEqual(["conversation turn failed: disk busy"]);
  });

  it("ends the stream as any storage failure does when only a step's commit failed, and stores the turn failed", async () => {
    const { events, turn, errors } = await turnOnBrokenStorage("commit-fails-once", (storage) => {
      const patched = storage as unknown as Record<string, unknown>;
      const transactionSync = storage.transactionSync;
      let writes = 0;
      // The conversation's creation, the turn's beginning, then the step's commit: that one fails, once.
      patched.transactionSync = <T>(write: () => T): T => {
        if (++writes === 3) throw new Error("disk busy");
        return transactionSync.call(storage, write) as T;
      };
      return () => delete patched.transactionSync;
    });
    expect(events.map((e) => e.type)).toEqual(["run-start", "step-start", "text-delta", "text-delta", "error"]);
    // The client is told what any storage failure tells it; the cause is in the log.
    expect(events.at(-1)).toMatchObject({ type: "error", code: "internal_error", message: "The turn could not be stored." });
    expect(turn).toMatchObject({ status: "failed", error: "internal_error" });
    expect(errors).toEqual(["conversation step not stored: disk busy"]);
  });

  it("ends the turn's stream with an error at every write of the turn, its end too, and the next start has the turn failed", async () => {
    // The turn's beginning, its step's commit, its end: the stream never says `done` for a turn storage does not hold as done.
    expect(await killedTurns([{ text: "Hello there." }], "hello")).toEqual([
      "1: run-start,error internal_error none 0",
      "2: run-start,step-start,text-delta,text-delta,error internal_error failed 1",
      "3: run-start,step-start,text-delta,text-delta,step-finish,error internal_error failed 2",
    ]);
  });
});
