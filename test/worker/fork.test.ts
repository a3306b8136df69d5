/**
 * POST /v1/conversations/:id/fork through the Worker: a new conversation (new id and token) whose
 * history, holder, counters and context are the original's after a turn; the original is untouched.
 */
import { env } from "cloudflare:workers";
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index.ts";
import { chat, postMessage, scenario, stored } from "../support/worker.ts";
import { parseSse } from "../support/sse.ts";

const args = (value: unknown) => JSON.stringify(value);
const API_KEY = "test-master-key-0123456789";
const keyed = { ...env, API_KEY, ALLOW_ANONYMOUS: "false" };

function request(path: string, init: RequestInit = {}, bindings: object = env): Promise<Response> {
  return Promise.resolve(worker.request(`https://chat.test${path}`, init, bindings));
}

const fork = (id: string, body: unknown, headers: Record<string, string> = {}, bindings: object = env) =>
  request(
    `/v1/conversations/${id}/fork`,
    { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) },
    bindings,
  );

describe("forking a conversation", () => {
  it("starts a new conversation from the state after a turn, and leaves the original as it was", async () => {
    const s = await scenario([
      { text: "Triage here." },
      { toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: args({ reason: "a charge" }) }] },
      { text: "Billing here." },
      { toolCalls: [{ id: "t2", name: "transfer_to_triage", arguments: args({ reason: "done" }) }] },
      { text: "Back at triage." },
      { text: "Billing, in the fork." },
    ]);
    await chat(s.conversationId, s.tag("hello"));
    await chat(s.conversationId, s.tag("a charge"));
    await chat(s.conversationId, s.tag("thanks"));
    const before = await stored(s.conversationId);

    const res = await fork(s.conversationId, { afterTurn: 2 });
    expect(res.status).toBe(201);
    const created = (await res.json()) as { id: string; activeAgent: string; forkedFrom: unknown };
    expect(created).toMatchObject({ activeAgent: "billing", forkedFrom: { id: s.conversationId, afterTurn: 2 } });
    const forked = await stored(created.id);
    expect(forked).toMatchObject({ activeAgent: "billing", handoffCount: 1, turn: 2 });
    expect(forked.messages).toEqual(before.messages.slice(0, 6));
    expect(forked.handoffs.map((h) => [h.from, h.to])).toEqual([["triage", "billing"]]);
    expect(await stored(s.conversationId)).toEqual(before);

    const next = await chat(created.id, s.tag("and one more thing"));
    expect(next[0]).toMatchObject({ type: "run-start", agent: "billing" });
    expect(next.at(-1)).toMatchObject({ type: "done", text: "Billing, in the fork." });
    const { requests } = await s.sent();
    expect(
      requests
        .at(-1)!
        .messages.slice(1)
        .map((m) => m.role),
    ).toEqual(["user", "assistant", "user", "assistant", "tool", "assistant", "user"]);
  });

  it("refuses a turn that does not exist, and a body without a turn number", async () => {
    const s = await scenario([{ text: "one" }]);
    await chat(s.conversationId, s.tag("hi"));
    const missing = await fork(s.conversationId, { afterTurn: 5 });
    expect([missing.status, await missing.json()]).toEqual([
      404,
      { error: { code: "turn_not_found", message: "This conversation has 1 turns; fork after one of them (1 to 1)." } },
    ]);
    expect((await fork(s.conversationId, { afterTurn: "two" })).status).toBe(400);
    expect((await fork(s.conversationId, {})).status).toBe(400);
  });

  it("refuses a turn followed by one stored before turns recorded their opening, naming a later turn to fork after", async () => {
    const s = await scenario([{ text: "one" }, { text: "two" }]);
    await chat(s.conversationId, s.tag("hi"));
    await chat(s.conversationId, "again");
    // Turn 2 as an earlier release stored it: no opening, so what was held after turn 1 is not known.
    const object = env.CONVERSATIONS.getByName(s.conversationId);
    await runInDurableObject(object, (_instance, state) => {
      state.storage.sql.exec("UPDATE turns SET opening = NULL WHERE turn = 2");
    });
    await evictDurableObject(object);
    const refused = await fork(s.conversationId, { afterTurn: 1 });
    expect([refused.status, await refused.json()]).toEqual([
      404,
      { error: { code: "turn_not_found", message: "Turn 1 was stored before forks were possible; fork after a later turn." } },
    ]);
    expect((await fork(s.conversationId, { afterTurn: 2 })).status).toBe(201);
  });

  it("refuses the turn that is running, and takes the one before it meanwhile", async () => {
    const s = await scenario([{ text: "one" }, { text: "a slow second answer", holdAfter: 1 }]);
    await chat(s.conversationId, s.tag("hi"));
    const sent = await postMessage(s.conversationId, "again");
    const reader = sent.body!.getReader();
    await reader.read();
    const running = await fork(s.conversationId, { afterTurn: 2 });
    expect([running.status, await running.json()]).toEqual([
      409,
      {
        error: {
          code: "run_in_progress",
          message: "A run is in progress for this conversation; wait for it to end, or cancel it. Or fork after an earlier turn.",
        },
      },
    ]);
    expect((await fork(s.conversationId, { afterTurn: 1 })).status).toBe(201);
    await s.release();
    while (!(await reader.read()).done);
  });

  it("lets a conversation token fork its own conversation, giving a token for the fork only", async () => {
    const s = await scenario([{ text: "first" }]);
    const { id, token } = (await (
      await request("/v1/conversations", { method: "POST", headers: { authorization: `Bearer ${API_KEY}` } }, keyed)
    ).json()) as {
      id: string;
      token: string;
    };
    const turn = await request(
      `/v1/conversations/${id}/messages`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ message: s.tag("hi") }),
      },
      keyed,
    );
    expect(parseSse(await turn.text()).at(-1)).toMatchObject({ type: "done" });
    const res = await fork(id, { afterTurn: 1 }, { authorization: `Bearer ${token}` }, keyed);
    expect(res.status).toBe(201);
    const created = (await res.json()) as { id: string; token: string };
    expect(created.token).not.toBe(token);
    expect(
      (await request(`/v1/conversations/${created.id}`, { headers: { authorization: `Bearer ${created.token}` } }, keyed)).status,
    ).toBe(200);
    expect((await request(`/v1/conversations/${id}`, { headers: { authorization: `Bearer ${created.token}` } }, keyed)).status).toBe(403);
  });
});
