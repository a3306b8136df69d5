import { RuntimeError } from "../runtime/errors.ts";

/**
 * Iterates a provider stream, failing with `model_timeout` when no chunk arrives within `idleMs`
 * (the request is aborted), so a stalled provider never hangs a turn. One timer a stream, not
 * one a chunk: when it fires it looks at when the last chunk came and waits out the rest, so a
 * stream of a thousand chunks sets one timer (or one per `idleMs` it lasts), not a thousand.
 */
export async function* guardIdle<T>(source: AsyncIterable<T>, idleMs: number, abort: () => void): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let lastChunk = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => {
    const check = () => {
      const idle = Date.now() - lastChunk;
      if (idle < idleMs) return void (timer = setTimeout(check, idleMs - idle));
      abort();
      reject(new RuntimeError("model_timeout", `The model stream stalled: nothing arrived for ${idleMs} ms.`));
    };
    timer = setTimeout(check, idleMs);
  });
  // Once the stream ends no one races it: a rejection then has no one left to hear it.
  stalled.catch(() => {});
  try {
    for (;;) {
      const pending = iterator.next();
      // After a timeout the aborted read rejects too; that rejection has no one left to hear it.
      pending.catch(() => {});
      const next = await Promise.race([pending, stalled]);
      lastChunk = Date.now();
      if (next.done) return;
      yield next.value;
      // Time the consumer held the chunk is not the provider's silence.
      lastChunk = Date.now();
    }
  } finally {
    clearTimeout(timer);
    await iterator.return?.()?.catch(() => {});
  }
}

/** The error for a stream that ended without its terminating event. */
export function interrupted(detail: string): RuntimeError {
  return new RuntimeError("model_stream_interrupted", `The model stream ended early: ${detail}. Nothing of this step was kept.`);
}
