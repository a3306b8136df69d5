/** Reads until `ok` holds of what was read, and answers it; after `ms` it throws, naming `what` and the last value read. */
export async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string, ms = 8_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)?.slice(0, 400)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
