import type { Message } from "../../runtime/messages.ts";

/** Where a page sits in the whole history; `previous` is the `before` cursor of the page before it, null at the start. */
export interface HistoryPage {
  start: number;
  end: number;
  total: number;
  previous: number | null;
}

/** The default page: a conversation of months is not sent whole. */
export const DEFAULT_PAGE_SIZE = 100;

/**
 * The newest messages before `before` (the end by default), at most `limit` of them. A page starts
 * at a user message, so it is a valid history on its own (no result without its call); a single
 * turn longer than `limit` comes whole.
 */
export function pageOfHistory(
  messages: readonly Message[],
  limit = DEFAULT_PAGE_SIZE,
  before = messages.length,
): { messages: Message[]; page: HistoryPage } {
  const end = Math.min(before, messages.length);
  const candidate = Math.max(0, end - limit);
  let start = candidate;
  if (start > 0) {
    const next = messages.findIndex((m, i) => i >= candidate && i < end && m.role === "user");
    start = next >= 0 ? next : lastTurnStart(messages, candidate);
  }
  return { messages: messages.slice(start, end), page: { start, end, total: messages.length, previous: start > 0 ? start : null } };
}

function lastTurnStart(messages: readonly Message[], at: number): number {
  for (let i = at; i > 0; i--) if (messages[i]!.role === "user") return i;
  return 0;
}
