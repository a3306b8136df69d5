/**
 * A daily budget configured without the inboxes that count it fails closed: a signed-in user's
 * turn is refused with invalid_configuration naming the binding, never let through uncounted.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { TurnAdmission } from "../../src/conversation/turn-admission.ts";
import type { TurnDriver } from "../../src/conversation/turns/turn-driver.ts";
import { supportLike } from "../support/networks.ts";

describe("USER_DAILY_TOKENS without INBOXES", () => {
  it("refuses a signed-in user's turn with invalid_configuration, naming the binding; with the inboxes it admits it", async () => {
    const id = `budget-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(id, "triage", "grant", "ada");
      const driver = { running: false, limitStreams: () => null } as unknown as TurnDriver;
      const config = readConfig({ ALLOW_ANONYMOUS: "true", USER_DAILY_TOKENS: "1000" });
      const admit = (bindings: object) =>
        new TurnAdmission({ store, driver, network: supportLike(), config, env: bindings }).turn(
          { conversationId: id, user: "ada" },
          { kind: "message", message: "hi" },
          () => ({ ok: true as const, value: "begun" }),
        );
      const refused = await admit({});
      expect(refused).toMatchObject({ ok: false, error: { code: "invalid_configuration", message: expect.stringContaining("INBOXES") } });
      expect(await admit({ INBOXES: env.INBOXES })).toEqual({ ok: true, value: "begun" });
    });
  });
});
