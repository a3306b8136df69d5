/**
 * Background delegation (`asTool({ background: true })`) in the runtime, host-agnostic: the call
 * answers at once with what the host's schedule took on; the host later runs the delegated agent
 * on a fresh context with only the request (`runInBackground`), its steps under the call's path and
 * its events nested; what came of it is the note of the follow-up the agent that asked reads. A run
 * that asks the user ends in a wait the host keeps, and carries on from it with the user's decisions.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  type BackgroundItem,
  type BackgroundOutcome,
  type BackgroundResult,
  type BackgroundResume,
  backgroundNote,
  recoveredOutcome,
  runInBackground,
} from "../../src/runtime/background-delegation.ts";
import { newConversation } from "../../src/runtime/conversation-snapshot.ts";
import { Agent, Network, type RunEvent, runTurn, tool } from "../../src/runtime/index.ts";
import type { BackgroundRequest, Scheduler } from "../../src/runtime/ports/scheduler-port.ts";
import type { StoredDelegation, TurnStore } from "../../src/runtime/ports/store-port.ts";
import { NO_USAGE } from "../../src/runtime/usage.ts";
import { MemoryStore, ScriptedModel, type ScriptStep } from "../support/scripted-model.ts";

const echo = tool({
  name: "echo",
  description: "Echoes.",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});
const refund = tool({
  name: "refund",
  description: "Refunds.",
  parameters: z.object({ amount: z.number() }),
  needsApproval: true,
  execute: () => "refunded",
});

function networkWith(helperTools = [echo], options: ConstructorParameters<typeof Network>[1] = {}) {
  const helper = new Agent({ name: "helper", instructions: "You help.", tools: helperTools });
  return new Network(new Agent({ name: "triage", instructions: "You are triage.", tools: [helper.asTool({ background: true })] }), {
    defaultModel: "m",
    ...options,
  });
}

/** A schedule that takes background delegations on, and keeps what it took. */
function recordingScheduler(): Scheduler & { taken: BackgroundRequest[] } {
  const taken: BackgroundRequest[] = [];
  return {
    taken,
    schedule: () => Promise.reject(new Error("no follow-ups here")),
    delegate: async (request) => {
      taken.push(request);
      return { id: `entry-${taken.length}`, agent: request.agent };
    },
  };
}

async function turn(network: Network, steps: ScriptStep[], scheduler?: Scheduler) {
  const store = new MemoryStore(network.entry.name);
  const events: RunEvent[] = [];
  for await (const event of runTurn({
    conversationId: "c1",
    network,
    model: new ScriptedModel(steps),
    store,
    conversation: store.conversation(),
    input: { kind: "message", text: "hi" },
    ...(scheduler ? { scheduler } : {}),
  }))
    events.push(event);
  return events;
}

async function background(
  network: Network,
  model: ScriptedModel,
  delegation: BackgroundRequest,
  spent = NO_USAGE,
  resume?: BackgroundResume,
  delegations?: Pick<TurnStore, "readDelegation">,
) {
  const items: BackgroundItem[] = [];
  const run = runInBackground({
    conversationId: "c1",
    network,
    model,
    delegation,
    spent,
    ...(resume ? { resume } : {}),
    ...(delegations ? { delegations } : {}),
  });
  let next = await run.next();
  for (; !next.done; next = await run.next()) items.push(next.value);
  return { items, outcome: next.value };
}

/** What a host stores of a background run's steps, by path: each run's history, the wait it is in, its asks. */
function storedRuns(items: BackgroundItem[]): Map<string, StoredDelegation> {
  const runs = new Map<string, StoredDelegation>();
  for (const item of items) {
    if (item.type !== "step") continue;
    const key = item.path.join("/");
    const before = runs.get(key) ?? { conversation: newConversation(item.agent), suspension: null, asked: 0 };
    runs.set(key, {
      conversation: { ...before.conversation, history: [...before.conversation.history, ...item.commit.messages] },
      suspension: item.commit.suspension === undefined ? before.suspension : item.commit.suspension,
      asked: item.asked,
    });
  }
  return runs;
}

