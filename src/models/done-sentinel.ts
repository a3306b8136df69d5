/**
 * Watches a Chat Completions SSE body for its closing `data: [DONE]` line. Some OpenAI-compatible
 * providers never send a finish reason, so the sentinel is what tells a finished answer from a
 * stream cut short; the `openai` client ends both quietly and keeps the difference to itself.
 */
export interface DoneSentinel {
  /** The body to hand the SSE parser: the same bytes, read through the watch. */
  readonly body: ReadableStream<Uint8Array>;
  /** Whether a `data: [DONE]` line has gone through. */
  readonly seen: boolean;
}

const DONE = /^data:\s?\[DONE\]\s*$/;

export function watchDoneSentinel(body: ReadableStream<Uint8Array>): DoneSentinel {
  const decoder = new TextDecoder();
  let partial = "";
  let seen = false;
  const scan = (text: string) => {
    const lines = (partial + text).split(/\r\n|\r|\n/);
    partial = lines.pop() ?? "";
    if (!seen) seen = lines.some((line) => DONE.test(line));
  };
  const watched = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!seen) scan(decoder.decode(chunk, { stream: true }));
        controller.enqueue(chunk);
      },
      flush() {
        // A body that ends on the sentinel with no line break after it still ends on the sentinel.
        if (!seen) scan(`${decoder.decode()}\n`);
      },
    }),
  );
  return {
    body: watched,
    get seen() {
      return seen;
    },
  };
}
