/**
 * A signed-in user's memory through the Worker, in workerd with the real objects: what a tool remembers in one
 * conversation is recalled into the next one's instructions (the agent that answers and a handoff's target), never into
 * the stored history; a newer memory of a key supersedes the older; the user lists, corrects and forgets it, and no one
 * else reaches it; a quiet conversation is read for memories by one model call, which a failure or a retry cannot store twice.
 */
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MASTER, mint } from "../support/sign-in.ts";
import { type SentRequest, scenario } from "../support/scenario.ts";
import { parseSse, type ReceivedEvent } from "../support/sse.ts";
import { call } from "../support/worker.ts";

type Memory = {
  id: string;
  text: string;
  type: string;
  key?: string;
  source: { conversation: string; agent?: string; message?: number };
  replaced?: string[];
};

const as = (credential: string | undefined, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string>), ...(credential ? { authorization: `Bearer ${credential}` } : {}) },
});
const json = (body: unknown, method = "POST") => ({ method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const remember = (text: string, extra: Record<string, string> = {}) => ({
  toolCalls: [{ name: "remember", arguments: JSON.stringify({ text, ...extra }) }],
});

/** A user of their own (the objects last from test to test), signed in. */
async function user(): Promise<{ id: string; token: string }> {
  const id = `mem-${crypto.randomUUID()}`;
  return { id, token: await mint(id) };
}

async function conversation(token: string): Promise<{ id: string; token: string }> {
  const res = await call("/v1/conversations", as(token, { method: "POST" }));
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; token: string };
}

async function say(credential: string, id: string, message: string): Promise<ReceivedEvent[]> {
  const res = await call(`/v1/conversations/${id}/messages`, as(credential, json({ message })));
  expect(res.status).toBe(200);
  return parseSse(await res.text());
}

async function memories(credential: string, query = ""): Promise<Memory[]> {
  const res = await call(`/v1/me/memory${query}`, as(credential));
  expect(res.status).toBe(200);
  return ((await res.json()) as { memories: Memory[] }).memories;
}

const system = (request: SentRequest) =>
  request.messages
    .filter((m) => m.role === "system")
    .map((m) => m.content ?? "")
    .join("\n");

describe("what a tool remembers", () => {
  it("is recalled into the user's next conversation: the answering agent's and a handoff target's instructions, not the history", async () => {
    const s = await scenario([
      remember("Prefers to be written to in French", { type: "preference", key: "language" }),
      { text: "Noted." },
      { toolCalls: [{ name: "transfer_to_billing", arguments: JSON.stringify({ reason: "a charge" }) }] },
      { text: "Bonjour, voyons ce débit." },
    ]);
    const ada = await user();
    const first = await conversation(ada.token);
    const written = (await say(ada.token, first.id, s.tag("Please write to me in French."))).filter((e) => e.type === "memory");
    expect(written).toMatchObject([{ action: "written", agent: "triage", memories: [{ text: "Prefers to be written to in French" }] }]);
    const [kept] = await memories(ada.token);
    expect(kept).toMatchObject({ type: "preference", key: "language", source: { conversation: first.id, agent: "triage" } });

    const second = await conversation(ada.token);
    const events = await say(ada.token, second.id, s.tag("I was charged twice."));
    expect(events.find((e) => e.type === "memory")).toMatchObject({ action: "recalled", agent: "triage", memories: [{ id: kept!.id }] });
    const { requests } = await s.sent();
    // Triage in the second conversation, then billing after the handoff: both are told, in their instructions.
    for (const request of requests.slice(2)) expect(system(request)).toContain("- (preference) Prefers to be written to in French");
    expect(system(requests[0]!)).not.toContain("What you remember");
    const view = (await (await call(`/v1/conversations/${second.id}`, as(ada.token))).json()) as {
      messages: Array<{ content: string | null }>;
    };
    expect(view.messages.map((m) => m.content ?? "").join("\n")).not.toContain("French");
    // The turn's trace names the memory it recalled, by id and type, without its words.
    const trace = (await (await call(`/v1/conversations/${second.id}/turns/1/trace`, as(ada.token))).json()) as {
      spans: Array<{ kind: string; name: string; attributes: Record<string, string> }>;
    };
    const span = trace.spans.find((sp) => sp.kind === "memory");
    expect(span).toMatchObject({
      name: "recalled 1 memory",
      attributes: { "memory.ids": kept!.id, "memory.types": "preference:language" },
    });
    expect(JSON.stringify(trace)).not.toContain("French");
  });

  it("supersedes an older memory of its key; the user corrects and forgets, and forgetting all leaves nothing to recall", async () => {
    const s = await scenario([
      remember("Lives in Paris", { key: "home address" }),
      remember("Moved to Lyon", { key: "Home address" }),
      { text: "Noted both." },
      { text: "Nothing remembered." },
    ]);
    const ada = await user();
    const c = await conversation(ada.token);
    await say(ada.token, c.id, s.tag("I moved from Paris to Lyon."));
    const [lyon, ...others] = await memories(ada.token);
    expect(others).toEqual([]);
    expect(lyon).toMatchObject({ text: "Moved to Lyon", key: "home address", replaced: [expect.any(String)] });
    expect(await memories(ada.token, "?q=paris")).toEqual([]);

    const corrected = await call(`/v1/me/memory/${lyon!.id}`, as(ada.token, json({ text: "Moved to Lyon, 3 rue Mercière" }, "PATCH")));
    expect([corrected.status, ((await corrected.json()) as { memory: Memory }).memory.text]).toEqual([
      200,
      "Moved to Lyon, 3 rue Mercière",
    ]);
    const tooLong = await call(`/v1/me/memory/${lyon!.id}`, as(ada.token, json({ text: "x".repeat(501) }, "PATCH")));
    expect([tooLong.status, ((await tooLong.json()) as { error: { code: string } }).error.code]).toEqual([413, "memory_limit"]);
    const empty = await call(`/v1/me/memory/${lyon!.id}`, as(ada.token, json({}, "PATCH")));
    expect(empty.status).toBe(400);
    expect((await memories(ada.token))[0]!.text).toBe("Moved to Lyon, 3 rue Mercière");

    // Forgetting Lyon does not bring Paris back.
    const forgot = await call(`/v1/me/memory/${lyon!.id}`, as(ada.token, { method: "DELETE" }));
    expect(await forgot.json()).toEqual({ forgotten: 2 });
    expect(await memories(ada.token)).toEqual([]);
    const gone = await call(`/v1/me/memory/${lyon!.id}`, as(ada.token, { method: "DELETE" }));
    expect([gone.status, ((await gone.json()) as { error: { code: string } }).error.code]).toEqual([404, "memory_not_found"]);

    const all = await call("/v1/me/memory", as(ada.token, { method: "DELETE" }));
    expect(all.status).toBe(200);
    const events = await say(ada.token, c.id, s.tag("Anything?"));
    expect(events.some((e) => e.type === "memory")).toBe(false);
    expect(system((await s.sent()).requests.at(-1)!)).not.toContain("What you remember");
  });

  it("redacts a configured secret before it is stored, and refuses a memory past MEMORY_MAX_CHARS as an error the agent reads", async () => {
    // The fake provider's key is a secret of this Worker (OPENAI_API_KEY).
    const secret = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY";
    const s = await scenario([remember(`Their API key is ${secret}`), remember("y".repeat(600)), { text: "Done." }]);
    const ada = await user();
    const c = await conversation(ada.token);
    const events = await say(ada.token, c.id, s.tag("Keep my key."));
    const [kept, ...more] = await memories(ada.token);
    expect(more).toEqual([]);
    expect(kept!.text).toBe("Their API key is [redacted]");
    expect(JSON.stringify(events)).not.toContain(secret);
    const refused = events.find((e) => e.type === "tool-result" && e.isError);
    expect(refused).toMatchObject({ name: "remember" });
    expect(JSON.stringify(refused)).toContain("at most 500 characters");
  });
});

describe("the user's memory is theirs alone", () => {
  it("is refused to another user, the master key, an operator, the conversation's token, a forged token and no one", async () => {
    const s = await scenario([remember("Their order is A1001", { key: "order" }), { text: "Noted." }]);
    const ada = await user();
    const c = await conversation(ada.token);
    await say(ada.token, c.id, s.tag("My order is A1001."));
    const [mine] = await memories(ada.token);
    const bob = await user();
    expect(await memories(bob.token)).toEqual([]);
    for (const [method, init] of [
      ["PATCH", json({ text: "Bob's now" }, "PATCH")],
      ["DELETE", { method: "DELETE" }],
    ] as const) {
      const res = await call(`/v1/me/memory/${mine!.id}`, as(bob.token, init));
      expect([method, res.status]).toEqual([method, 404]);
    }
    const forged = await mint(ada.id, {}, "rs2");
    const refusals: Array<[string | undefined, number]> = [
      [MASTER, 403],
      [await mint(`olga-${crypto.randomUUID()}`, { roles: ["operator"] }), 200],
      [c.token, 403],
      [forged, 401],
      [undefined, 401],
    ];
    for (const [credential, status] of refusals) {
      const res = await call("/v1/me/memory", as(credential));
      const body = (await res.json()) as { memories?: Memory[] };
      expect(res.status).toBe(status);
      // A signed-in operator is a user too: their own memory, not the customer's.
      if (status === 200) expect(body.memories).toEqual([]);
    }
    expect(await memories(ada.token)).toEqual([mine]);
  });
});

describe("reading a quiet conversation for memories", () => {
  it("is one model call after MEMORY_IDLE_AFTER, planned at the leg's end; a failed read stores nothing and the next reads it again", async () => {
    const s = await scenario([
      { text: "Let me look at A1002." },
      { status: 500, error: { message: "the provider is down" } },
      { text: "Anything else?" },
      { text: JSON.stringify({ memories: [{ text: "Their order is A1002", type: "fact", key: "order", message: 0 }] }) },
    ]);
    const ada = await user();
    const c = await conversation(ada.token);
    await say(ada.token, c.id, s.tag("My order is A1002."));
    const stub = env.CONVERSATIONS.getByName(c.id);
    expect(await plannedReads(stub)).toHaveLength(1);
    await quiet(stub);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await memories(ada.token)).toEqual([]);
    expect((await s.sent()).requests).toHaveLength(2);

    // The next leg plans the read again, and it reads from the start: nothing was lost.
    await say(ada.token, c.id, s.tag("Thanks."));
    await quiet(stub);
    await runDurableObjectAlarm(stub);
    const sent = (await s.sent()).requests;
    expect(sent).toHaveLength(4);
    const read = sent[3]!.messages.map((m) => m.content).join("\n");
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
    expect((await s.sent()).requests).toHaveLength(4);
    expect(await memories(ada.token)).toHaveLength(1);
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
