import { RuntimeError } from "../runtime/errors.ts";

/**
 * Iterates a provider stream, failing with `model_timeout` when no chunk arrives within `idleMs`
 * (the request is aborted), so a stalled provider never hangs a turn.
 */
export async function* guardIdle<T>(source: AsyncIterable<T>, idleMs: number, abort: () => void): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          abort();
          reject(new RuntimeError("model_timeout", `The model stream stalled: nothing arrived for ${idleMs} ms.`));
        }, idleMs);
      });
      const pending = iterator.next();
      // After a timeout the aborted read rejects too; that rejection has no one left to hear it.
      pending.catch(() => {});
      try {
        const next = await Promise.race([pending, stalled]);
        if (next.done) return;
        yield next.value;
      } finally {
        clearTimeout(timer);
      }
    }
  } finally {
    await iterator.return?.()?.catch(() => {});
  }
}

/** The error for a stream that ended without its terminating event. */
export function interrupted(detail: string): RuntimeError {
  return new RuntimeError("model_stream_interrupted", `The model stream ended early: ${detail}. Nothing of this step was kept.`);
}
