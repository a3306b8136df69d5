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

/**
 * The `data` of each Server-Sent Event of a body, as the frames arrive (a frame may span chunks).
 * Stops reading, and cancels the body, when its reader stops asking.
 */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffered = "";
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      buffered += decoder.decode(read.value, { stream: true }).replaceAll("\r\n", "\n");
      const frames = buffered.split("\n\n");
      buffered = frames.pop() ?? "";
      for (const frame of frames) {
        const data = frame
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart())
          .join("\n");
        if (data) yield data;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
