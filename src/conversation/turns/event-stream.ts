import type { EventEncoder, StoredEvent } from "../../wire/index.ts";

/** The next events for one reader, or null when there are no more. */
export type EventBatches = (disconnect: () => void) => {
  next(): StoredEvent[] | null | Promise<StoredEvent[] | null>;
  close(): void;
};

const encoder = new TextEncoder();

/**
 * A byte stream that reads and encodes events only when its reader asks for more, so a client
 * that stops reading holds at most one encoded batch here. `onClose` runs once, however it ends.
 */
export function eventStream(batches: EventBatches, format: EventEncoder, onClose: () => void): ReadableStream<Uint8Array> {
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
          const end = format.end();
          if (end) controller.enqueue(encoder.encode(end));
          controller.close();
          finish();
          return;
        }
        controller.enqueue(encoder.encode(batch.map((event) => format.encode(event)).join("")));
      },
      cancel: finish,
    },
    { highWaterMark: 0 },
  );
}