/** A run's end (a wait is not one). */
function ended(result: BackgroundResult): BackgroundOutcome {
  if ("requests" in result) throw new Error(`The run waits: ${JSON.stringify(result)}`);
  return result;
}

const startHelper: ScriptStep = { toolCalls: [{ id: "bg", name: "ask_helper", args: { request: "echo A1001" } }] };

describe("a background delegation", () => {
  it("answers the call at once with what the host took on, and runs later on a fresh context, its steps and events under the call", async () => {
    const network = networkWith();
    const scheduler = recordingScheduler();
    const events = await turn(network, [startHelper, { text: "Started." }], scheduler);
    expect(events.find((e) => e.type === "tool-result")).toMatchObject({
      toolCallId: "bg",
      isError: false,
      result: { started: true, id: "entry-1", agent: "helper" },
    });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed", text: "Started." });
    expect(scheduler.taken).toEqual([{ agent: "helper", request: "echo A1001", askedBy: "triage", toolCallId: "bg" }]);

    const model = new ScriptedModel([{ toolCalls: [{ id: "e", name: "echo", args: { text: "A1001" } }] }, { text: "Echoed A1001." }]);
    const { items, outcome } = await background(network, model, scheduler.taken[0]!);
    expect(outcome).toEqual({ status: "completed", text: "Echoed A1001." });
    // Only the request: nothing of the conversation that asked.
    expect(model.requests[0]!.messages).toEqual([{ role: "user", content: "echo A1001" }]);
    expect(model.requests.every((r) => r.agent === "helper")).toBe(true);
    const steps = items.flatMap((i) => (i.type === "step" ? [i] : []));
    expect(steps.every((s) => s.path.join() === "bg" && s.agent === "helper")).toBe(true);
    expect(steps.flatMap((s) => s.commit.messages.map((m) => m.role))).toEqual(["user", "assistant", "tool", "assistant"]);
    const nested = items.flatMap((i) => (i.type === "event" ? [i.event] : []));
    expect(nested.every((e) => e.type === "delegated" && e.path.join() === "bg" && e.agent === "helper")).toBe(true);
    expect(nested.map((e) => e.event.type)).toEqual(expect.arrayContaining(["run-start", "tool-call", "tool-result", "done"]));
    expect(backgroundNote(scheduler.taken[0]!, ended(outcome))).toBe(
      "'helper', which triage asked in the background (call bg), has finished: Echoed A1001.",
    );
  });

  it("asks the user in a wait the host keeps (its requests under the call that asked), and carries on from it with their decision", async () => {
    const network = networkWith([refund]);
    const delegation = { agent: "helper", request: "refund 5", askedBy: "triage", toolCallId: "bg" };
    const model = new ScriptedModel([{ toolCalls: [{ id: "r", name: "refund", args: { amount: 5 } }] }, { text: "Refunded 5." }]);
    const first = await background(network, model, delegation);
    expect(first.outcome).toMatchObject({
      status: "awaiting_approval",
      requests: [{ kind: "approval", toolCallId: "r", name: "refund", args: { amount: 5 }, delegated: { path: ["bg"], toolCallId: "r" } }],
    });
    const steps = first.items.flatMap((i) => (i.type === "step" ? [i] : []));
    const suspension = steps.at(-1)?.commit.suspension;
    if (!suspension) throw new Error("the wait was not in the run's last step");
    const conversation = { ...newConversation("helper"), history: steps.flatMap((s) => s.commit.messages) };

    const second = await background(network, model, delegation, NO_USAGE, {
      conversation,
      suspension,
      decisions: [{ toolCallId: "r", approved: true }],
    });
    expect(second.outcome).toEqual({ status: "completed", text: "Refunded 5." });
    // The approved call ran, and the model read its result with the history of the first leg.
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]!.messages).toEqual([
      { role: "user", content: "refund 5" },
      expect.objectContaining({ role: "assistant", toolCalls: [expect.objectContaining({ id: "r", name: "refund" })] }),
      expect.objectContaining({ role: "tool", toolCallId: "r", content: "refunded" }),
    ]);
  });

  it("carries on a run delegated within it from what the host stored under its path, with the user's decision", async () => {
    const inner = new Agent({ name: "inner", instructions: "You refund.", tools: [refund] });
    const network = networkWith([inner.asTool()]);
    const delegation = { agent: "helper", request: "refund 5", askedBy: "triage", toolCallId: "bg" };
    const model = new ScriptedModel([
      { toolCalls: [{ id: "d", name: "ask_inner", args: { request: "refund 5" } }] },
      { toolCalls: [{ id: "r", name: "refund", args: { amount: 5 } }] },
      { text: "Inner refunded 5." },
      { text: "Helper: done." },
    ]);
    const first = await background(network, model, delegation);
    // The inner run's request waits on the helper's call that delegated it, and names its own call and path.
    expect(first.outcome).toMatchObject({
      status: "awaiting_approval",
      requests: [{ kind: "approval", toolCallId: "d", name: "refund", delegated: { path: ["bg", "d"], toolCallId: "r" } }],
    });
    const stored = storedRuns(first.items);
    expect([...stored.keys()].sort()).toEqual(["bg", "bg/d"]);
    const own = stored.get("bg")!;
    const second = await background(
      network,
      model,
      delegation,
      NO_USAGE,
      { conversation: own.conversation, suspension: own.suspension!, decisions: [{ toolCallId: "d", approved: true }] },
      { readDelegation: (path) => stored.get(path.join("/")) },
    );
    expect(second.outcome).toEqual({ status: "completed", text: "Helper: done." });
    // The inner run carried on from its stored wait: the approved refund ran, and the inner agent read its result.
    expect(model.requests).toHaveLength(4);
    expect(model.requests[2]!.agent).toBe("inner");
    expect(model.requests[2]!.messages.at(-1)).toMatchObject({ role: "tool", toolCallId: "r", content: "refunded" });
    expect(model.requests[3]!.messages.at(-1)).toMatchObject({ role: "tool", toolCallId: "d", content: "Inner refunded 5." });
  });

  it("is held to the conversation's budgets from what the conversation has spent", async () => {
    const network = networkWith([echo], { budgets: { perConversation: { modelCalls: 3 } } });
    const delegation = { agent: "helper", request: "echo", askedBy: "triage", toolCallId: "bg" };
    const model = new ScriptedModel([{ toolCalls: [{ id: "e", name: "echo", args: { text: "x" } }] }, { text: "Echoed." }]);
    const { outcome } = await background(network, model, delegation, { ...NO_USAGE, modelCalls: 2 });
    expect(model.requests).toHaveLength(1);
    expect(outcome).toMatchObject({ status: "failed" });
    expect(backgroundNote(delegation, ended(outcome))).toMatch(/failed: .*budget/i);
  });

  it("is refused without a schedule, as an error the model reads; an agent the network no longer has fails", async () => {
    const events = await turn(networkWith(), [startHelper, { text: "Could not." }]);
    expect(events.find((e) => e.type === "tool-result")).toMatchObject({ isError: true, result: expect.stringMatching(/no schedule/) });
    const { outcome } = await background(networkWith(), new ScriptedModel([]), {
      agent: "gone",
      request: "x",
      askedBy: "triage",
      toolCallId: "bg",
    });
    expect(outcome).toEqual({ status: "failed", message: "'gone' is no longer part of this network." });
  });

  it("cut off by a restart ends as its stored history says: its last answer when it was stored, else interrupted", () => {
    expect(
      recoveredOutcome([
        { role: "user", content: "x" },
        { role: "assistant", agent: "helper", content: "Done." },
      ]),
    ).toEqual({
      status: "completed",
      text: "Done.",
    });
    const calling = { role: "assistant" as const, agent: "helper", content: null, toolCalls: [{ id: "e", name: "echo", arguments: "{}" }] };
    expect(recoveredOutcome([{ role: "user", content: "x" }, calling])).toEqual({ status: "interrupted" });
    expect(recoveredOutcome([])).toEqual({ status: "interrupted" });
  });
});
