/** The rate-limiting binding's windows are aligned to the clock (epoch minutes), as Cloudflare's are. */
export const WINDOW_MS = 60_000;

/**
 * Runs a count that must fall within one window of the binding. It starts at once rather than
 * waiting for a fresh window; a count the clock cut in two is run again with fresh keys (`attempt`
 * tells the count which) from the start of the next window, so a slow machine gets the whole minute.
 */
export async function inOneWindow<T>(count: (attempt: number) => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, WINDOW_MS - (Date.now() % WINDOW_MS) + 200));
    const window = Math.floor(Date.now() / WINDOW_MS);
    const result = await count(attempt);
    if (Math.floor(Date.now() / WINDOW_MS) === window) return result;
    if (attempt > 0) throw new Error("the count ran past a whole window: the machine is too slow for this test");
  }
}
