import type { CallsInFlight } from "./calls-in-flight.ts";
import type { RunEvent } from "./events.ts";
import type { TurnItem } from "./run-options.ts";
import type { StepCommit } from "./ports/store-port.ts";
import type { RunContext } from "./turn-state.ts";

/**
 * A step's commit and the events it announces (its tool results, handoff, step-finish): stored
 * through the store port when there is one, and then only the events come back to be yielded;
 * else one commit item that carries them, for a host that stores the step and its events in one
 * transaction, so a crash never keeps the one without the other. A plain async function rather
 * than a generator: it runs at every step, and a generator per call costs measurably.
 */
export async function commit(run: RunContext, stepCommit: StepCommit, events: readonly RunEvent[] = []): Promise<readonly TurnItem[]> {
  if (!run.store) return [{ type: "commit", commit: stepCommit, events }];
  await run.store.commitStep(stepCommit);
  return events;
}

/** A step's calls written ahead of its tools, the same way: through the store port, or as the item to hand the host. */
export async function recordCalls(run: RunContext, calls: CallsInFlight): Promise<TurnItem | undefined> {
  if (!run.store) return { type: "calls", calls };
  await run.store.recordCalls?.(calls);
  return undefined;
}
