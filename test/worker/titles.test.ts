/**
 * Titles of a signed-in user's conversations (the development sign-in here): after the first turn,
 * one small model call, sent to the provider without tools and shown in the inbox; what it spent is
 * counted with the first turn; a title the user gave first is kept; later turns make no title call.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { readConfig } from "../../src/config.ts";
import { titleMaker } from "../../src/conversation/conversation-titles.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { Agent, Network, remoteAgent } from "../../src/runtime/index.ts";
import { Redactor } from "../../src/runtime/redact.ts";
import { TITLE_CHARS } from "../../src/runtime/titles.ts";
import { ScriptedModel } from "../support/scripted-model.ts";
import { until } from "../support/until.ts";
import { call, chat, scenario } from "../support/worker.ts";

const post = (path: string, token: string, body?: unknown, method = "POST") =>
  call(path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function signIn(name: string): Promise<string> {
  const res = await call("/v1/dev/sign-in", {
    method: "POST",
    body: JSON.stringify({ name }),
    headers: { "content-type": "application/json" },
  });
  return ((await res.json()) as { token: string }).token;
}

async function entry(token: string, id: string) {
  const list = (await (await call("/v1/conversations", { headers: { authorization: `Bearer ${token}` } })).json()) as {
    conversations: Array<{ id: string; title: string }>;
  };
  return list.conversations.find((c) => c.id === id);
}

/**
 * Waits for a signed-in user's first turn elsewhere to be titled: a title call that another
 * conversation's first turn should not make would have been made by then. Not a fixed wait, which
 * a loaded machine outlasts.
 */
async function titledElsewhere(): Promise<void> {
  const owned = await scenario([{ text: "Hello." }, { text: '"Greeting"' }]);
  const token = await signIn(`e-${owned.id.slice(3, 20)}`);
  const { id } = (await (await post("/v1/conversations", token)).json()) as { id: string };
  await (await post(`/v1/conversations/${id}/messages`, token, { message: owned.tag("hi") })).text();
  await until(
    () => entry(token, id),
    (e) => e?.title === "Greeting",
    "another conversation's title",
  );
}

describe("conversation titles", () => {
  it("are made by one model call after the first turn, with no tools, shown in the inbox and counted as spent", async () => {
    const s = await scenario([{ text: "I can help with that." }, { text: '"Refund for a double charge."' }, { text: "Sure." }]);
    const token = await signIn(`t-${s.id.slice(3, 20)}`);
    const { id } = (await (await post("/v1/conversations", token)).json()) as { id: string };
    await (await post(`/v1/conversations/${id}/messages`, token, { message: s.tag("I was charged twice") })).text();
    const titled = await until(
      () => entry(token, id),
      (e) => e?.title === "Refund for a double charge",
      "the title",
    );
    expect(titled?.title).toBe("Refund for a double charge");
    const sent = await s.sent();
    const titleCall = sent.requests[1]!;
    expect(titleCall.tools ?? []).toEqual([]);
    expect(titleCall.messages[0]).toMatchObject({ role: "system", content: expect.stringMatching(/title .* at most six words/) });
    expect(titleCall.messages[1]?.content).toContain("User: I was charged twice");
    const view = (await (await call(`/v1/conversations/${id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      usage: { modelCalls: number };
    };
    expect(view.usage.modelCalls).toBe(2);
    // The second turn makes no title call: its one request is the turn's.
    await (await post(`/v1/conversations/${id}/messages`, token, { message: s.tag("thanks") })).text();
    expect((await s.sent()).requests).toHaveLength(3);
    expect((await entry(token, id))?.title).toBe("Refund for a double charge");
  });

  it("are asked for once while one is being made, though a first turn ends a second leg meanwhile", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: '"Refund for order A1001"', holdAfter: 1 },
      { text: "Refunded." },
    ]);
    const token = await signIn(`m-${s.id.slice(3, 20)}`);
    const { id } = (await (await post("/v1/conversations", token)).json()) as { id: string };
    await (await post(`/v1/conversations/${id}/messages`, token, { message: s.tag("refund A1001") })).text();
    // The first leg waits for approval; its title call is held open while the approval resumes the turn to its end.
    await until(
      () => s.sent(),
      (sent) => sent.requests.length === 3,
      "the title call",
    );
    await (await post(`/v1/conversations/${id}/approvals`, token, { decisions: [{ toolCallId: "rf", approved: true }] })).text();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await s.release();
    await until(
      () => entry(token, id),
      (e) => e?.title === "Refund for order A1001",
      "the title",
    );
    expect((await s.sent()).requests).toHaveLength(4);
  });

  it("keep the title the user gave before the first turn", async () => {
    const s = await scenario([{ text: "Hello." }]);
    const token = await signIn(`n-${s.id.slice(3, 20)}`);
    const { id } = (await (await post("/v1/conversations", token)).json()) as { id: string };
    expect((await post(`/v1/conversations/${id}`, token, { title: "My own name" }, "PATCH")).status).toBe(200);
    await (await post(`/v1/conversations/${id}/messages`, token, { message: s.tag("hi") })).text();
    await titledElsewhere();
    expect((await s.sent()).requests).toHaveLength(1);
    expect((await entry(token, id))?.title).toBe("My own name");
  });
});

describe("a guest's conversation renamed", () => {
  it("is answered with how it now stands, as a signed-in user's is", async () => {
    const s = await scenario([{ text: "Hello." }]);
    await chat(s.conversationId, s.tag("hi"));
    const res = await call(`/v1/conversations/${s.conversationId}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ title: "Mine now" }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: s.conversationId, title: "Mine now" });
  });
});

