/**
 * A crash between "calls recorded" and "results committed": the process dies while the tools of a
 * step run. The next start of the object answers each call of that step (interrupted for those
 * that started, not run for the others) after the step's assistant message, so the history holds
 * every call that may have had an effect, exactly once; a row left from a step that did commit
 * changes nothing.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { NOT_RUN_CALL } from "../../src/runtime/calls-in-flight.ts";
import { findHistoryProblem } from "../../src/runtime/messages.ts";
import { INTERRUPTED_CALL } from "../../src/runtime/wait/suspension.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";

const assistant = {
  role: "assistant" as const,
  agent: "billing",
  content: "Refunding.",
  toolCalls: [
    { id: "r", name: "refund", arguments: '{"orderId":"A1001"}', plan: "tool" as const },
    { id: "t", name: "transfer_to_triage", arguments: "{}", plan: "transfer" as const },
  ],
};

describe("calls cut off by a crash", () => {
  it("are answered on the next start after the step's assistant message: interrupted if started, not run otherwise", async () => {
    const id = `cut-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(id, "billing", "grant");
      store.beginTurn("refund A1001");
      store.commitStep({ messages: [{ role: "user", content: "refund A1001" }] }, [
        { id: 1, type: "run-start", conversationId: id, agent: "billing", model: "m" },
      ]);
      store.recordCalls({ assistant, started: ["r"] });
      // The process dies here, while the refund runs: the next start is a new store on the same storage.
      const restarted = new ConversationStore(state.storage);
      const history = restarted.messages();
      expect(history.slice(1)).toEqual([
        assistant,
        { role: "tool", toolCallId: "r", name: "refund", content: INTERRUPTED_CALL, isError: true },
        { role: "tool", toolCallId: "t", name: "transfer_to_triage", content: NOT_RUN_CALL, isError: true },
      ]);
      expect(findHistoryProblem(history)).toBeNull();
      // The transfer of the cut-off step was never taken.
      expect(restarted.state()!.holding).toMatchObject({ activeAgent: "billing", handoffCount: 0 });
      expect(restarted.turns.record(1)).toMatchObject({ status: "failed", error: "interrupted" });
      const events = restarted.events.replay(1, 1)() ?? [];
      expect(events.map((e) => (e.type === "tool-result" ? `${e.type} ${e.toolCallId}` : e.type))).toEqual([
        "tool-result r",
        "tool-result t",
        "error",
      ]);
      // A third start finds nothing left to answer: each call is in the history once.
      expect(new ConversationStore(state.storage).messages()).toHaveLength(history.length);
    });
  });

  it("leave nothing to answer once the step committed, and the row is written once per step whose tools start", async () => {
    const id = `cut-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(id, "billing", "grant");
      store.beginTurn("refund A1001");
      store.commitStep({ messages: [{ role: "user", content: "refund A1001" }] }, []);
      const rows = () => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM calls_in_flight").one().n;
      store.recordCalls({ assistant: { ...assistant, toolCalls: [assistant.toolCalls[0]!] }, started: ["r"] });
      store.commitStep(
        {
          messages: [
            { ...assistant, toolCalls: [assistant.toolCalls[0]!] },
            { role: "tool", toolCallId: "r", name: "refund", content: "refunded", isError: false },
          ],
        },
        [],
      );
      expect(rows()).toBe(1);
      // Dies before the turn's end: the turn fails, but its committed step is left as it was.
      const restarted = new ConversationStore(state.storage);
      expect(restarted.messages().map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
      expect(restarted.messages().at(-1)).toMatchObject({ content: "refunded", isError: false });
    });
  });
  it("are answered when an earlier step's results are in the history: only the step's own calls tell that it committed", async () => {
    const id = `cut-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(id, "billing", "grant");
      store.beginTurn("refund A1001");
      const lookup = {
        role: "assistant" as const,
        agent: "billing",
        content: null,
        toolCalls: [{ id: "l", name: "lookup_order", arguments: "{}" }],
      };
      store.commitStep(
        {
          messages: [
            { role: "user", content: "refund A1001" },
            lookup,
            { role: "tool", toolCallId: "l", name: "lookup_order", content: "found", isError: false },
          ],
        },
        [],
      );
      store.recordCalls({ assistant, started: ["r"] });
      const history = new ConversationStore(state.storage).messages();
      expect(history.map((m) => (m.role === "tool" ? `tool ${m.toolCallId}` : m.role))).toEqual([
        "user",
        "assistant",
        "tool l",
        "assistant",
        "tool r",
        "tool t",
      ]);
      expect(findHistoryProblem(history)).toBeNull();
    });
  });

  it("leave a row of a rewound turn alone: a retry that dies before its first tool answers no call of the turn it replaced", async () => {
    const id = `cut-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(id, "billing", "grant");
      store.beginTurn("refund A1001");
      const one = { ...assistant, toolCalls: [assistant.toolCalls[0]!] };
      store.commitStep({ messages: [{ role: "user", content: "refund A1001" }] }, []);
      store.recordCalls({ assistant: one, started: ["r"] });
      store.commitStep({ messages: [one, { role: "tool", toolCallId: "r", name: "refund", content: "refunded", isError: false }] }, []);
      store.endTurn({ status: "completed" }, []);
      // The user edits the message: the turn is rewound, and the new one dies while the model streams, before any tool.
      store.rewindLastTurn();
      store.beginTurn("refund A1002 instead");
      store.commitStep({ messages: [{ role: "user", content: "refund A1002 instead" }] }, []);
      const restarted = new ConversationStore(state.storage);
      expect(restarted.messages()).toEqual([{ role: "user", content: "refund A1002 instead" }]);
      expect(restarted.turns.record(2)).toMatchObject({ status: "failed", error: "interrupted" });
      // Its leg stored no start (nothing of it was stored): the recovery writes one, so the leg starts as every leg does.
      expect((restarted.events.replay(2, 0)() ?? []).map((e) => e.type)).toEqual(["run-start", "error"]);
    });
  });
});
