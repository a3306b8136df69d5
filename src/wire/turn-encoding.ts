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
 * A turn's stream from the conversation (its SSE frames), re-encoded for one reader. Each chunk is
 * written to an identity stream the runtime sends on by itself (workerd's `IdentityTransformStream`:
 * a stream made in JavaScript would be pumped to the response through JavaScript, chunk by chunk);
 * a write waits for the reader, so a reader that stops holds at most one chunk here, and one that
 * leaves cancels the turn's stream.
 */
export function encodeTurn(body: ReadableStream<Uint8Array>, encoder: EventEncoder): ReadableStream<Uint8Array> {
  const { readable, writable } = identityStream();
  void pump(body.getReader(), writable.getWriter(), encoder);
  return readable;
}

/** workerd's identity stream where there is one (the Worker), a standard one elsewhere (Node's tests): the same streams to their user. */
function identityStream(): { readable: ReadableStream<Uint8Array>; writable: WritableStream<Uint8Array> } {
  const Identity = (globalThis as { IdentityTransformStream?: new () => TransformStream<Uint8Array, Uint8Array> }).IdentityTransformStream;
  return Identity ? new Identity() : new TransformStream<Uint8Array, Uint8Array>();
}

async function pump(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  writer: WritableStreamDefaultWriter<Uint8Array>,
  encoder: EventEncoder,
): Promise<void> {
  const frames = new SseFrames();
  const write = async (text: string) => {
    if (text) await writer.write(bytes.encode(text));
  };
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      await write(
        frames
          .push(read.value)
          .map((frame) => (frame.data ? encoder.encode(eventOf(frame)) : ""))
          .join(""),
      );
      if (encoder.finished) break;
    }
    await write(encoder.end());
    await writer.close();
  } catch (error) {
    // The reader left (the write failed), or the conversation's stream broke off: say so if anyone still reads.
    await write(encoder.fail(errorMessage(error)))
      .then(() => writer.close())
      .catch(() => {});
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** A turn's events from the conversation's stream, as they arrive: for an edge that answers per event (A2A). */
export async function* turnEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<StoredEvent> {
  for await (const frame of readFrames(body)) if (frame.data) yield eventOf(frame);
}
