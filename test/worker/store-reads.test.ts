/**
 * What the conversation's store keeps in memory between turns (the history, its latest handoff and
 * compaction, which tasks have push configs) against what its SQLite holds: a new store on the
 * same storage, as after a restart, must read the same; and what a turn costs in statements.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import type { HandoffRecord } from "../../src/runtime/handoff/types.ts";
import { chat, scenario } from "../support/worker.ts";

const transfer = (from: string, to: string, toolCallId: string): HandoffRecord => ({
  kind: "transfer",
  from,
  to,
  toolCallId,
  reason: `${from} passes on`,
  stepIndex: 1,
});

/** One turn: the user's message, then a step that hands over (and summarizes the history, when told to). */
function turnWith(store: ConversationStore, text: string, handoff: HandoffRecord, summary?: string): void {
  store.beginTurn(text);
  store.commitStep({ messages: [{ role: "user", content: text }] }, []);
  store.commitStep(
    {
      messages: [
        {
          role: "assistant",
          agent: handoff.from,
          content: "",
          toolCalls: [{ id: "c", name: `transfer_to_${handoff.to}`, arguments: "{}" }],
        },
        { role: "tool", toolCallId: "c", name: `transfer_to_${handoff.to}`, content: "ok", isError: false },
      ],
      holding: { activeAgent: handoff.to, handoffCount: 1, callers: [], agentStates: {}, context: {} },
      handoff,
      ...(summary ? { compaction: { replaces: 2, summary } } : {}),
    },
    [],
  );
  store.endTurn({ status: "completed" }, []);
}

describe("the store's kept reads", () => {
  it("give each turn the snapshot a restarted object would read: the latest handoff and compaction, after commits and a rewind", async () => {
    const id = `reads-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const store = new ConversationStore(state.storage);
      const fresh = () => new ConversationStore(state.storage).snapshot();
      store.create(id, "triage", "grant");
      expect(store.snapshot()).toEqual(fresh());
      turnWith(store, "first", transfer("triage", "billing", "c1"));
      expect(store.snapshot().lastHandoff).toMatchObject({ from: "triage", to: "billing", toolCallId: "c1" });
      expect(store.snapshot()).toEqual(fresh());
      turnWith(store, "second", transfer("billing", "shipping", "c2"), "They asked twice.");
      expect(store.snapshot()).toMatchObject({
        lastHandoff: { from: "billing", to: "shipping" },
        compaction: { replaces: 2, summary: "They asked twice." },
      });
      expect(store.snapshot()).toEqual(fresh());
      // A rewound turn's handoff and compaction go with it.
      store.rewindLastTurn();
      expect(store.snapshot().lastHandoff).toMatchObject({ from: "triage", to: "billing" });
      expect(store.snapshot().compaction).toBeUndefined();
      expect(store.snapshot()).toEqual(fresh());
    });
  });
});

describe("the history an object at rest keeps", () => {
  it("is bounded: past the bound it is let go at a leg's end and read again, whole, for each use until the next leg", async () => {
    const id = `reads-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const reads: string[] = [];
      const sql = state.storage.sql;
      const exec = sql.exec.bind(sql);
      sql.exec = ((query: string, ...bindings: SqlStorageValue[]) => {
        if (query.startsWith("SELECT data FROM messages ORDER BY seq")) reads.push(query);
        return exec(query, ...bindings);
      }) as typeof sql.exec;
      const store = new ConversationStore(state.storage, { keptHistoryChars: 2000 });
      const fresh = () => new ConversationStore(state.storage).messages();
      store.create(id, "triage", "grant");
      const turn = (text: string) => {
        store.beginTurn(text);
        store.commitStep({ messages: [{ role: "user", content: text }] }, []);
        store.commitStep({ messages: [{ role: "assistant", agent: "triage", content: `You said ${text.length} characters.` }] }, []);
        store.endTurn({ status: "completed" }, []);
      };
      turn("short");
      const readsOfOneTurn = reads.length;
      // Under the bound: kept, so reading it again costs nothing.
      expect(store.messages()).toHaveLength(2);
      expect(reads).toHaveLength(readsOfOneTurn);
      // Past it: the leg keeps what it needs, and lets it go at its end.
      turn("x".repeat(3000));
      expect(reads).toHaveLength(readsOfOneTurn);
      const at = reads.length;
      expect(store.messages()).toEqual(fresh());
      expect(store.messages()).toHaveLength(4);
      // At rest each use reads it (fresh() read it once more).
      expect(reads).toHaveLength(at + 3);
      // The next leg reads it once and keeps it while it runs.
      turn("again");
      expect(reads).toHaveLength(at + 4);
      expect(store.messages()).toEqual(fresh());
      expect(store.messages().map((m) => m.content)).toEqual([
        "short",
        "You said 5 characters.",
        "x".repeat(3000),
        "You said 3000 characters.",
        "again",
        "You said 5 characters.",
      ]);
    });
  });
});

describe("a step's messages", () => {
  it("are stored in order however many there are: more than one statement binds (the limit is 100 parameters)", async () => {
    const id = `reads-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(id, "billing", "grant");
      store.beginTurn("look them all up");
      const calls = Array.from({ length: 120 }, (_, i) => ({ id: `c${i}`, name: "lookup_order", arguments: `{"orderId":"A${i}"}` }));
      const messages = [
        { role: "user" as const, content: "look them all up" },
        { role: "assistant" as const, agent: "billing", content: "", toolCalls: calls },
        ...calls.map((call) => ({
          role: "tool" as const,
          toolCallId: call.id,
          name: call.name,
          content: `order ${call.id}`,
          isError: false,
        })),
      ];
      store.commitStep({ messages }, []);
      expect(store.messages()).toEqual(messages);
      expect(new ConversationStore(state.storage).messages()).toEqual(messages);
      expect(state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM messages").one().n).toBe(122);
    });
  });
});

describe("a turn's statements", () => {
  it("are few: a tool call and an answer are stored with one insert of messages per step and no reads of what the store keeps", async () => {
    const s = await scenario([
      { toolCalls: [{ name: "transfer_to_billing", arguments: "{}" }] },
      { text: "Billing here." },
      { toolCalls: [{ name: "lookup_order", arguments: JSON.stringify({ orderId: "A1001" }) }] },
      { text: "Shipped." },
    ]);
    await chat(s.conversationId, s.tag("hi"));
    const stub = env.CONVERSATIONS.getByName(s.conversationId);
    const seen: string[] = [];
    await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      const exec = sql.exec.bind(sql);
      sql.exec = ((query: string, ...bindings: SqlStorageValue[]) => {
        seen.push(query.replace(/\s+/g, " ").slice(0, 40));
        return exec(query, ...bindings);
      }) as typeof sql.exec;
    });
    const events = await chat(s.conversationId, "where is A1001?");
    expect(events.filter((e) => e.type === "tool-result")).toHaveLength(1);
    const count = (start: string) => seen.filter((query) => query.startsWith(start)).length;
    // The user's message, the step with its call and the call's result (one statement for both), the answer.
    expect(count("INSERT INTO messages")).toBe(3);
    expect(count("SELECT")).toBe(0);
    expect(seen.length).toBeLessThanOrEqual(11);
  });
});
