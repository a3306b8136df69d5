/**
 * Every run of the conversation that waits for the user, as one list for the one lookup a decision goes through
 * (`routeDecisions`): the turn's wait (its suspended step and the decisions so far), then each background run's, in the
 * order they started. A decision goes to the run that waits for its call, whichever way it came in.
 */
import type { Message } from "../runtime/messages.ts";
import type { RoutedDecisions, Wait } from "../runtime/wait/checks.ts";
import type { BackgroundShare, ConversationState, ConversationStore } from "./storage/conversation-store.ts";
import type { BackgroundWait } from "./storage/run-ledger.ts";

/** Which run waits: the turn, or a background run (with its wait as stored). */
export type WaitingRun = { kind: "turn" } | { kind: "background"; wait: BackgroundWait };

export function waitsOf(store: ConversationStore, state: ConversationState): Wait<WaitingRun>[] {
  const { suspension } = state;
  const turn: Wait<WaitingRun> = {
    run: { kind: "turn" },
    requests: suspension?.pending ?? [],
    decisions: state.decisions,
    answered: (id) => suspension?.results.some((r) => r?.toolCallId === id) === true || hasResult(store.messages(), id),
  };
  const background = store.runs.waits().map(
    (wait): Wait<WaitingRun> => ({
      run: { kind: "background", wait },
      requests: wait.requests,
      decisions: wait.decisions,
      // The run's own history: its calls answered before it waited.
      answered: (id) => {
        const run = store.runs.get(wait.id);
        return run !== undefined && hasResult(store.delegation(run.turn, [run.toolCallId]), id);
      },
    }),
  );
  return [turn, ...background];
}

function hasResult(history: readonly Message[], toolCallId: string): boolean {
  return history.some((m) => m.role === "tool" && m.toolCallId === toolCallId);
}

/** A batch's routed decisions by run: the turn's share (when it has one), and each background run's. */
export function shares(routed: readonly RoutedDecisions<Wait<WaitingRun>>[]): {
  turn: RoutedDecisions<Wait<WaitingRun>> | undefined;
  background: BackgroundShare[];
} {
  return {
    turn: routed.find((share) => share.wait.run.kind === "turn"),
    background: routed.flatMap(({ wait, decisions }) => (wait.run.kind === "background" ? [{ wait: wait.run.wait, decisions }] : [])),
  };
}

/** What deciding did: the turn still waits, only background runs were decided, or the turn resumed (what `start` gave). */
export type Decided<T> =
  | { kind: "awaiting"; pending: string[] }
  | { kind: "background"; id: string; pending: string[] }
  | { kind: "started"; started: T };
