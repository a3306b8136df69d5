import { encodeSse, type StoredEvent } from "../../wire/sse.ts";

/** The next events for one reader, or null when there are no more. */
export type EventBatches = (disconnect: () => void) => {
  next(): StoredEvent[] | null | Promise<StoredEvent[] | null>;
  close(): void;
};

const encoder = new TextEncoder();

/**
 * A turn's events as the conversation hands them out (SSE frames, `encodeSse`), read and encoded
 * only when the reader asks for more, so a client that stops reading holds at most one encoded
 * batch here. `onClose` runs once, however it ends.
 */
export function eventStream(batches: EventBatches, onClose: () => void): ReadableStream<Uint8Array> {
  let source: ReturnType<EventBatches> | undefined;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    source?.close();
    onClose();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // Ended without a terminal event, the stream tells an EventSource to reconnect with Last-Event-ID.
        source = batches(() => {
          if (finished) return;
          controller.close();
          finish();
        });
      },
      async pull(controller) {
        const batch = await source!.next();
        if (finished) return;
        if (batch === null) {
          controller.close();
          finish();
          return;
        }
        controller.enqueue(encoder.encode(batch.map(encodeSse).join("")));
      },
      cancel: finish,
    },
    { highWaterMark: 0 },
  );
}
