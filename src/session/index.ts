/**
 * @module
 * The Durable Object that holds one conversation: storage, the single running turn, event fan-out.
 */
export { Conversation, type ConversationView, type DecisionOutcome } from "./conversation.ts";
export type { SessionError, SessionErrorCode, SessionResult } from "./results.ts";
export { decodeSse, SSE_HEADERS, type StoredEvent } from "./sse.ts";
