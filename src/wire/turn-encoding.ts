import { errorMessage } from "../runtime/errors.ts";
import { eventOf, readFrames, SseFrames, type StoredEvent } from "./sse.ts";

/** Turns a conversation's events into one transport's bytes for one reader. */
export interface EventEncoder {
  encode(event: StoredEvent): string;
  /** What follows the last event. */
  end(): string;
  /** What the reader is told when the conversation's stream broke off (the Durable Object went away). */
  fail(message: string): string;
  /** True once the reader has been told the end: the rest of the conversation's stream is not read. */
  readonly finished?: boolean;
}

const bytes = new TextEncoder();

/**
 * A turn's stream from the conversation (its SSE frames), re-encoded for one reader: read only as
 * the reader asks, so a reader that stops holds at most one chunk here; cancelling it cancels the turn's stream.
 */
export function encodeTurn(body: ReadableStream<Uint8Array>, encoder: EventEncoder): ReadableStream<Uint8Array> {
  const frames = new SseFrames();
  const reader = body.getReader();
  const send = (controller: ReadableStreamDefaultController<Uint8Array>, text: string) => {
    if (text) controller.enqueue(bytes.encode(text));
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          for (;;) {
            const read = await reader.read();
            if (read.done) {
              send(controller, encoder.end());
              return controller.close();
            }
            const out = frames
              .push(read.value)
              .map((frame) => (frame.data ? encoder.encode(eventOf(frame)) : ""))
              .join("");
            if (!out) continue;
            send(controller, out);
            if (encoder.finished) {
              controller.close();
              await reader.cancel().catch(() => {});
            }
            return;
          }
        } catch (error) {
          send(controller, encoder.fail(errorMessage(error)));
          controller.close();
        }
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

/** A turn's events from the conversation's stream, as they arrive: for an edge that answers per event (A2A). */
export async function* turnEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StoredEvent> {
  for await (const frame of readFrames(body)) if (frame.data) yield eventOf(frame);
}
