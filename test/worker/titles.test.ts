/**
 * Titles of a signed-in user's conversations (the development sign-in here): after the first turn,
 * one small model call, sent to the provider without tools and shown in the inbox; what it spent is
 * counted with the first turn; a title the user gave first is kept; later turns make no title call.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.ts";
import { titleMaker } from "../../src/conversation/conversation-titles.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import { Agent, Network, remoteAgent } from "../../src/runtime/index.ts";
import { Redactor } from "../../src/runtime/redact.ts";
import { ScriptedModel } from "../support/scripted-model.ts";
import { until } from "../support/until.ts";
import { call, scenario } from "../support/worker.ts";

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

  it("keep the title the user gave before the first turn", async () => {
    const s = await scenario([{ text: "Hello." }]);
    const token = await signIn(`n-${s.id.slice(3, 20)}`);
    const { id } = (await (await post("/v1/conversations", token)).json()) as { id: string };
    expect((await post(`/v1/conversations/${id}`, token, { title: "My own name" }, "PATCH")).status).toBe(200);
    await (await post(`/v1/conversations/${id}/messages`, token, { message: s.tag("hi") })).text();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await s.sent()).requests).toHaveLength(1);
    expect((await entry(token, id))?.title).toBe("My own name");
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
      expect(await titles.make()).toBe(true);
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
  });

  it("is not a remote entry agent's address: the network's default model, or its first agent's", async () => {
    const local = new Agent({ name: "desk", instructions: "Help.", model: "desk-model" });
    expect(await titleModelOf(new Network(partner(), { defaultModel: "default-model", agents: [local] }))).toBe("default-model");
    expect(await titleModelOf(new Network(partner(), { agents: [local], defaultModel: undefined }))).toBe("desk-model");
  });
});
