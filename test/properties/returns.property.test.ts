/**
 * Returning handoffs and people under random models: in a network where triage hands to the
 * calculator (returns on answer) and to billing (returns on call), billing to an auditor (returns on
 * call), and anyone to a person at the desk, a model picks among the tools it is offered (transfers,
 * returns with and without a summary, plain answers) over several turns. After every turn: the
 * history is valid, the stored caller stack is what the handoff events say it is, and a turn that
 * started with the person holding the conversation made no model call.
 */
import fc from "fast-check";
import { describe, expect, inject, it } from "vitest";
import {
  Agent,
  handoff,
  humanAgent,
  type Model,
  type ModelEvent,
  type ModelRequest,
  Network,
  type RunEvent,
  runTurn,
} from "../../src/runtime/index.ts";
import { findHistoryProblem } from "../../src/runtime/messages.ts";
import { MemoryStore } from "../../src/testing/index.ts";

function network(): Network {
  const desk = humanAgent({ name: "desk", description: "A person." });
  const auditor = new Agent({ name: "auditor", description: "Audits.", instructions: "a" });
  const billing = new Agent({
    name: "billing",
    description: "Bills.",
    instructions: "b",
    handoffs: [handoff(auditor, { returns: "on-call" }), desk],
  });
  const calculator = new Agent({ name: "calculator", description: "Computes.", instructions: "c" });
  const triage = new Agent({
    name: "triage",
    description: "Routes.",
    instructions: "t",
    handoffs: [handoff(calculator, { returns: "on-answer" }), handoff(billing, { returns: "on-call" }), desk],
  });
  return new Network(triage, { defaultModel: "m", transferScope: "declared" });
}

/** The edges that open a frame: who hands off to whom, and how it comes back. */
const RETURNING: Record<string, "on-answer" | "on-call"> = {
  "triage→calculator": "on-answer",
  "triage→billing": "on-call",
  "billing→auditor": "on-call",
};

/** Picks, at each call, one of the offered tools (or a plain answer), by the next number of its choices. */
class ChoosingModel implements Model {
  calls = 0;
  #next = 0;
  readonly #choices: readonly number[];
  constructor(choices: readonly number[]) {
    this.#choices = choices;
  }
  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    this.calls++;
    const pick = this.#choices[this.#next++ % this.#choices.length]!;
    const options = request.tools.map((t) => t.name);
    const choice = pick % (options.length + 2);
    if (choice >= options.length) {
      yield { type: "text-delta", delta: "an answer" };
      yield { type: "finish", finishReason: "stop" };
      return;
    }
    const name = options[choice]!;
    // Returns sometimes come without their required summary.
    const args = name.startsWith("return_to_") && pick % 3 === 0 ? {} : { summary: "done", reason: "r" };
    yield { type: "tool-call", call: { id: `c${this.calls}`, name, arguments: JSON.stringify(args) } };
    yield { type: "finish", finishReason: "tool_calls" };
  }
}

describe("returning handoffs and people (property)", () => {
  it("keep the history valid, the caller stack in step with the handoff events, and people free of model calls", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(1000), { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 5 }), async (choices, turns) => {
        const net = network();
        const store = new MemoryStore("triage");
        const model = new ChoosingModel(choices);
        const stack: string[] = [];
        for (let turn = 0; turn < turns; turn++) {
          const heldByPerson = net.get(store.holding.activeAgent)?.human === true;
          const before = model.calls;
          const events: RunEvent[] = [];
          for await (const event of runTurn({
            conversationId: "c",
            network: net,
            model,
            store,
            conversation: store.conversation(),
            input: { kind: "message", text: `message ${turn}` },
            limits: { maxSteps: 4, maxHandoffsPerTurn: 3 },
          }))
            events.push(event);
          expect(findHistoryProblem(store.history)).toBeNull();
          if (heldByPerson) expect(model.calls).toBe(before);
          for (const e of events) {
            if (e.type !== "handoff") continue;
            if (e.kind === "return") expect(stack.pop()).toBe(`${e.to}→${e.from}`);
            else if (RETURNING[`${e.from}→${e.to}`]) stack.push(`${e.from}→${e.to}`);
          }
          expect(store.holding.callers.map((f) => `${f.caller}→${f.callee}`)).toEqual(stack);
        }
      }),
      { numRuns: inject("propertyRuns"), seed: inject("propertySeed") },
    );
  });
});
