/**
 * What each kind of change of hands counts: one test per cell of the table in docs/handoffs.md
 * ("What each kind of change of hands counts"), and the table itself held to `HANDOFF_RULES`.
 * Kinds: a transfer (by the model, by a router), a return (on call, on answer), a person's
 * hand-back, a remote agent's hand-back. Columns: `handoffCount`, `maxHandoffs`,
 * `maxHandoffsPerTurn`, `allowRevisit` and `onHandoff`.
 */
import handoffsPage from "../../docs/handoffs.md?raw";
import { describe, expect, it, vi } from "vitest";
import { personHandBackHook } from "../../src/conversation/person-hold.ts";
import type { HandBackRecord } from "../../src/runtime/handoff/types.ts";
import { Redactor } from "../../src/runtime/redact.ts";
import { changeHands, HANDOFF_RULES } from "../../src/runtime/handoff/change-hands.ts";
import {
  Agent,
  type HandoffInfo,
  handoff,
  humanAgent,
  type Limits,
  Network,
  type NetworkOptions,
  type RemotePort,
  remoteAgent,
  type ReturnMode,
  type RunEvent,
} from "../../src/runtime/index.ts";
import { runScripted, type ScriptStep } from "../../src/testing/index.ts";

/** triage hands to billing (plainly, or returning), to a person, or to a remote agent; billing hands back to triage. */
function network(options: NetworkOptions & { returns?: ReturnMode } = {}): { net: Network; seen: HandoffInfo[] } {
  const seen: HandoffInfo[] = [];
  const { returns, ...rest } = options;
  const billing = new Agent({ name: "billing", description: "Bills.", instructions: "You bill." });
  const desk = humanAgent({ name: "desk", description: "A person." });
  const partner = remoteAgent({ name: "partner", description: "A remote agent.", url: "https://partner.example/a2a" });
  const triage = new Agent({
    name: "triage",
    description: "Routes.",
    instructions: "You route.",
    handoffs: [returns ? handoff(billing, { returns }) : billing, desk, partner],
  });
  billing.addHandoff(triage);
  const net = new Network(triage, { defaultModel: "m", transferScope: "declared", onHandoff: (info) => void seen.push(info), ...rest });
  return { net, seen };
}

const TO_BILLING: ScriptStep = { toolCalls: [{ name: "transfer_to_billing", args: { reason: "a charge" } }] };
const refusals = (events: RunEvent[]) => events.flatMap((e) => (e.type === "tool-result" && e.isError ? [String(e.result)] : []));
const handoffs = (events: RunEvent[]) => events.flatMap((e) => (e.type === "handoff" ? [`${e.kind}:${e.from}→${e.to}`] : []));

async function run(options: NetworkOptions & { returns?: ReturnMode }, script: ScriptStep[], limits: Partial<Limits> = {}) {
  const { net, seen } = network(options);
  const turn = await runScripted(net, "hello", script, { limits });
  return { ...turn, seen };
}

describe("a transfer by the model", () => {
  it("handoffCount: counted", async () => {
    const { store } = await run({}, [TO_BILLING, { text: "ok" }]);
    expect(store.holding.handoffCount).toBe(1);
  });
  it("maxHandoffs: refused once the conversation's are spent", async () => {
    const { events, store } = await run({ maxHandoffs: 0 }, [TO_BILLING, { text: "I will help." }]);
    expect(refusals(events)).toEqual(["Handoff limit for this conversation (0) reached; continue yourself."]);
    expect(store.holding).toMatchObject({ activeAgent: "triage", handoffCount: 0 });
  });
  it("maxHandoffsPerTurn: refused once the turn's are spent", async () => {
    const { events } = await run({}, [TO_BILLING, { text: "I will help." }], { maxHandoffsPerTurn: 0 });
    expect(refusals(events)).toEqual(["Handoff limit (0) reached; continue yourself."]);
  });
  it("allowRevisit: false refuses a transfer back to an agent that held the conversation in this turn", async () => {
    const back = { toolCalls: [{ name: "transfer_to_triage", args: {} }] };
    const { events } = await run({ allowRevisit: false }, [TO_BILLING, back, { text: "Still billing." }]);
    expect(refusals(events)).toEqual(["Cannot hand off to 'triage': already visited in this turn."]);
  });
  it("onHandoff: called, told its kind", async () => {
    const { seen } = await run({}, [TO_BILLING, { text: "ok" }]);
    expect(seen).toEqual([{ kind: "transfer", from: "triage", to: "billing", reason: "a charge" }]);
  });
});

