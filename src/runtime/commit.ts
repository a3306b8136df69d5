import type { CallsInFlight } from "./calls-in-flight.ts";
import type { TurnItem } from "./run-options.ts";
import type { StepCommit } from "./store-port.ts";
import type { RunContext } from "./turn-state.ts";

/**
 * A step's commit: stored through the store port when there is one (and then nothing is
 * returned), else returned as the item to hand the host, in order. A plain async function rather
 * than a generator: it runs at every step, and a generator per call costs measurably.
 */
export async function commit(run: RunContext, stepCommit: StepCommit): Promise<TurnItem | undefined> {
  if (!run.store) return { type: "commit", commit: stepCommit };
  await run.store.commitStep(stepCommit);
  return undefined;
}

/** A step's calls written ahead of its tools, the same way: through the store port, or as the item to hand the host. */
export async function recordCalls(run: RunContext, calls: CallsInFlight): Promise<TurnItem | undefined> {
  if (!run.store) return { type: "calls", calls };
  await run.store.recordCalls?.(calls);
  return undefined;
}
