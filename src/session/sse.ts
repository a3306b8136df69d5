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