describe("a title the model does not make", () => {
  it("is the user's when they rename the conversation while the model is asked", async () => {
    const s = await scenario([{ text: "I can help with that." }, { text: '"Refund for a double charge."', holdAfter: 1 }]);
    const token = await signIn(`r-${s.id.slice(3, 20)}`);
    const { id } = (await (await post("/v1/conversations", token)).json()) as { id: string };
    await (await post(`/v1/conversations/${id}/messages`, token, { message: s.tag("I was charged twice") })).text();
    await until(
      () => s.sent(),
      (sent) => sent.requests.length === 2,
      "the title call",
    );
    expect((await post(`/v1/conversations/${id}`, token, { title: "My own name" }, "PATCH")).status).toBe(200);
    await s.release();
    // The title call ends with nothing stored: the usage it would have been counted in stays at the turn's one call.
    const calls = async () =>
      (
        (await (await call(`/v1/conversations/${id}`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
          usage: { modelCalls: number };
        }
      ).usage.modelCalls;
    // Watched for a second, not read once: a machine under load answers the title call late.
    for (let i = 0; i < 10; i++) {
      expect([(await entry(token, id))?.title, await calls()]).toEqual(["My own name", 1]);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  it("is the first message on one line, cut short, when the title call fails; the log says why", async () => {
    const warned = vi.spyOn(console, "warn");
    const s = await scenario([{ text: "Hello." }, { status: 400, error: { message: "no such model here" } }]);
    const token = await signIn(`f-${s.id.slice(3, 20)}`);
    const { id } = (await (await post("/v1/conversations", token)).json()) as { id: string };
    const first = s.tag("I was   charged twice\nfor order A1001, and I would like the second charge refunded");
    await (await post(`/v1/conversations/${id}/messages`, token, { message: first })).text();
    await until(
      async () => warned.mock.calls.flat().map(String),
      (lines) => lines.some((line) => line.startsWith("conversation title not made:")),
      "the log line",
    );
    expect(warned).toHaveBeenCalledWith("conversation title not made: The model provider answered 400: it refused the request.");
    warned.mockRestore();
    const title = (await entry(token, id))?.title;
    expect(title).toBe(`${first.replace(/\s+/g, " ").slice(0, TITLE_CHARS - 1)}…`);
    expect(title).toHaveLength(TITLE_CHARS);
  });

  it("is never asked for in a conversation no one signed in owns", async () => {
    const s = await scenario([{ text: "Hello." }, { text: "A title no one asked for" }]);
    await chat(s.conversationId, s.tag("hi"));
    await titledElsewhere();
    expect((await s.sent()).requests).toHaveLength(1);
  });
});

describe("the model that titles a conversation", () => {
  /** The model name the title call of a first turn is sent with, for `network` and `vars`; undefined when none is made. */
  async function titleModelOf(network: Network, vars: Record<string, string> = {}): Promise<string | undefined> {
    const id = `titled-${crypto.randomUUID()}`;
    return runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(id, network.entry.name, "grant", "ada");
      store.beginTurn("where is my parcel?");
      store.commitStep({ messages: [{ role: "user", content: "where is my parcel?" }] }, []);
      const model = new ScriptedModel([{ text: "Parcel whereabouts" }]);
      const titles = titleMaker(readConfig({ ALLOW_ANONYMOUS: "true", ...vars }), network, store, model, new Redactor([]));
      if (!titles) return undefined;
      await titles.make();
      expect(store.state()?.title).toBe("Parcel whereabouts");
      return model.requests[0]!.model;
    });
  }
  const partner = () =>
    remoteAgent({ name: "partner", description: "A partner's agent.", url: "https://partner.example/.well-known/agent-card.json" });

  it("is TITLE_MODEL, else the entry agent's; off makes none", async () => {
    const entry = new Agent({ name: "front", instructions: "Help.", model: "front-model" });
    expect(await titleModelOf(new Network(entry))).toBe("front-model");
    expect(await titleModelOf(new Network(entry), { TITLE_MODEL: "small-model" })).toBe("small-model");
    expect(await titleModelOf(new Network(entry), { TITLE_MODEL: "off" })).toBeUndefined();
    expect(await titleModelOf(new Network(entry, { defaultModel: "default-model" }))).toBe("front-model");
  });

  it("is not a remote entry agent's address: the network's default model, or its first agent's", async () => {
    const local = new Agent({ name: "desk", instructions: "Help.", model: "desk-model" });
    expect(await titleModelOf(new Network(partner(), { defaultModel: "default-model", agents: [local] }))).toBe("default-model");
    expect(await titleModelOf(new Network(partner(), { agents: [local], defaultModel: undefined }))).toBe("desk-model");
    // No model here at all: no title call.
    expect(await titleModelOf(new Network(partner(), { defaultModel: undefined }))).toBeUndefined();
  });
});
