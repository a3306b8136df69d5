/**
 * Handing the conversation to a remote A2A agent (`remoteAgent`), reached through this project's
 * A2A port (`A2ARemotes`, web standards only) and served by the official SDK's server in Node
 * (test/node/a2a-remote-server.ts): what it is sent, that later messages reach the same remote
 * context, INPUT_REQUIRED and AUTH_REQUIRED, giving the conversation back on completion or by its
 * hand-back part, and every way it can go wrong — failed, rejected, too slow, garbage, a stream
 * that stops short, no port — each of which gives the conversation back to the agent that handed
 * it over, which answers in the same turn.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { A2ARemotes } from "../../src/a2a/client/a2a-remote.ts";
import { Agent, handoff, Network, type RemoteAgentConfig, type RunEvent, remoteAgent, runTurn } from "../../src/runtime/index.ts";
import { MemoryStore, runScripted, ScriptedModel } from "../../src/testing/index.ts";
import { startA2ARemote } from "../node/a2a-remote-server.ts";

let remote: Awaited<ReturnType<typeof startA2ARemote>>;
beforeAll(async () => {
  remote = await startA2ARemote();
});
afterAll(() => remote.close());

const SECRET = "Bearer remote-secret 77aa";

function network(options: Partial<RemoteAgentConfig> & { returns?: "on-answer" } = {}) {
  const billing = remoteAgent({
    name: "billing",
    description: "Billing questions, answered by the billing team's agent.",
    url: `${remote.url}/.well-known/agent-card.json`,
    headers: (env) => ({ authorization: String(env.BILLING_TOKEN) }),
    ...options,
  });
  const triage = new Agent({ name: "triage", description: "Routes.", instructions: "You route.", handoffs: [handoff(billing)] });
  return new Network(triage, { defaultModel: "m", transferScope: "declared" });
}

const port = () => new A2ARemotes({ BILLING_TOKEN: SECRET });
const texts = (events: RunEvent[]) => events.flatMap((e) => (e.type === "text-delta" ? [e.delta] : [])).join("");
const kinds = (events: RunEvent[]) =>
  events.filter((e): e is Extract<RunEvent, { type: "handoff" }> => e.type === "handoff").map((e) => `${e.kind}:${e.from}→${e.to}`);
const transfer = (reason: string) => ({ toolCalls: [{ name: "transfer_to_billing", args: { reason } }] });
const lastOf = (events: RunEvent[]) => events.at(-1) as Extract<RunEvent, { type: "done" }>;

describe("a remote agent holding the conversation", () => {
  it("is sent the conversation so far, streams its answer as its own, and gets the next message in the same context", async () => {
    const net = network();
    const from = remote.executor.received.length;
    const first = await runScripted(net, "I was charged twice", [transfer("a double charge")], { remote: port() });
    expect(kinds(first.events)).toEqual(["transfer:triage→billing"]);
    // The remote's step says where it went (traces name it so).
    expect(first.events.find((e) => e.type === "step-start" && e.agent === "billing")).toMatchObject({
      remote: `${remote.url}/.well-known/agent-card.json`,
    });
    expect(texts(first.events)).toBe('Billing here: you said "Answer the user\'s last message.".');
    expect(lastOf(first.events)).toMatchObject({ type: "done", status: "completed", agent: "billing" });
    const sent = remote.executor.received.slice(from);
    expect(sent[0]!.text).toContain("user: I was charged twice");
    expect(sent[0]!.text).toContain("triage handed the conversation over: a double charge.");
    expect(sent[0]!.authorization).toBe(SECRET);
    // The remote's answer is billing's message in the history; its context is kept as billing's state.
    expect(first.store.history.at(-1)).toEqual({ role: "assistant", agent: "billing", content: texts(first.events) });
    const contextId = first.store.holding.agentStates.billing?.contextId;
    expect(contextId).toBe(sent[0]!.contextId);

    const second = await runScripted(net, "and the second one?", [], { store: first.store, remote: port() });
    expect(texts(second.events)).toBe('Billing here: you said "and the second one?".');
    expect(remote.executor.received.at(-1)).toMatchObject({ text: "and the second one?", contextId, continued: false });
    expect(second.store.holding.activeAgent).toBe("billing");
  });

  it("waits for the user when it asks for input, and the answer continues the same task; with returns on-answer, completion gives it back", async () => {
    const net = network({ returns: "on-answer" });
    const first = await runScripted(net, "my invoice needs input", [transfer("an invoice")], { remote: port() });
    expect(texts(first.events)).toBe("Which invoice?");
    expect(lastOf(first.events)).toMatchObject({ status: "completed", agent: "billing" });
    // Still billing's: the question is not its answer.
    expect(first.store.holding.activeAgent).toBe("billing");
    const waiting = first.store.holding.agentStates.billing?.taskId;
    expect(waiting).toBeTypeOf("string");

    const second = await runScripted(net, "INV-7", [], { store: first.store, remote: port() });
    expect(remote.executor.received.at(-1)).toMatchObject({ text: "INV-7", taskId: waiting, continued: true });
    expect(texts(second.events)).toBe("Invoice INV-7 is paid.");
    expect(kinds(second.events)).toEqual(["return:billing→triage"]);
    expect(second.store.holding).toMatchObject({ activeAgent: "triage", callers: [] });
    expect(second.store.holding.agentStates.billing?.taskId).toBeUndefined();
  });

  it("says so when the remote needs authorization, and waits", async () => {
    const turn = await runScripted(network(), "please sign in", [transfer("login")], { remote: port() });
    expect(texts(turn.events)).toBe("'billing' needs authorization before it can go on: no reason given.");
    expect(turn.store.holding.agentStates.billing?.taskId).toBeTypeOf("string");
  });

  it("gives the conversation back with what it did when it sends the hand-back part, and the agent that handed over carries on", async () => {
    const turn = await runScripted(network(), "hand back when done", [transfer("refund"), { text: "Anything else?" }], { remote: port() });
    expect(kinds(turn.events)).toEqual(["transfer:triage→billing", "hand-back:billing→triage"]);
    expect(texts(turn.events)).toBe("Refund sent.Anything else?");
    const triageSaw = turn.model.requests[1]!.messages;
    expect(triageSaw.at(-2)).toEqual({ role: "assistant", agent: "billing", content: "Refund sent." });
    expect(triageSaw.at(-1)).toMatchObject({
      role: "system",
      content: "The remote agent 'billing' gave the conversation back to you: refunded 20 EUR",
    });
    expect(lastOf(turn.events)).toMatchObject({ status: "completed", agent: "triage" });
  });
});

describe("a remote agent that goes wrong gives the conversation back, never a crash", () => {
  const cases: Array<{ name: string; message: string; config?: Partial<RemoteAgentConfig>; code: string; says: string }> = [
    { name: "a failed task", message: "this will fail", code: "remote_failed", says: "failed: the ledger is down" },
    { name: "a rejected task", message: "reject this", code: "remote_failed", says: "rejected: not for billing" },
    {
      name: "past its timeout",
      message: "please hang",
      config: { timeoutMs: 300 },
      code: "remote_timeout",
      says: "took longer than 300 ms",
    },
    { name: "frames that are not JSON", message: "hi", config: { url: `${"{{base}}"}/garbage` }, code: "remote_invalid", says: "not JSON" },
    { name: "a web page", message: "hi", config: { url: `${"{{base}}"}/html` }, code: "remote_invalid", says: "not JSON" },
    {
      name: "a stream that stops while working",
      message: "hi",
      config: { url: `${"{{base}}"}/stops` },
      code: "remote_invalid",
      says: "still working",
    },
    {
      name: "an unbound service binding",
      message: "hi",
      config: { binding: "NOT_BOUND" },
      code: "remote_failed",
      says: "'NOT_BOUND' is not bound",
    },
  ];
  for (const c of cases)
    it(`${c.name}: ${c.code}, and the agent that handed over answers in the same turn`, async () => {
      const config = c.config?.url ? { ...c.config, url: c.config.url.replace("{{base}}", remote.url) } : c.config;
      const turn = await runScripted(network(config), c.message, [transfer("billing"), { text: "Billing cannot help right now." }], {
        remote: port(),
      });
      const warning = turn.events.find((e) => e.type === "warning");
      expect(warning).toMatchObject({ code: c.code });
      expect((warning as { message: string }).message).toContain(c.says);
      expect(kinds(turn.events)).toEqual(["transfer:triage→billing", "hand-back:billing→triage"]);
      expect(turn.model.requests[1]!.messages.at(-1)).toMatchObject({ role: "system", agent: "triage" });
      expect(String(turn.model.requests[1]!.messages.at(-1)!.content)).toContain(c.code);
      expect(lastOf(turn.events)).toMatchObject({ status: "completed", agent: "triage", text: "Billing cannot help right now." });
      expect(turn.store.holding.activeAgent).toBe("triage");
    });

  it("without a remote port, the handoff is given straight back", async () => {
    const turn = await runScripted(network(), "hi", [transfer("billing"), { text: "Let me help instead." }]);
    expect(turn.events.find((e) => e.type === "warning")).toMatchObject({ code: "remote_failed" });
    expect(turn.store.holding.activeAgent).toBe("triage");
  });
});

describe("reaching a remote agent", () => {
  it("goes through a service binding when one is named, on the card's path", async () => {
    const seen: string[] = [];
    const binding = { fetch: (input: string | URL | Request, init?: RequestInit) => (seen.push(String(input)), fetch(input, init)) };
    const net = network({ binding: "BILLING" });
    const turn = await runScripted(net, "through the binding", [transfer("billing")], {
      remote: new A2ARemotes({ BILLING: binding, BILLING_TOKEN: SECRET }),
    });
    expect(texts(turn.events)).toContain("Billing here");
    expect(seen).toEqual([`${remote.url}/.well-known/agent-card.json`, `${remote.url}/a2a`]);
  });

  it("refuses a URL that is not http(s) when the agent is defined", () => {
    expect(() => remoteAgent({ name: "x", description: "x", url: "ftp://example.com" })).toThrow(/http\(s\) URL/);
  });

  it("writes ahead what it sends: a call cut off is not sent again, the next message goes alone", async () => {
    const store = new MemoryStore("triage");
    const net = network();
    await runScripted(net, "first", [transfer("billing")], { store, remote: port() });
    // The host stops the turn while the remote works (as a crash would cut it off).
    const stop = new AbortController();
    const turn = runTurn({
      conversationId: "c1",
      network: net,
      model: new ScriptedModel([]),
      store,
      remote: port(),
      conversation: store.conversation(),
      input: { kind: "message", text: "please hang on" },
      signal: stop.signal,
    });
    const ended: RunEvent[] = [];
    setTimeout(() => stop.abort(), 200);
    for await (const event of turn) ended.push(event);
    expect(ended.at(-1)).toMatchObject({ type: "done", status: "cancelled" });
    expect(store.holding.agentStates.billing?.sent).toBe(store.history.length);
    await runScripted(net, "any news?", [], { store, remote: port() });
    expect(remote.executor.received.at(-1)!.text).toBe("any news?");
  });

  it("keeps the conversation with the store: a second turn after a new port reaches the same context", async () => {
    const store = new MemoryStore("triage");
    const net = network();
    await runScripted(net, "first", [transfer("billing")], { store, remote: port() });
    const contextId = store.holding.agentStates.billing?.contextId;
    await runScripted(net, "second", [], { store, remote: port() });
    expect(remote.executor.received.at(-1)).toMatchObject({ text: "second", contextId });
  });
});

describe("a remote agent asked as a tool", () => {
  it("runs as a delegation: it is sent the request alone, its task's text is the tool's result, and the caller keeps the conversation", async () => {
    const billing = remoteAgent({
      name: "billing",
      description: "Billing questions, answered by the billing team's agent.",
      url: `${remote.url}/.well-known/agent-card.json`,
      headers: (env) => ({ authorization: String(env.BILLING_TOKEN) }),
    });
    const triage = new Agent({ name: "triage", description: "Routes.", instructions: "You route.", tools: [billing.asTool()] });
    const from = remote.executor.received.length;
    const { events, store } = await runScripted(
      new Network(triage, { defaultModel: "m" }),
      "was I charged twice?",
      [
        { toolCalls: [{ id: "b", name: "ask_billing", args: { request: "Was order A1001 charged twice?" } }] },
        { text: "Billing checked." },
      ],
      { remote: port() },
    );
    const sent = remote.executor.received.slice(from);
    expect(sent[0]!.text).toContain("Was order A1001 charged twice?");
    expect(sent[0]!.text).not.toContain("was I charged twice?");
    expect(sent[0]!.authorization).toBe(SECRET);
    const result = events.find((e) => e.type === "tool-result" && e.toolCallId === "b") as Extract<RunEvent, { type: "tool-result" }>;
    expect(result.isError).toBe(false);
    expect(String(result.result)).toMatch(/^Billing here: you said/);
    expect(events.some((e) => e.type === "delegated" && e.agent === "billing" && e.event.type === "step-start")).toBe(true);
    expect(store.holding.activeAgent).toBe("triage");
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed", text: "Billing checked." });
  });
});
