import type { RunEvent } from "../runtime/events.ts";

/** An event with the id a reconnecting client resumes after. */
export type StoredEvent = { id: number } & RunEvent;

/**
 * The one framing a conversation hands its events out in: one Server-Sent Event each, `event:`
 * names the type, `data:` is one JSON line, `id:` increases. JSON escapes CR and LF, the only line
 * ends SSE knows, so any text fits on the one data line. The SSE routes pass these bytes through
 * as they are; every other encoder reads them back with `SseFrames` (or `turnEvents`).
 */
export function encodeSse(event: StoredEvent): string {
  const { id, ...data } = event;
  return `id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A turn's stream as the conversation hands it out (these frames), and the id its answer has in the history (`msg-<index>`). */
export interface TurnStream {
  /** The turn's events as SSE frames (`encodeSse`): what the SSE routes send as they are. */
  events: ReadableStream<Uint8Array>;
  /** The id of the turn's answer in the history (`msg-<index>`), the same in every leg: the AI SDK's stream names its message with it. */
  answerId: string;
}

export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
} as const;

/** One Server-Sent Event as read: its `id` line ("" without one) and its `data` lines joined. */
export interface SseFrame {
  id: string;
  data: string;
}

/** Splits an SSE body into frames as its chunks arrive (a frame may span chunks). */
export class SseFrames {
  readonly #decoder = new TextDecoder();
  #buffered = "";

  /** The frames a chunk completes. */
  push(chunk: Uint8Array): SseFrame[] {
    this.#buffered += this.#decoder.decode(chunk, { stream: true }).replaceAll("\r\n", "\n");
    const frames = this.#buffered.split("\n\n");
    this.#buffered = frames.pop() ?? "";
    return frames.map(frameOf);
  }
}

function frameOf(text: string): SseFrame {
  let id = "";
  const data: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
    else if (line.startsWith("id:")) id = line.slice(3).trimStart();
  }
  return { id, data: data.join("\n") };
}

/** A conversation's event, from its frame. */
export function eventOf(frame: SseFrame): StoredEvent {
  return { ...(JSON.parse(frame.data) as RunEvent), id: Number(frame.id) };
}

/** The frames of an SSE body as they arrive. Stops reading, and cancels the body, when its reader stops asking. */
export async function* readFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const frames = new SseFrames();
  const reader = body.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) yield* frames.push(read.value);
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** The `data` of each Server-Sent Event of a body, as the frames arrive. */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  for await (const frame of readFrames(body)) if (frame.data) yield frame.data;
}
