import type { RunEvent } from "../../src/runtime/index.ts";
import { checkEvent } from "./event-schema.ts";

export type ReceivedEvent = RunEvent & { id: number; sseEvent: string };

/** Parses an SSE body into events, each checked against its schema. */
export function parseSse(text: string): ReceivedEvent[] {
  return text
    .split("\n\n")
    .filter((frame) => frame.trim() !== "")
    .map((frame) => {
      const fields = new Map<string, string>();
      for (const line of frame.split("\n")) {
        const colon = line.indexOf(":");
        fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
      }
      const data = JSON.parse(fields.get("data") ?? "null") as RunEvent;
      checkEvent(data);
      return { ...data, id: Number(fields.get("id")), sseEvent: fields.get("event") ?? "" };
    });
}

/** Reads an SSE stream frame by frame, so a test can act while the turn is still running. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<ReceivedEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end + 2);
      buffer = buffer.slice(end + 2);
      yield* parseSse(frame);
    }
  }
}
