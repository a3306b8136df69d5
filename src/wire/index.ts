/**
 * @module
 * What goes over the wire to clients. A conversation hands a turn's events out once, as this
 * runtime's SSE (`encodeSse`), which the SSE routes pass through untouched; the AI SDK's UI message
 * stream, AG-UI and A2A are encoded from it here, at the edge, one encoder per reader.
 */
import { SSE_HEADERS, type TurnStream } from "./sse.ts";
import { encodeTurn } from "./turn-encoding.ts";
import { UI_MESSAGE_STREAM_HEADERS, UIMessageEncoder } from "./ui-message-stream.ts";
import { conversationFileUrl } from "./ui-messages.ts";

export { encodeSse, SSE_HEADERS, sseData, type StoredEvent, type TurnStream } from "./sse.ts";
export { encodeTurn, type EventEncoder, turnEvents } from "./turn-encoding.ts";
export { UI_MESSAGE_STREAM_HEADERS, UIMessageEncoder } from "./ui-message-stream.ts";
export { conversationFileUrl, toUIMessages, type UIMessageOut, type UIPart } from "./ui-messages.ts";
export type { ClientHistory } from "./client-history.ts";

/** The stream formats a turn can be read in over HTTP: `sse` (this runtime's own) or `ui` (the AI SDK's). */
export type StreamFormat = "sse" | "ui";

/**
 * A turn's stream as a response body in `format`: the conversation's own bytes for SSE, re-encoded for the AI SDK (its
 * files' URLs on `conversationId`'s file route).
 */
export function turnBody(turn: TurnStream, format: StreamFormat, conversationId?: string): ReadableStream<Uint8Array> {
  if (format !== "ui") return turn.events;
  return encodeTurn(turn.events, new UIMessageEncoder(turn.answerId, conversationId ? conversationFileUrl(conversationId) : undefined));
}

export function headersFor(format: StreamFormat): Record<string, string> {
  return format === "ui" ? UI_MESSAGE_STREAM_HEADERS : SSE_HEADERS;
}
