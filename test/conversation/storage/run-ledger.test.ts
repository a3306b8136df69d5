/**
 * The ledger of runs (src/conversation/storage/run-ledger.ts) on a conversation's own SQLite, in workerd: what a delegated
 * step stores, and a background run's life as its rows and schedule entries show it (started with a lease, waiting with
 * its deadline, decided, resumed, finished with a follow-up, ended when its entry goes), with what it spent and its spans.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ConversationStore } from "../../../src/conversation/storage/conversation-store.ts";
import type { DelegationEntry } from "../../../src/conversation/storage/run-ledger.ts";
import { BACKGROUND_LEASE_MS } from "../../../src/conversation/schedule/background-work.ts";
import { newHolding } from "../../../src/runtime/holding.ts";
import type { Suspension } from "../../../src/runtime/wait/suspension.ts";
import type { UserRequest } from "../../../src/runtime/wait/requests.ts";

const DAY = 24 * 60 * 60 * 1000;
const question = (toolCallId: string, expiresAt?: number): UserRequest => ({
  kind: "question",
  toolCallId,
  name: "arrange_redelivery",
  args: {},
  agent: "parcel-search",
  message: "When?",
  schema: { type: "string" },
  ...(expiresAt === undefined ? {} : { expiresAt: new Date(expiresAt).toISOString() }),
});
const suspension = (...pending: UserRequest[]): Suspension => ({
  assistant: {
    role: "assistant",
    agent: "parcel-search",
    content: null,
    toolCalls: pending.map((p) => ({ id: p.toolCallId, name: p.name, arguments: "{}" })),
  },
  results: pending.map(() => null),
  pending,
  progress: {
    handoffs: [],
    agentSteps: 1,
    errorSteps: 0,
    stepIndex: 1,
    usage: { modelCalls: 1, inputTokens: 1, outputTokens: 1, toolCalls: 0 },
  },
  trailing: [],
});
const span = (id: string) => ({ id, parentId: "c1", kind: "agent" as const, name: id, start: 1, end: 2, attributes: {} });

/** A fresh conversation's store, one turn begun, on its object's own storage. */
function withStore<T>(run: (store: ConversationStore, sql: SqlStorage) => T): Promise<T> {
  const id = `ledger-unit-${crypto.randomUUID()}`;
  return runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
    const store = new ConversationStore(state.storage);
    store.create(id, "shipping", "grant");
    store.beginTurn("my parcel is lost");
    return run(store, state.storage.sql);
  });
}

/** A background delegation's entry in the schedule, as `ctx.delegateInBackground` adds it. */
function delegation(store: ConversationStore, toolCallId = "bg1"): DelegationEntry {
  const entry = store.schedule.add({
    kind: "delegation",
    dueAt: Date.now(),
    agent: "parcel-search",
    request: "find it",
    askedBy: "shipping",
    toolCallId,
  });
  return entry as DelegationEntry;
}

const dueOf = (store: ConversationStore, id: string) => store.schedule.get(id)?.dueAt;
const expiries = (store: ConversationStore) => store.schedule.list().filter((e) => e.kind === "request-expiry");

describe("a delegated step", () => {
  it("stores the run's holder and wait where the step changed them, and keeps what it did not change", () =>
    withStore((store) => {
      const { runs } = store;
      runs.step(1, ["d"], "checker", { messages: [] }, 0);
      expect(runs.state(1, ["d"])).toBeUndefined();
      const waiting = suspension(question("q1"));
      runs.step(1, ["d"], "checker", { messages: [], suspension: waiting }, 2);
      expect(runs.state(1, ["d"])).toEqual({ holding: newHolding("checker"), suspension: waiting, asked: 2 });
      // A change of holder alone keeps the wait; a wait alone keeps the holder.
      const moved = { ...newHolding("checker"), handoffCount: 1 };
      runs.step(1, ["d"], "checker", { messages: [], holding: moved }, 3);
      expect(runs.state(1, ["d"])).toEqual({ holding: moved, suspension: waiting, asked: 3 });
      runs.step(1, ["d"], "checker", { messages: [], suspension: null }, 3);
      expect(runs.state(1, ["d"])).toEqual({ holding: moved, suspension: null, asked: 3 });
      // Paths are keyed whole: a child of a child is a run of its own.
      runs.step(1, ["d", "e"], "checker", { messages: [], suspension: waiting }, 0);
      expect(runs.state(1, ["d", "e"])?.suspension).toEqual(waiting);
      expect(runs.state(1, ["d"])?.suspension).toBeNull();
      expect(runs.state(2, ["d"])).toBeUndefined();
      // A run's first step that changes only its holder: its wait is none.
      runs.step(1, ["f"], "checker", { messages: [], holding: moved }, 0);
      expect(runs.state(1, ["f"])).toEqual({ holding: moved, suspension: null, asked: 0 });
    }));
});

