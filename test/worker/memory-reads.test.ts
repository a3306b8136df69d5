/**
 * Reading a signed-in user's conversation for memories (MEMORY_MODEL: the agents' model here), in workerd against the fake
 * provider: one model call once the conversation has been quiet for MEMORY_IDLE_AFTER, planned at a leg's end; a read
 * that fails stores nothing and the next reads the same messages; one with nothing new calls no model; what one read
 * found is kept once however often it is stored; a compaction and a person's hand-back read it at once. The users come
 * from the development sign-in.
 */
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseSse } from "../support/sse.ts";
import { readConfig } from "../../src/config.ts";
import { assembleConversation } from "../../src/conversation/conversation-parts.ts";
import { createSupportNetwork } from "../../src/agents/network.ts";
import { memoryOf } from "../../src/memory/memory-of.ts";
import type { WorkerVars } from "../../src/worker-vars.ts";
import { until } from "../support/until.ts";
import { call, scenario } from "../support/worker.ts";

type Memory = { id: string; text: string; type: string; source: { conversation: string; agent?: string; message?: number } };

const as = (credential: string, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${credential}` },
});
const json = (body: unknown) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** A user of their own, signed in with the development sign-in. */
async function user(): Promise<{ id: string; token: string }> {
  const res = await call("/v1/dev/sign-in", json({ name: `Reader ${crypto.randomUUID().slice(0, 8)}` }));
  expect(res.status).toBe(201);
  const body = (await res.json()) as { token: string; user: { id: string } };
  return { id: body.user.id, token: body.token };
}

async function conversation(token: string): Promise<{ id: string }> {
  const res = await call("/v1/conversations", as(token, { method: "POST" }));
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string };
}

async function say(token: string, id: string, message: string): Promise<void> {
  const res = await call(`/v1/conversations/${id}/messages`, as(token, json({ message })));
  expect(res.status).toBe(200);
  expect(parseSse(await res.text()).at(-1)).toMatchObject({ type: "done" });
}

async function memories(token: string): Promise<Memory[]> {
  return ((await (await call("/v1/me/memory", as(token))).json()) as { memories: Memory[] }).memories;
}

describe("reading a quiet conversation for memories", () => {
  it("is one model call after MEMORY_IDLE_AFTER, planned at the leg's end; a failed read stores nothing and the next reads it again", async () => {
    const s = await scenario([
      { text: "Let me look at A1002." },
      // The conversation's title, made after its first leg (the user is signed in).
      { text: "Order A1002" },
      { status: 500, error: { message: "the provider is down" } },
      { text: "Anything else?" },
      { text: JSON.stringify({ memories: [{ text: "Their order is A1002", type: "fact", key: "order", message: 0 }] }) },
    ]);
    const sent = async () => (await s.sent()).requests;
    const ada = await user();
    const c = await conversation(ada.token);
    await say(ada.token, c.id, s.tag("My order is A1002."));
    await until(sent, (requests) => requests.length === 2, "the title is made");
    const stub = env.CONVERSATIONS.getByName(c.id);
    expect(await plannedReads(stub)).toHaveLength(1);
    await quiet(stub);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await memories(ada.token)).toEqual([]);
    expect(await sent()).toHaveLength(3);

    // The next leg plans the read again, and it reads from the start: nothing was lost.
    await say(ada.token, c.id, s.tag("Thanks."));
    await quiet(stub);
    await runDurableObjectAlarm(stub);
    const requests = await sent();
    expect(requests).toHaveLength(5);
    const read = requests[4]!.messages.map((m) => m.content).join("\n");
    expect(read).toContain("[0] User: My order is A1002.");
    expect(await memories(ada.token)).toMatchObject([
      { text: "Their order is A1002", source: { conversation: c.id, agent: "memory-extraction", message: 0 } },
    ]);
    // The latest turn's trace shows what the read kept; a read with nothing new calls no model.
    const trace = (await (await call(`/v1/conversations/${c.id}/turns/2/trace`, as(ada.token))).json()) as {
      spans: Array<{ name: string }>;
    };
    expect(trace.spans.map((sp) => sp.name)).toContain("remembered 1 memory");
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(`INSERT INTO schedule (id, kind, due_at, turn, data) VALUES ('again', 'memory-read', 0, 0, '{}')`);
    });
    await quiet(stub);
    await runDurableObjectAlarm(stub);
    expect(await sent()).toHaveLength(5);
    expect(await memories(ada.token)).toHaveLength(1);
  });

  it("reads the conversation at once when a person hands it back", async () => {
    const s = await scenario([
      { toolCalls: [{ name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "wants a person" }) }] },
      { text: "A person, please" },
      { text: JSON.stringify({ memories: [{ text: "Prefers phone calls", type: "preference", key: "contact", message: 0 }] }) },
    ]);
    const sent = async () => (await s.sent()).requests;
    const ada = await user();
    const c = await conversation(ada.token);
    await say(ada.token, c.id, s.tag("Call me rather than write, and let me talk to a person."));
    await until(sent, (requests) => requests.length === 2, "the title is made");
    const answered = await call(`/v1/conversations/${c.id}/operator/messages`, json({ message: "Noted, I will call you." }));
    expect(answered.status).toBe(200);
    const back = await call(`/v1/conversations/${c.id}/operator/handoff`, json({ to: "triage" }));
    expect(back.status).toBe(200);
    const kept = await until(
      () => memories(ada.token),
      (list) => list.length === 1,
      "the hand-back's read is kept",
    );
    expect(kept).toMatchObject([{ text: "Prefers phone calls", type: "preference", source: { conversation: c.id } }]);
    // The person's answer is in what the read was sent, as an agent's.
    expect((await sent())[2]!.messages.map((m) => m.content).join("\n")).toContain("Agent (support-desk): Noted, I will call you.");
  });

  it("reads the conversation when it is compacted, whoever wrote the compaction", async () => {
    const s = await scenario([
      { text: JSON.stringify({ memories: [{ text: "Their order is A1005", type: "fact", key: "order", message: 0 }] }) },
    ]);
    const owner = `compacted-${crypto.randomUUID()}`;
    const id = `memory-compaction-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      const vars = env as unknown as WorkerVars;
      const { store } = assembleConversation(state, vars, readConfig(vars), { network: createSupportNetwork() });
      store.create(id, "triage", "grant", owner);
      store.beginTurn(s.tag("My order is A1005"));
      // The storage's own commit, by hand: a compaction event, as the loop stores one.
      store.commitStep({ messages: [{ role: "user", content: s.tag("My order is A1005") }] }, [
        { id: 1, type: "compaction", agent: "triage", replaced: 4, kept: 2, summaryChars: 120 },
      ]);
    });
    const memory = (await memoryOf(env, owner))!;
    const kept = await until(
      () => memory.list(),
      (list) => list.length === 1,
      "the compaction's read is kept",
    );
    expect(kept).toMatchObject([{ text: "Their order is A1005", source: { conversation: id, agent: "memory-extraction", message: 0 } }]);
  });

  it("keeps what one read found once, however often the read is stored again", async () => {
    const ada = await user();
    const stub = env.MEMORIES!.getByName(`retry-${ada.id}`);
    const found = [{ text: "Their order is A1003", type: "fact" as const, key: "order", source: { conversation: "c1" } }];
    const limits = { maxChars: 500, maxPerUser: 10 };
    await stub.keepRead("c1", 4, found, limits);
    await stub.keepRead("c1", 4, found, limits);
    expect(await stub.list()).toHaveLength(1);
    expect(await stub.readFrom("c1")).toBe(4);
  });
});

/** The conversation's planned memory reads. */
async function plannedReads(stub: DurableObjectStub): Promise<unknown[]> {
  return runInDurableObject(stub, (_instance, state) =>
    state.storage.sql.exec(`SELECT id FROM schedule WHERE kind = 'memory-read'`).toArray(),
  );
}

/** The conversation as if quiet for an hour: its turns ended then, and its planned read due now. */
async function quiet(stub: DurableObjectStub): Promise<void> {
  await runInDurableObject(stub, async (_instance, state) => {
    const hourAgo = Date.now() - 3_600_000;
    state.storage.sql.exec(`UPDATE turns SET started_at = ?, ended_at = ?`, hourAgo, hourAgo);
    state.storage.sql.exec(`UPDATE schedule SET due_at = ? WHERE kind = 'memory-read'`, Date.now() - 1);
    await state.storage.setAlarm(Date.now() + 3_600_000);
  });
}
