/**
 * @module
 * What goes over the wire to clients: a turn's events as this runtime's own SSE, or as the AI SDK
 * UI message stream. Encoders take the run's events directly; nothing is decoded and re-encoded.
 */
import { encodeSse, SSE_HEADERS, type StoredEvent } from "./sse.ts";
import { UI_MESSAGE_STREAM_HEADERS, UIMessageEncoder } from "./ui-message-stream.ts";

export { encodeSse, SSE_HEADERS, sseData, type StoredEvent } from "./sse.ts";
export { UI_MESSAGE_STREAM_HEADERS, UIMessageEncoder } from "./ui-message-stream.ts";
export { toUIMessages, type UIHistory, type UIMessageOut, type UIPart } from "./ui-messages.ts";

/** The stream formats a turn can be read in: `sse` (GET …/events, POST …/messages) or `ui` (the AI SDK's). */
export type StreamFormat = "sse" | "ui";

/** Turns events into bytes for one reader; `end` is what follows the last event. */
export interface EventEncoder {
  encode(event: StoredEvent): string;
  end(): string;
}

/** `messageId`: the id the AI SDK stream gives the turn's answer, the same in every leg and in /ui-messages. */
export function encoderFor(format: StreamFormat, messageId?: string): EventEncoder {
  return format === "ui" ? new UIMessageEncoder(messageId) : { encode: encodeSse, end: () => "" };
}

export function headersFor(format: StreamFormat): Record<string, string> {
  return format === "ui" ? UI_MESSAGE_STREAM_HEADERS : SSE_HEADERS;
}