describe("a background run", () => {
  it("starts with a lease, waits with its deadline planned and its entry looking again a day on, and is listed waiting", () =>
    withStore((store) => {
      const { runs } = store;
      const entry = delegation(store);
      const before = Date.now();
      runs.begin(entry, before + BACKGROUND_LEASE_MS);
      expect(dueOf(store, entry.id)).toBe(before + BACKGROUND_LEASE_MS);
      expect(runs.get(entry.id)).toMatchObject({
        id: entry.id,
        turn: 1,
        toolCallId: "bg1",
        agent: "parcel-search",
        status: "running",
        endedAt: null,
      });
      const deadline = Date.now() + 60_000;
      runs.step(1, ["bg1"], "parcel-search", { messages: [], suspension: suspension(question("q1", deadline), question("q2")) }, 0);
      runs.wait(entry, "awaiting_input", [span("s1")]);
      expect(runs.get(entry.id)?.status).toBe("awaiting_input");
      expect(dueOf(store, entry.id)).toBeGreaterThanOrEqual(before + DAY);
      expect(expiries(store)).toMatchObject([{ run: entry.id, dueAt: deadline }]);
      expect(runs.waits()).toEqual([
        {
          id: entry.id,
          requests: [question("q1", deadline), question("q2")].map((r) => ({
            ...r,
            delegated: { path: ["bg1"], toolCallId: r.toolCallId },
          })),
          decisions: [],
        },
      ]);
      expect(runs.spans(1)).toEqual([span("s1")]);
    }));

  it("keeps its own deadline beside another waiting run's, and a path as its calls' ids joined by slashes", () =>
    withStore((store, sql) => {
      const { runs } = store;
      const soon = Date.now() + 60_000;
      const later = Date.now() + 90_000;
      for (const [call, deadline] of [
        ["bg1", soon],
        ["bg2", later],
      ] as const) {
        const entry = delegation(store, call);
        runs.begin(entry, Date.now() + BACKGROUND_LEASE_MS);
        runs.step(1, [call], "parcel-search", { messages: [], suspension: suspension(question(`q-${call}`, deadline)) }, 0);
        runs.wait(entry, "awaiting_input", []);
      }
      expect(expiries(store).map((e) => e.dueAt)).toEqual([soon, later]);
      runs.step(1, ["d", "e"], "checker", { messages: [], suspension: null }, 0);
      expect(sql.exec<{ path: string }>(`SELECT path FROM runs WHERE mode = 'delegation'`).toArray()).toEqual([{ path: "d/e" }]);
      // A run that began and has not waited or ended has no spans yet.
      expect(runs.spans(1)).toEqual([]);
    }));

  it("whose stored row does not fit says which part of it", () =>
    withStore((store, sql) => {
      const { runs } = store;
      const entry = delegation(store);
      runs.begin(entry, Date.now() + BACKGROUND_LEASE_MS);
      sql.exec(`UPDATE runs SET spans = '[{"id": 1}]', decisions = '[{"id": 1}]', state = '{"asked": "x"}'`);
      expect(() => runs.spans(1)).toThrow(/stored run's spans does not fit/);
      expect(() => runs.state(1, ["bg1"])).toThrow(/stored run's state does not fit/);
      expect(() => runs.waits()).toThrow(/stored run's state does not fit/);
      sql.exec(`UPDATE runs SET state = NULL`);
      expect(() => runs.waits()).toThrow(/stored run's decisions does not fit/);
      expect(() => runs.wait(entry, "awaiting_input", [])).toThrow(/stored run's spans does not fit/);
    }));

  it("is decided one request at a time: due again only once none is left, its deadline planned for what still waits", () =>
    withStore((store) => {
      const { runs } = store;
      const entry = delegation(store);
      runs.begin(entry, Date.now() + BACKGROUND_LEASE_MS);
      const later = Date.now() + 120_000;
      runs.step(
        1,
        ["bg1"],
        "parcel-search",
        { messages: [], suspension: suspension(question("q1", Date.now() + 60_000), question("q2", later)) },
        0,
      );
      runs.wait(entry, "awaiting_input", []);
      const [wait] = runs.waits();
      const first = runs.decide(wait!, [{ toolCallId: "q1", answer: "monday" }]);
      expect(first.decisions).toEqual([{ toolCallId: "q1", answer: "monday" }]);
      expect(runs.waits()[0]!.decisions).toEqual([{ toolCallId: "q1", answer: "monday" }]);
      expect(expiries(store)).toMatchObject([{ run: entry.id, dueAt: later }]);
      expect(dueOf(store, entry.id)).toBeGreaterThan(Date.now() + DAY / 2);
      const now = Date.now();
      runs.decide(first, [{ toolCallId: "q2", approved: false }]);
      expect(dueOf(store, entry.id)).toBeLessThanOrEqual(Date.now());
      expect(dueOf(store, entry.id)).toBeGreaterThanOrEqual(now);
      expect(expiries(store)).toEqual([]);
      // Carried on: running again, no longer listed as waiting, its entry a lease on.
      runs.resume(entry.id, now + BACKGROUND_LEASE_MS);
      expect(runs.get(entry.id)?.status).toBe("running");
      expect(runs.waits()).toEqual([]);
      expect(dueOf(store, entry.id)).toBe(now + BACKGROUND_LEASE_MS);
    }));

  it("finishes once: its status and end, its spans added to the earlier leg's, a follow-up to whoever asked in place of its entry", () =>
    withStore((store) => {
      const { runs } = store;
      const entry = delegation(store);
      runs.begin(entry, Date.now() + BACKGROUND_LEASE_MS);
      runs.spend(entry.id, { modelCalls: 2, inputTokens: 30, outputTokens: 4, toolCalls: 1 });
      runs.spend(entry.id, { inputTokens: 5 });
      runs.wait(entry, "awaiting_input", [span("s1")]);
      runs.finish(entry, "completed", "It is at the depot.", [span("s2")]);
      const run = runs.get(entry.id)!;
      expect(run.status).toBe("completed");
      expect(run.endedAt).toBeGreaterThanOrEqual(run.startedAt);
      expect(runs.spans(1)).toEqual([span("s1"), span("s2")]);
      expect(store.schedule.get(entry.id)).toBeUndefined();
      expect(store.schedule.list()).toMatchObject([
        { kind: "follow-up", turn: 1, note: "It is at the depot.", agent: "shipping", toolCallId: "bg1", delegated: "parcel-search" },
      ]);
      expect(runs.spent()).toEqual({ modelCalls: 2, inputTokens: 35, outputTokens: 4, toolCalls: 1 });
      expect(runs.latest(5)).toEqual([run]);
      // A second end (a ring that found it cut off, after all) tells no one again: its entry is gone.
      runs.finish(entry, "interrupted", "again");
      expect(store.schedule.list().filter((e) => e.kind === "follow-up")).toHaveLength(1);
    }));

  it("that ends before it started (cut off at once) gets its row then; one whose entry went ends without a follow-up", () =>
    withStore((store, sql) => {
      const { runs } = store;
      const cut = delegation(store, "bg1");
      runs.finish(cut, "interrupted", "It was interrupted.");
      expect(runs.get(cut.id)).toMatchObject({ status: "interrupted", toolCallId: "bg1" });
      expect(runs.spans(1)).toEqual([]);
      const gone = delegation(store, "bg2");
      runs.begin(gone, Date.now() + BACKGROUND_LEASE_MS);
      // Its start is when it began, not when it ended.
      sql.exec(`UPDATE runs SET started_at = 5 WHERE entry = ?`, gone.id);
      store.schedule.remove(gone.id);
      runs.finish(gone, "completed", "too late");
      expect(runs.get(gone.id)).toMatchObject({ status: "completed", startedAt: 5 });
      expect(store.schedule.list().map((e) => e.kind)).toEqual(["follow-up"]);
      // Only background runs count here: a run in the turn counts in its turn's spending.
      runs.step(1, ["d"], "checker", { messages: [], suspension: null }, 0);
      expect(
        runs
          .latest(5)
          .map((r) => r.toolCallId)
          .sort(),
      ).toEqual(["bg1", "bg2"]);
    }));

  it("waiting when its entry is cancelled, or goes with a rewound turn, ends interrupted and its deadline goes", () =>
    withStore((store, sql) => {
      const { runs } = store;
      const entry = delegation(store);
      runs.begin(entry, Date.now() + BACKGROUND_LEASE_MS);
      runs.step(1, ["bg1"], "parcel-search", { messages: [], suspension: suspension(question("q1", Date.now() + 60_000)) }, 0);
      runs.wait(entry, "awaiting_input", []);
      const still = delegation(store, "bg2");
      runs.begin(still, Date.now() + BACKGROUND_LEASE_MS);
      runs.endOrphanedWaits();
      expect(runs.get(entry.id)?.status).toBe("awaiting_input");
      store.schedule.remove(entry.id);
      // What follows a write (the owner's inbox, no longer showing the run waiting) hears that the entry changed.
      const told: string[] = [];
      store.onWritten((written) => told.push(...written.changed));
      runs.endOrphanedWaits();
      expect(told).toContain("entry");
      const ended = runs.get(entry.id)!;
      expect(ended.status).toBe("interrupted");
      expect(ended.endedAt).not.toBeNull();
      expect(runs.get(still.id)?.status).toBe("running");
      expect(expiries(store)).toEqual([]);
      expect(sql.exec<{ decisions: string | null }>(`SELECT decisions FROM runs WHERE entry = ?`, entry.id).one().decisions).toBeNull();
    }));
});