describe("a transfer by a router", () => {
  const router = { router: { route: () => ({ agent: "billing", confidence: 0.99 }) }, threshold: 0.5, name: "rules" };
  it("handoffCount: counted, as a model's transfer is", async () => {
    const { store, events } = await run({ router }, [{ text: "billing here" }]);
    expect(handoffs(events)).toEqual(["transfer:triage→billing"]);
    expect(store.holding.handoffCount).toBe(1);
  });
  it("maxHandoffs: refused once spent; the model then decides", async () => {
    const { events, store } = await run({ router, maxHandoffs: 0 }, [{ text: "triage answers" }]);
    expect(refusals(events)).toEqual(["Handoff limit for this conversation (0) reached; continue yourself."]);
    expect(store.holding.activeAgent).toBe("triage");
  });
  it("maxHandoffsPerTurn: refused once spent", async () => {
    const { events } = await run({ router }, [{ text: "triage answers" }], { maxHandoffsPerTurn: 0 });
    expect(refusals(events)).toEqual(["Handoff limit (0) reached; continue yourself."]);
  });
  it("allowRevisit: nothing to revisit, since a router acts only on a turn's first step, before anyone else held the conversation", async () => {
    // A router acts on a turn's first step only, before anyone has held the conversation in it: there is nothing to revisit.
    const { events } = await run({ router, allowRevisit: false }, [{ text: "billing here" }]);
    expect(refusals(events)).toEqual([]);
  });
  it("onHandoff: called, told it is a transfer", async () => {
    const { seen } = await run({ router }, [{ text: "billing here" }]);
    expect(seen).toEqual([{ kind: "transfer", from: "triage", to: "billing", reason: "rules: 0.99" }]);
  });
});

describe("a return on call", () => {
  const back = { toolCalls: [{ name: "return_to_triage", args: { summary: "refunded" } }] };
  const script = [TO_BILLING, back, { text: "Triage again." }];
  it("handoffCount: not counted (only the transfer that opened its frame is)", async () => {
    const { store, events } = await run({ returns: "on-call" }, script);
    expect(handoffs(events)).toEqual(["transfer:triage→billing", "return:billing→triage"]);
    expect(store.holding.handoffCount).toBe(1);
  });
  it("maxHandoffs: never refused, even with the conversation's spent", async () => {
    const { store, events } = await run({ returns: "on-call", maxHandoffs: 1 }, script);
    expect([refusals(events), store.holding.activeAgent]).toEqual([[], "triage"]);
  });
  it("maxHandoffsPerTurn: never refused, even with the turn's spent", async () => {
    const { store, events } = await run({ returns: "on-call" }, script, { maxHandoffsPerTurn: 1 });
    expect([refusals(events), store.holding.activeAgent]).toEqual([[], "triage"]);
  });
  it("allowRevisit: never refused (going back to where it came from is the point)", async () => {
    const { store, events } = await run({ returns: "on-call", allowRevisit: false }, script);
    expect([refusals(events), store.holding.activeAgent]).toEqual([[], "triage"]);
  });
  it("onHandoff: called, told it is a return, with the summary", async () => {
    const { seen } = await run({ returns: "on-call" }, script);
    expect(seen.at(-1)).toEqual({ kind: "return", from: "billing", to: "triage", reason: "refunded" });
  });
});

describe("a return on answer", () => {
  const script = [TO_BILLING, { text: "Refunded." }];
  it("handoffCount: not counted", async () => {
    const { store, events } = await run({ returns: "on-answer" }, script);
    expect(handoffs(events)).toEqual(["transfer:triage→billing", "return:billing→triage"]);
    expect(store.holding.handoffCount).toBe(1);
  });
  it("maxHandoffs, maxHandoffsPerTurn, allowRevisit: never refused (an answer cannot be refused: it ends the turn)", async () => {
    const { store } = await run({ returns: "on-answer", maxHandoffs: 1, allowRevisit: false }, script, { maxHandoffsPerTurn: 1 });
    expect(store.holding.activeAgent).toBe("triage");
  });
  it("onHandoff: called, told it is a return", async () => {
    const { seen } = await run({ returns: "on-answer" }, script);
    expect(seen.map((s) => s.kind)).toEqual(["transfer", "return"]);
  });
});

