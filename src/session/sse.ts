import type { RunEvent } from "../runtime/index.ts";

/** An event with the id a reconnecting client resumes after. */
export type StoredEvent = { id: number } & RunEvent;

const encoder = new TextEncoder();

/** One Server-Sent Event: `event:` names the type, `data:` is one JSON line, `id:` increases. */
export function encodeSse(event: StoredEvent): Uint8Array {
  const { id, ...data } = event;
  return encoder.encode(`id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
} as const;

/** Reads SSE frames of this runtime's own encoding back into events. */
export function decodeSse(): TransformStream<Uint8Array, StoredEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  return new TransformStream({
    transform(bytes, controller) {
      buffer += decoder.decode(bytes, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (\d+)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (id && data) controller.enqueue({ id: Number(id), ...(JSON.parse(data) as RunEvent) });
      }
    },
  });
}
