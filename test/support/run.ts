import { expect } from "vitest";
import { findHistoryProblem, type Limits, type Network, type RunEvent, runTurn, type TurnInput } from "../../src/runtime/index.ts";
import { MemoryStore, type ScriptStep, ScriptedModel } from "./scripted-model.ts";

export interface TurnResult {
  events: RunEvent[];
  model: ScriptedModel;
  store: MemoryStore;
}

/** Runs one turn of `network` against a script and checks what must hold after any turn. */
export async function playTurn(
  network: Network,
  message: string | TurnInput,
  script: ScriptStep[],
  options: { store?: MemoryStore; limits?: Partial<Limits> } = {},
): Promise<TurnResult> {
  const model = new ScriptedModel(script);
  const store = options.store ?? new MemoryStore(network.entry.name);
  const events: RunEvent[] = [];
  for await (const event of runTurn({
    conversationId: "c1",
    network,
    model,
    store,
    ...storedState(store),
    input: typeof message === "string" ? { kind: "message", text: message } : message,
    ...(options.limits ? { limits: options.limits } : {}),
  })) {
    events.push(event);
  }
  model.assertUsed();
  expect(findHistoryProblem(store.history)).toBeNull();
  expect(events.filter((e) => e.type === "done" || e.type === "error")).toHaveLength(1);
  expect(["done", "error"]).toContain(events.at(-1)?.type);
  return { events, model, store };
}

/** What a host passes the loop from its store: the history, the active agent and the counters. */
export function storedState(store: MemoryStore) {
  return {
    history: store.history,
    activeAgent: store.activeAgent,
    handoffCount: store.handoffCount,
    ...(store.lastHandoff ? { lastHandoff: store.lastHandoff } : {}),
    context: store.context,
  };
}

export function ofType<T extends RunEvent["type"]>(events: RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  return events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
}