describe("a person's hand-back (the change the Durable Object commits: test/worker/operator.test.ts sends it over HTTP)", () => {
  /** A transfer to the person, then their hand-back as PersonHold commits it: `changeHands` on the stored holding. */
  async function handedBack(options: NetworkOptions) {
    const { net, seen } = network(options);
    const first = await runScripted(net, "a person please", [{ toolCalls: [{ name: "transfer_to_desk", args: {} }] }]);
    const record: HandBackRecord = { kind: "hand-back", from: "desk", to: "triage", note: "sorted" };
    const changed = changeHands(first.store.holding, { record, by: "person" });
    first.store.commitStep({ messages: changed.messages, holding: changed.holding, handoff: changed.record });
    return { store: first.store, net, seen, changed, record };
  }
  it("handoffCount: not counted", async () => {
    const { store, changed } = await handedBack({});
    expect([store.holding.activeAgent, store.holding.handoffCount]).toEqual(["triage", 1]);
    expect(changed.messages).toEqual([
      { role: "system", agent: "triage", content: "The person at 'desk' handed the conversation back to 'triage': sorted" },
    ]);
  });
  it("maxHandoffs: spends none, so the conversation can still be handed on afterwards", async () => {
    const { store, net } = await handedBack({ maxHandoffs: 2 });
    const next = await runScripted(net, "billing now", [TO_BILLING, { text: "billing" }], { store });
    expect([refusals(next.events), store.holding.activeAgent, store.holding.handoffCount]).toEqual([[], "billing", 2]);
  });
  it("maxHandoffsPerTurn and allowRevisit: a person's decision is never refused", () => {
    expect(HANDOFF_RULES["person-hand-back"]).toMatchObject({ capped: false, revisitChecked: false });
  });
  it("onHandoff: called once it is committed (personHandBackHook, which PersonHold.handBack runs after its commit, from the desk or the deadline alike); a throw is logged, redacted, and undoes nothing", async () => {
    const { net, seen, record } = await handedBack({});
    await personHandBackHook(net, record, new Redactor([]));
    expect(seen.at(-1)).toEqual({ kind: "person-hand-back", from: "desk", to: "triage", reason: "sorted" });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const throwing = network({ onHandoff: () => Promise.reject(new Error("audit down, key sk-secret-value")) }).net;
    await expect(personHandBackHook(throwing, record, new Redactor(["sk-secret-value"]))).resolves.toBeUndefined();
    expect(logged.mock.calls.map((c) => String(c[0]))).toEqual(["onHandoff failed: audit down, key [redacted]"]);
    logged.mockRestore();
  });
});

describe("a remote agent's hand-back", () => {
  const port: RemotePort = {
    async *stream() {
      yield { type: "text-delta", delta: "Paid." };
      yield { type: "hand-back", summary: "the invoice is paid" };
      yield { type: "finish", finishReason: "stop" };
    },
  };
  const toPartner: ScriptStep = { toolCalls: [{ name: "transfer_to_partner", args: {} }] };
  async function handBack(options: NetworkOptions, limits: Partial<Limits> = {}) {
    const { net, seen } = network(options);
    const turn = await runScripted(net, "pay it", [toPartner, { text: "Back with triage." }], { remote: port, limits });
    return { ...turn, seen };
  }
  it("handoffCount: not counted", async () => {
    const { store, events } = await handBack({});
    expect(handoffs(events)).toEqual(["transfer:triage→partner", "hand-back:partner→triage"]);
    expect(store.holding.handoffCount).toBe(1);
  });
  it("maxHandoffs, maxHandoffsPerTurn, allowRevisit: never refused", async () => {
    const { store } = await handBack({ maxHandoffs: 1, allowRevisit: false }, { maxHandoffsPerTurn: 1 });
    expect(store.holding.activeAgent).toBe("triage");
  });
  it("onHandoff: called, told it is a remote agent's hand-back, with its note", async () => {
    const { seen } = await handBack({});
    expect(seen.at(-1)).toEqual({ kind: "remote-hand-back", from: "partner", to: "triage", reason: "the invoice is paid" });
  });
});

describe("the table in docs/handoffs.md", () => {
  it("says what HANDOFF_RULES says, kind by kind", () => {
    const docs = handoffsPage;
    const section = docs.slice(docs.indexOf("### What each kind of change of hands counts"));
    const rows = [...section.matchAll(/^\| `([a-z-]+)` \|(.*)\|$/gm)].map(([, kind, cells]) => [
      kind,
      cells!.split("|").map((c) => c.trim()),
    ]);
    const yes = (cell: string) =>
      cell.startsWith("yes") || cell.startsWith("counted") || cell.startsWith("refused") || cell.startsWith("called");
    expect(Object.fromEntries(rows.map(([kind, cells]) => [kind, (cells as string[]).map(yes)]))).toEqual(
      Object.fromEntries(
        Object.entries(HANDOFF_RULES).map(([kind, r]) => [kind, [r.counted, r.capped, r.capped, r.revisitChecked, r.hook]]),
      ),
    );
  });
});
