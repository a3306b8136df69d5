/**
 * Every run of the conversation that waits for the user, as one list for the one lookup a decision goes through
 * (`routeDecisions`): the ledger's waits, the turn's (the root run's) first, then each background run's, in the order
 * they started. A decision goes to the run that waits for its call, whichever way it came in.
 */
import type { Message } from "../runtime/messages.ts";
import type { RoutedDecisions, Wait } from "../runtime/wait/checks.ts";
import type { ConversationState, ConversationStore, WaitShare } from "./storage/conversation-store.ts";
import type { RunWait } from "./storage/run-ledger.ts";

export function waitsOf(store: ConversationStore, state: ConversationState): Wait<RunWait>[] {
  const waits = store.runs.waits();
  // The turn is asked even while it does not wait: a decision on a call it answered already is told so.
  const idle: RunWait = { id: undefined, requests: [], decisions: [] };
  return [...(waits.some((wait) => wait.id === undefined) ? [] : [idle]), ...waits].map((wait) => ({
    run: wait,
    requests: wait.requests,
    decisions: wait.decisions,
    answered: answered(store, state, wait),
  }));
}

/** Whether the run has answered a call already: in its suspended step or the history it runs in (a background run's own). */
function answered(store: ConversationStore, state: ConversationState, wait: RunWait): (toolCallId: string) => boolean {
  if (wait.id === undefined) {
    const results = state.suspension?.results ?? [];
    return (id) => results.some((r) => r?.toolCallId === id) || hasResult(store.messages(), id);
  }
  const run = store.runs.get(wait.id);
  return (id) => run !== undefined && hasResult(store.delegation(run.turn, [run.toolCallId]), id);
}

function hasResult(history: readonly Message[], toolCallId: string): boolean {
  return history.some((m) => m.role === "tool" && m.toolCallId === toolCallId);
}

/** A batch's routed decisions as the store takes them: a share per run. */
export function sharesOf(routed: readonly RoutedDecisions<Wait<RunWait>>[]): WaitShare[] {
  return routed.map(({ wait, decisions }) => ({ wait: wait.run, decisions }));
}

/** What deciding did: the turn still waits, only background runs were decided, or the turn resumed (what `start` gave). */
export type Decided<T> =
  | { kind: "awaiting"; pending: string[] }
  | { kind: "background"; id: string; pending: string[] }
  | { kind: "started"; started: T };
