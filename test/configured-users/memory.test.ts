/**
 * A signed-in user's memory through the Worker, in workerd with the real objects: what a tool remembers in one
 * conversation is recalled into the next one's instructions (the agent that answers and a handoff's target), never into
 * the stored history; a newer memory of a key supersedes the older; the user lists, corrects and forgets it, and no one
 * else reaches it; the desk sees it while a person holds the conversation. (Reading a conversation for memories, by a
 * model: test/worker/memory-reads.test.ts; this project turns it off, as it does titles.)
 */
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

describe("the operator desk", () => {
  it("shows the customer's memory, read-only, while a person holds their conversation, and not before", async () => {
    const s = await scenario([
      remember("Prefers to be written to in French", { type: "preference", key: "language" }),
      { toolCalls: [{ name: "transfer_to_support_desk", arguments: JSON.stringify({ reason: "wants a person" }) }] },
    ]);
    const ada = await user();
    const c = await conversation(ada.token);
    const operator = await mint(`olga-${crypto.randomUUID()}`, { roles: ["operator"] });
    const before = await call(`/v1/operator/conversations/${c.id}/memory`, as(operator));
    expect([before.status, ((await before.json()) as { error: { code: string } }).error.code]).toEqual([409, "not_held_by_person"]);
    await say(ada.token, c.id, s.tag("Write to me in French, and let me talk to a person."));
    const held = await call(`/v1/operator/conversations/${c.id}/memory`, as(operator));
    expect(await held.json()).toMatchObject({ memories: [{ text: "Prefers to be written to in French", type: "preference" }] });
    // The operator API only: the customer's own sign-in has no operator role.
    expect((await call(`/v1/operator/conversations/${c.id}/memory`, as(ada.token))).status).toBe(403);
  });
});
