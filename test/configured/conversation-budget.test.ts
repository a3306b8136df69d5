/**
 * A per-conversation budget through the Worker (CONVERSATION_BUDGET={"modelCalls":3}, set for this
 * project in vitest.config.ts): the session hands the conversation's past spending to the loop,
 * across turns and across a restart of its Durable Object.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { chat, scenario, stored } from "../support/worker.ts";

describe("a per-conversation budget", () => {
  it("bites on the turn that would pass it, counting earlier turns, even after a restart", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: "{}" }] },
      { text: "Billing here." },
      { text: "Still billing." },
    ]);
    expect((await chat(s.conversationId, s.tag("charged twice"))).at(-1)).toMatchObject({ type: "done", usage: { modelCalls: 2 } });
    await evictDurableObject(env.CONVERSATIONS.getByName(s.conversationId));
    expect((await chat(s.conversationId, "and?")).at(-1)).toMatchObject({ type: "done", usage: { modelCalls: 1 } });
    const refused = await chat(s.conversationId, "one more?");
    expect(refused.at(-1)).toMatchObject({ type: "error", code: "budget_exceeded", message: expect.stringMatching(/modelCalls/) });
    const sent = await s.sent();
    expect(sent.requests).toHaveLength(3);
    expect(sent.remaining).toBe(0);
    expect((await stored(s.conversationId)).usage).toMatchObject({ modelCalls: 3 });
  });
});
