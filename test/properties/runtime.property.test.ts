/**
 * Invariants of the run loop under random networks, random models (text, valid and broken tool
 * calls, transfers in every style, approval-gated calls, faults) and random sequences of messages
 * and decisions. A failure shrinks to a minimal case; keep it as a regular test.
 */
import fc from "fast-check";
import { describe, expect, inject, it } from "vitest";
import {
  type ApprovalDecision,
  findHistoryProblem,
  type Model,
  type ModelEvent,
  type ModelRequest,
  type Network,
  type RunEvent,
  RuntimeError,
  runTurn,
} from "../../src/runtime/index.ts";
import { storedState } from "../support/run.ts";
import { MemoryStore } from "../support/scripted-model.ts";
import { buildNetwork, networkSpec, operations, type StepSpec, stepSpec, transferCall } from "./arbitraries.ts";

/** Plays random steps in order, then answers with text so every turn can end. */
class RandomModel implements Model {
  readonly requests: ModelRequest[] = [];
  #calls = 0;
  constructor(
    readonly network: Network,
    readonly steps: StepSpec[],
  ) {}

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    this.requests.push(request);
    const step = this.steps[this.#calls];
    const n = this.#calls++;
    if (!step) {
      yield { type: "text-delta", delta: "done" };
      yield { type: "finish", finishReason: "stop" };
      return;
    }
    if ("fault" in step) {
      if (step.fault === "after") yield { type: "text-delta", delta: "partial" };
      throw new RuntimeError("model_stream_interrupted", "cut");
    }
    if (step.text) yield { type: "text-delta", delta: step.text };
    for (const [i, call] of step.calls.entries()) {
      const id = `c${n}_${i}`;
      if (call.kind === "tool") yield { type: "tool-call", call: { id, name: call.name, arguments: call.args } };
      else if (call.kind === "unknown-tool") yield { type: "tool-call", call: { id, name: "no_such_tool", arguments: "{}" } };
      else yield { type: "tool-call", call: { id, ...transferCall(this.network, call.target) } };
    }
    yield { type: "finish", finishReason: step.calls.length ? "tool_calls" : "stop", usage: { inputTokens: 1, outputTokens: 1 } };
  }
}

const runs = inject("propertyRuns");
const seed = inject("propertySeed");

describe("run loop invariants (fast-check)", () => {
  it(`hold for random networks, models and operations (${runs} runs, seed ${seed})`, async () => {
    await fc.assert(
      fc.asyncProperty(networkSpec, fc.array(stepSpec, { maxLength: 14 }), operations, async (spec, steps, ops) => {
        const network = buildNetwork(spec);
        const model = new RandomModel(network, steps);
        const store = new MemoryStore(network.entry.name);
        const limits = { maxSteps: spec.maxSteps, maxHandoffsPerTurn: spec.maxHandoffsPerTurn };
        let handoffEvents = 0;
        for (const op of ops) {
          const requestsBefore = model.requests.length;
          let input: Parameters<typeof runTurn>[0]["input"];
          if (op.kind === "message") {
            if (store.suspension) continue; // the session answers 409 approval_pending
            input = { kind: "message", text: "hello" };
          } else if (op.kind === "decide-unknown") {
            continue; // the session answers 404/409 before the loop runs
          } else {
            if (!store.suspension) continue;
            const decisions: ApprovalDecision[] = store.suspension.pending.map((p) => ({ toolCallId: p.toolCallId, approved: op.approve }));
            input = { kind: "resume", suspension: store.suspension, decisions };
          }
          const events: RunEvent[] = [];
          for await (const event of runTurn({
            conversationId: "p",
            network,
            model,
            store,
            ...storedState(store),
            input,
            limits,
          })) {
            events.push(event);
          }
          // 2. Exactly one terminal event, and it is the last.
          expect(events.filter((e) => e.type === "done" || e.type === "error")).toHaveLength(1);
          expect(["done", "error"]).toContain(events.at(-1)!.type);
          // 1. The stored history is valid for the model APIs, and no call id is stored twice.
          expect(findHistoryProblem(store.history)).toBeNull();
          const ids = store.history.flatMap((m) => (m.role === "assistant" ? (m.toolCalls ?? []).map((c) => c.id) : []));
          expect(new Set(ids).size).toBe(ids.length);
          // 3. Handoff counters stay within their limits and equal the handoff events sent.
          const turnHandoffs = events.filter((e) => e.type === "handoff").length;
          handoffEvents += turnHandoffs;
          expect(store.handoffCount).toBe(handoffEvents);
          const done = events.at(-1)!;
          if (done.type === "done") expect(done.handoffs.length).toBeLessThanOrEqual(spec.maxHandoffsPerTurn);
          if (spec.maxHandoffs !== undefined) expect(store.handoffCount).toBeLessThanOrEqual(spec.maxHandoffs);
          // 4. Model calls per leg stay within what the limits imply.
          expect(model.requests.length - requestsBefore).toBeLessThanOrEqual(spec.maxSteps * (spec.maxHandoffsPerTurn + 1));
          // 6. The active agent belongs to the network; each request offered exactly its tools and permitted transfers.
          expect(network.get(store.activeAgent)).toBeDefined();
          for (const request of model.requests.slice(requestsBefore)) {
            expect(request.tools.map((t) => t.name)).toEqual(network.toolset(request.agent).specs.map((s) => s.name));
          }
        }
      }),
      { numRuns: runs, seed },
    );
  });
});
