import {
  newConversation,
  type Limits,
  type Model,
  type Network,
  type RunEvent,
  type RunTurnOptions,
  runTurn,
  type TurnInput,
} from "../../src/runtime/index.ts";
import { type MemoryFiles, MemoryStore, runScripted, type ScriptedModel, type ScriptStep } from "../../src/testing/index.ts";

export interface TurnResult {
  events: RunEvent[];
  model: ScriptedModel;
  store: MemoryStore;
}

/** Runs one turn of `network` against a script and checks what must hold after any turn (the package's `runScripted`). */
export async function playTurn(
  network: Network,
  message: string | TurnInput,
  script: ScriptStep[],
  options: { store?: MemoryStore; limits?: Partial<Limits>; files?: MemoryFiles } = {},
): Promise<TurnResult> {
  const { events, model, store } = await runScripted(network, message, script, options);
  return { events, model, store };
}

export function ofType<T extends RunEvent["type"]>(events: RunEvent[], type: T): Extract<RunEvent, { type: T }>[] {
  return events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
}

/**
 * Runs one turn of a fresh conversation (a message "hi" to the entry agent) with any model, and
 * collects its events; `each` sees every event as it happens.
 */
export async function eventsOfTurn(
  network: Network,
  model: Model,
  more: Partial<RunTurnOptions> = {},
  each: (event: RunEvent) => void = () => {},
): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of runTurn({
    conversationId: "c",
    network,
    model,
    store: new MemoryStore(network.entry.name),
    conversation: newConversation(network.entry.name),
    input: { kind: "message", text: "hi" },
    ...more,
  })) {
    each(event);
    events.push(event);
  }
  return events;
}
