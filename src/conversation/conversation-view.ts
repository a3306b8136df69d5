/** What a reader is shown of a stored conversation: its view (GET …/:id), and its history as the AI SDK's UI messages. */
import { toUIMessages, type UIMessageOut } from "../wire/index.ts";
import type { ConversationView, PageQuery } from "./conversation-api.ts";
import type { ConversationState, ConversationStore } from "./storage/conversation-store.ts";
import { type HistoryPage, pageOfHistory } from "./storage/history-page.ts";

/** The conversation's view: who holds it, a page of its history, its handoffs, what waits, what it spent. */
export function conversationView(
  store: ConversationStore,
  state: ConversationState,
  running: boolean,
  query: PageQuery,
  inboxRowsWritten: number | null = null,
): ConversationView {
  const { activeAgent, handoffCount, callers } = state.holding;
  const turn = store.turns.record(state.turn);
  const { messages, page } = pageOfHistory(store.messages(), query.limit, query.before);
  return {
    id: state.conversationId,
    activeAgent,
    handoffCount,
    callers,
    turn: state.turn,
    status: running ? "running" : (turn?.status ?? "idle"),
    messages,
    page,
    handoffs: store.handoffs(),
    pendingApprovals: state.suspension?.pending ?? [],
    lastEventId: state.lastEventId,
    lastTurnStorage:
      turn && turn.status !== "running"
        ? { rowsWritten: turn.rowsWritten, bytesWritten: turn.bytesWritten, ...(inboxRowsWritten === null ? {} : { inboxRowsWritten }) }
        : null,
    usage: store.usage(),
    compactions: store.compactions(),
    activity: store.activity.latest(),
  };
}

/** A page of the history as UI messages; the step awaiting approval follows the newest message, so only the newest page has it. */
export function uiMessagesOf(
  store: ConversationStore,
  state: ConversationState,
  query: PageQuery,
): { messages: UIMessageOut[]; page: HistoryPage } {
  const handoffs = store.handoffs().map(({ turn: _turn, ...handoff }) => handoff);
  const { messages, page } = pageOfHistory(store.messages(), query.limit, query.before);
  const suspension = page.end === page.total ? state.suspension : null;
  return { messages: toUIMessages({ messages, handoffs, suspension }, page.start), page };
}
