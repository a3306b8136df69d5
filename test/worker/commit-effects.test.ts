/**
 * What follows a write comes from what it changed, not from who wrote: a schedule entry added or
 * removed by a path that calls nothing else (as a new kind of timer would) still gets the object's
 * alarm set to the earliest entry, and cleared once nothing waits.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.ts";
import { assembleConversation } from "../../src/conversation/conversation-parts.ts";
import { supportLike } from "../support/networks.ts";

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
      store.schedule.add({ kind: "approval-expiry", dueAt: sooner });
      expect(await state.storage.getAlarm()).toBe(sooner);
      store.endTurn({ status: "completed" }, []);
      expect(await state.storage.getAlarm()).toBe(sooner);
      store.schedule.removeKind("approval-expiry");
      expect(await state.storage.getAlarm()).toBeNull();
    });
  });
});
