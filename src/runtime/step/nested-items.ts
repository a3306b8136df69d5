/**
 * What tools hand the step while they run: a delegated agent's events and steps, yielded by the
 * step as they come (not once its tools have answered), so a client sees the child work live.
 */
import type { RunEvent } from "../events.ts";
import type { TurnItem } from "../run-options.ts";

/** Delegations of one step that run at once when the network sets no `maxParallelDelegations`. */
export const DEFAULT_PARALLEL_DELEGATIONS = 4;

export class NestedItems {
  #queue: TurnItem[] = [];
  #wake: (() => void) | null = null;

  push(item: TurnItem): void {
    this.#queue.push(item);
    this.#wake?.();
  }

  /** What was pushed and not yet taken. */
  take(): TurnItem[] {
    return this.#queue.splice(0);
  }

  /** Yields what is pushed while `work` runs, then what is left; returns what `work` resolves to, or throws its error. */
  async *during<T>(work: Promise<T>): AsyncGenerator<TurnItem, T> {
    let settled = false;
    const done = work.finally(() => {
      settled = true;
      this.#wake?.();
    });
    // Its failure is thrown below, once what came before it is out.
    done.catch(() => {});
    for (;;) {
      for (const item of this.take()) yield item;
      if (settled) break;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = null;
    }
    for (const item of this.take()) yield item;
    return done;
  }
}

/** At most `limit` at once: the delegations of a step beyond it wait for one to end. */
export class Slots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(limit: number) {
    this.#free = Math.max(1, limit);
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}

/** An event of a delegated run, as its delegating run streams it. */
export function nest(path: readonly string[], agent: string, event: RunEvent): RunEvent {
  return event.type === "delegated" ? event : { type: "delegated", path: [...path], agent, event };
}
