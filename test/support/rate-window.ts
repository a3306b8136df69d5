/** The rate-limiting binding's windows are aligned to the clock (epoch minutes), as Cloudflare's are. */
export const WINDOW_MS = 60_000;

/**
 * Runs a count that must fall within one window of the binding. It starts at once rather than
 * waiting for a fresh window; a count the clock cut in two is run again with fresh keys (`attempt`
 * tells the count which), now early in a window.
 */
export async function inOneWindow<T>(count: (attempt: number) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const window = Math.floor(Date.now() / WINDOW_MS);
    const result = await count(attempt);
    if (Math.floor(Date.now() / WINDOW_MS) === window) return result;
    if (attempt > 0) throw new Error("the count ran past its window twice: the machine is too slow for this test");
  }
}
