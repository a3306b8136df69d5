/**
 * What follows a write comes from what it changed, not from who wrote: a schedule entry added or
 * removed by a path that calls nothing else (as a new kind of timer would) still gets the object's
 * alarm set to the earliest entry, and cleared once nothing waits.
 */
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.ts";
import { assembleConversation } from "../../src/conversation/conversation-parts.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { supportLike } from "../support/networks.ts";
import { chat, scenario } from "../support/worker.ts";
import { decideTurn, waitingOn } from "../support/waits.ts";

describe("the alarm follows the schedule", () => {
  it("is set to the earliest entry by any write that changes the schedule, and cleared when nothing waits", async () => {
    const id = `effects-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      const { store } = assembleConversation(state, env, readConfig(env), { network: supportLike() });
      store.create(id, "triage", "grant");
      const later = Date.now() + 3_600_000;
      const sooner = Date.now() + 600_000;
      // Written outside any transaction, and inside one with other writes: no call of their own follows either.
      const first = store.schedule.add({ kind: "person-timeout", dueAt: later, person: "desk", handedBy: "triage" });
      expect(await state.storage.getAlarm()).toBe(later);
      store.beginTurn("hi");
      store.commitStep({ messages: [{ role: "user", content: "hi" }] }, []);
      store.schedule.removeWithNextWrite(first.id);
      store.schedule.add({ kind: "request-expiry", dueAt: sooner });
      expect(await state.storage.getAlarm()).toBe(sooner);
      store.endTurn({ status: "completed" }, []);
      expect(await state.storage.getAlarm()).toBe(sooner);
      store.schedule.removeKind("request-expiry");
      expect(await state.storage.getAlarm()).toBeNull();
      // An erased conversation has nothing to wake for; one made again under its name sets its alarm afresh, even for the same instant.
      store.schedule.add({ kind: "person-timeout", dueAt: later, person: "desk", handedBy: "triage" });
      expect(await state.storage.getAlarm()).toBe(later);
      await store.erase();
      expect(await state.storage.getAlarm()).toBeNull();
      store.create(id, "triage", "grant");
      store.schedule.add({ kind: "person-timeout", dueAt: later, person: "desk", handedBy: "triage" });
      expect(await state.storage.getAlarm()).toBe(later);
    });
  });
});

describe("the inbox is told", () => {
  it("once at a leg's end, not at each commit of the leg, and at each change outside a leg", async () => {
    const id = `effects-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      const { store, inbox, effects } = assembleConversation(state, env, readConfig(env), { network: supportLike() });
      let tells = 0;
      inbox.tell = async () => {
        tells++;
        return undefined;
      };
      /** The tells so far, once what the writes call for is done. */
      const told = async () => {
        await effects.settled();
        return tells;
      };
      store.create(id, "triage", "grant");
      const created = await told();
      store.beginTurn("hi");
      store.commitStep({ messages: [{ role: "user", content: "hi" }] }, []);
      store.commitStep({ messages: [{ role: "assistant", agent: "triage", content: "Hello." }] }, []);
      store.commitStep({ messages: [], suspension: waitingOn("a", "b") }, []);
      expect((await told()) - created, "while the leg runs").toBe(0);
      store.endTurn({ status: "awaiting_approval" }, []);
      expect((await told()) - created, "at the leg's end").toBe(1);
      // A decision that does not resume the turn is a change outside a leg; one that resumes opens a leg.
      decideTurn(store, [{ toolCallId: "a", approved: true }], false);
      expect((await told()) - created, "a decision outside a leg").toBe(2);
      decideTurn(store, [{ toolCallId: "b", approved: true }], true);
      store.commitStep({ messages: [{ role: "assistant", agent: "triage", content: "Done." }] }, []);
      expect((await told()) - created, "while the resumed leg runs").toBe(2);
      store.endTurn({ status: "completed" }, []);
      expect((await told()) - created, "at the resumed leg's end").toBe(3);
      // Outside a leg, a commit with a message (a person's answer) changes the entry; one with nothing the entry shows does not.
      store.commitStep({ messages: [{ role: "assistant", agent: "desk", content: "A person here." }] }, []);
      expect((await told()) - created, "a person's message outside a leg").toBe(4);
      store.commitStep({ messages: [] }, []);
      expect((await told()) - created, "a commit that changes nothing the entry shows").toBe(4);
    });
  });
});

describe("with no NOTIFY_URL", () => {
  it("nothing is queued for the app, and a notification queued while it was set is dropped unsent when the alarm rings", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
    ]);
    expect((await chat(s.conversationId, s.tag("refund A1001"))).at(-1)).toMatchObject({ status: "awaiting_approval" });
    const stub = env.CONVERSATIONS.getByName(s.conversationId);
    const outbox = () => runInDurableObject(stub, (_o, state) => state.storage.sql.exec(`SELECT * FROM outbox`).toArray());
    expect(await outbox()).toEqual([]);
    await runInDurableObject(stub, async (_o, state) => {
      new ConversationStore(state.storage).outbox.add("left-over", JSON.stringify({ reason: "request_waiting" }), Date.now() - 1);
      await state.storage.setAlarm(Date.now() + 3_600_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    // Not tried (a try would have counted an attempt and kept it for the next): gone.
    expect(await outbox()).toEqual([]);
  });
});
