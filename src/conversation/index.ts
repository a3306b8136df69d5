/**
 * @module
 * The Durable Object that holds one conversation: storage, the single running turn, event fan-out.
 */
export {
  type Requester,
  Conversation,
  type ConversationSetup,
  type ConversationView,
  type DecisionOutcome,
  type EventsOutcome,
  type PageQuery,
} from "./conversation.ts";
export type { HistoryPage } from "./storage/history-page.ts";
export type { ForkSnapshot } from "./storage/forks.ts";
export { MAX_STREAMS } from "./turns/turn-driver.ts";
export type { ConversationError, ConversationErrorCode, ConversationResult } from "./results.ts";
