/** How a delegating run hands on what its delegations produce: to the store port it has, or out as items, live or after. */
import type { TurnItem } from "../run-options.ts";
import type { RunContext } from "../turn-state.ts";

/**
 * A nested item as the delegating run hands it on: a delegated step goes to the store port when the run has one (its
 * events come out alone), else it goes out whole for the host to store; events go out as they are.
 */
export async function* emitNested(run: RunContext, item: TurnItem): AsyncGenerator<TurnItem> {
  if (item.type !== "delegation-commit" || !run.store) return yield item;
  await run.store.commitDelegation?.(item.path, item.agent, item.commit, item.asked);
  for (const event of item.events) yield event;
}

/** Whether a step's calls include a delegation (`Agent.asTool`): only then are its tools' items yielded live. */
export function delegates(plan: ReadonlyArray<{ kind: string; tool?: { delegates?: boolean } | undefined }>): boolean {
  return plan.some((p) => p.kind === "tool" && p.tool?.delegates === true);
}

/** Yields what the step's tools hand it while `work` runs (live), then what is left; returns what `work` resolves to. */
export async function* whileNested<T>(run: RunContext, work: Promise<T>, live: boolean): AsyncGenerator<TurnItem, T> {
  if (!live) {
    const value = await work;
    for (const item of run.nested.take()) yield* emitNested(run, item);
    return value;
  }
  const items = run.nested.during(work);
  for (;;) {
    const next = await items.next();
    if (next.done) return next.value;
    yield* emitNested(run, next.value);
  }
}
