/**
 * What follows from a write follows from the write, not from who wrote it (EventEffects). A new
 * way of changing a conversation (here: the storage's own commits, made by hand, with no turn
 * driver, person hold or route involved) gets every effect without a call of its own: A2A clients
 * that asked are pushed the task's state, calls left waiting get their deadline and the app is told,
 * a conversation a person now holds goes on the desk with the person's deadline, a person's answer
 * and hand back reach the desk and the app.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.ts";
import { assembleConversation } from "../../src/conversation/conversation-parts.ts";
import { deskOf } from "../../src/desk/operator-desk.ts";
import type { StoredEvent } from "../../src/wire/sse.ts";
import type { HandBackRecord, HandoffRecord, TransferRecord } from "../../src/runtime/handoff/types.ts";
import type { AssistantMessage } from "../../src/runtime/messages.ts";
import { type Suspension } from "../../src/runtime/wait/suspension.ts";
import { TURN_START } from "../../src/runtime/turn-progress.ts";
import type { WorkerVars } from "../../src/worker-vars.ts";
import { createSupportNetwork } from "../../src/agents/network.ts";
import { pushConfigsPart } from "../../src/a2a/server/push-configs.ts";

/** A conversation's parts as the object puts them together, on a fresh object's storage; `work` is what the test writes with them. */
async function withParts(work: (parts: ReturnType<typeof assembleConversation>) => Promise<void>): Promise<string> {
  const id = `effects-${crypto.randomUUID()}`;
  await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
    const vars = env as unknown as WorkerVars;
    const parts = assembleConversation(state, vars, readConfig(vars), {
      network: createSupportNetwork(undefined, { supportDeskAnswerWithin: "1h" }),
      parts: [pushConfigsPart],
    });
    parts.store.create(id, "triage", "grant");
    await work(parts);
    await parts.events.settled();
  });
  return id;
}

const outboxOf = (id: string) =>
  runInDurableObject(env.CONVERSATIONS.getByName(id), (_o, state) =>
    state.storage.sql
      .exec<{ body: string; target: string | null }>(`SELECT body, target FROM outbox ORDER BY rowid`)
      .toArray()
      .map((row) => ({
        body: JSON.parse(row.body) as Record<string, unknown>,
        pushed: row.target !== null,
        to: row.target && (JSON.parse(row.target) as { url: string; headers: Record<string, string> }),
      })),
  );

const scheduleOf = (id: string) =>
  runInDurableObject(env.CONVERSATIONS.getByName(id), (_o, state) =>
    state.storage.sql
      .exec<{ kind: string }>(`SELECT kind FROM schedule`)
      .toArray()
      .map((row) => row.kind),
  );

const done = (id: number, status: "awaiting_approval" | "awaiting_human", agent: string, handoffs: HandoffRecord[] = []): StoredEvent => ({
  id,
  type: "done",
  status,
  text: "",
  agent,
  handoffs,
  handoffCount: handoffs.length,
});

describe("effects that follow from writes", () => {
  it("a leg that ends waiting for approval, committed by hand: the push, the deadline, the app told", async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const id = await withParts(async ({ store }) => {
      const state = store.beginTurn("refund A1001");
      store.protocolRows.of("a2a").set(state.turn, "p1", { id: "p1", url: "https://client.example/push", token: "t" });
      const pending = [
        { kind: "approval" as const, toolCallId: "rf", name: "refund", args: { orderId: "A1001" }, agent: "billing", expiresAt },
      ];
      const assistant: AssistantMessage = {
        role: "assistant",
        agent: "billing",
        content: "",
        toolCalls: [{ id: "rf", name: "refund", arguments: "{}" }],
      };
      const suspension: Suspension = { assistant, results: [null], pending, progress: TURN_START, trailing: [] };
      store.commitStep({ messages: [{ role: "user", content: "refund A1001" }], suspension }, [
        { id: 1, type: "run-start", conversationId: state.conversationId, agent: "billing", model: "m" },
      ]);
      store.endTurn({ status: "awaiting_approval" }, [done(2, "awaiting_approval", "billing")]);
    });
    const outbox = await outboxOf(id);
    expect(outbox.filter((m) => m.pushed).map((m) => (m.body.statusUpdate as { status: { state: string } }).status.state)).toEqual([
      "TASK_STATE_INPUT_REQUIRED",
    ]);
    expect(outbox.find((m) => m.pushed)?.to).toEqual({ url: "https://client.example/push", headers: { "x-a2a-notification-token": "t" } });
    expect(outbox.find((m) => !m.pushed)?.body).toMatchObject({ reason: "request_waiting", pending: [{ toolCallId: "rf", expiresAt }] });
    expect(await scheduleOf(id)).toEqual(["request-expiry"]);
  });

  it("a person's hold, answer and hand back committed by hand: the desk, the person's deadline, the app and A2A clients told", async () => {
    const desk = deskOf(env)!;
    const id = await withParts(async ({ store }) => {
      const state = store.beginTurn("a person please");
      store.protocolRows.of("a2a").set(state.turn, "p1", { id: "p1", url: "https://client.example/push", token: "t" });
      const transfer: TransferRecord = { kind: "transfer", from: "triage", to: "support-desk", toolCallId: "p", stepIndex: 0 };
      const holding = { ...state.holding, activeAgent: "support-desk", handoffCount: 1 };
      store.commitStep({ messages: [], holding, handoff: transfer }, [{ id: 1, type: "handoff", ...transfer }]);
      store.endTurn({ status: "awaiting_human" }, [done(2, "awaiting_human", "support-desk", [transfer])]);
    });
    expect(await scheduleOf(id)).toEqual(["person-timeout"]);
    expect((await desk.list()).find((card) => card.conversationId === id)).toMatchObject({ person: "support-desk", status: "waiting" });

    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      const vars = env as unknown as WorkerVars;
      const { store, events } = assembleConversation(state, vars, readConfig(vars), {
        network: createSupportNetwork(),
        parts: [pushConfigsPart],
      });
      const answer: StoredEvent = { id: 3, type: "operator-message", agent: "support-desk", text: "Sam here.", operator: "Sam" };
      store.commitStep({ messages: [{ role: "assistant", agent: "support-desk", content: "Sam here." }] }, [answer]);
      await events.settled();
    });
    expect((await desk.list()).find((card) => card.conversationId === id)).toMatchObject({ status: "held", operator: { name: "Sam" } });
    expect((await outboxOf(id)).filter((m) => !m.pushed).map((m) => m.body.reason)).toEqual(["person_answered"]);

    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      const vars = env as unknown as WorkerVars;
      const { store, events } = assembleConversation(state, vars, readConfig(vars), {
        network: createSupportNetwork(),
        parts: [pushConfigsPart],
      });
      const back: HandBackRecord = { kind: "hand-back", from: "support-desk", to: "triage", note: "sorted" };
      const holding = { ...store.state()!.holding, activeAgent: "triage" };
      store.commitStep({ messages: [], holding, handoff: back }, [{ id: 4, type: "handoff", ...back }]);
      await events.settled();
    });
    expect((await desk.list()).find((card) => card.conversationId === id)).toBeUndefined();
    const pushed = (await outboxOf(id))
      .filter((m) => m.pushed)
      .map((m) => (m.body.statusUpdate as { status: { state: string } }).status.state);
    expect(pushed).toEqual(["TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED"]);
  });
});
