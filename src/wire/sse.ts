import type { RunEvent } from "../runtime/events.ts";

/** An event with the id a reconnecting client resumes after. */
export type StoredEvent = { id: number } & RunEvent;

/**
 * One Server-Sent Event: `event:` names the type, `data:` is one JSON line, `id:` increases.
 * JSON escapes CR and LF, the only line ends SSE knows, so any text fits on the one data line.
 */
export function encodeSse(event: StoredEvent): string {
  const { id, ...data } = event;
  return `id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
} as const;
