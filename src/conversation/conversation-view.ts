/** What a reader is shown of a stored conversation: its view (GET …/:id), and a page of its history for clients to draw. */
import type { ClientHistory } from "../wire/client-history.ts";
import { publicRecord } from "../runtime/handoff/change-hands.ts";
import type { HandoffRecord } from "../runtime/handoff/types.ts";
import type { Message } from "../runtime/messages.ts";
import { type ApprovalRequest, publicRequest, type UserRequest, undecided } from "../runtime/wait/requests.ts";
import type { BackgroundView, ConversationView, PageQuery } from "./conversation-api.ts";
import type { StoredTurnStatus } from "./storage/turn-log.ts";
import type { ConversationState, ConversationStore } from "./storage/conversation-store.ts";
import { type HistoryPage, pageOfHistory } from "./storage/history-page.ts";
import { undecidedIn } from "./storage/run-ledger.ts";

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
  const pending = waiting(store);
  return {
    id: state.conversationId,
    activeAgent,
    handoffCount,
    callers,
    turn: state.turn,
    status: running ? "running" : statusNow(turn?.status ?? "idle", activeAgent, store.handoffs()),
    messages,
    page,
    handoffs: store.handoffs(),
    pendingRequests: pending,
    pendingApprovals: pending.filter((p): p is ApprovalRequest => p.kind === "approval"),
    lastEventId: state.lastEventId,
    lastTurnStorage:
      turn && turn.status !== "running"
        ? { rowsWritten: turn.rowsWritten, bytesWritten: turn.bytesWritten, ...(inboxRowsWritten === null ? {} : { inboxRowsWritten }) }
        : null,
    usage: store.usage(),
    compactions: store.compactions(),
    activity: store.activity.latest(),
    background: backgroundOf(store),
    files: store.files.all(),
    model: modelOf(store),
  };
}

/** The model the latest leg ran on, as its start said: what a page that reloads shows beside the agent's name. */
function modelOf(store: ConversationStore): ConversationView["model"] {
  const start = store.events.lastStart();
  return start ? { name: start.model, demo: start.demo === true } : null;
}

/**
 * A conversation's status as it stands, from its latest turn's: a turn that ended waiting for a
 * person is `completed` once the person has handed the conversation back (no one waits then; the
 * agent answers the next message), as A2A clients are told.
 */
export function statusNow<S extends string>(turn: S, holder: string, handoffs: readonly HandoffRecord[]): S | "completed" {
  const last = handoffs.at(-1);
  return turn === "awaiting_human" && last?.kind === "hand-back" && last.to === holder ? "completed" : turn;
}

/** Who reads a view: the customer (and their clients), or a person at the operator desk. */
export type ViewAudience = "customer" | "desk";

/**
 * The view as the customer's clients are sent it: without what was written for the agents, never for them (a hand-back's
 * note; the text of system messages: instructions, notes left by a person handing back, by a background run, by a
 * follow-up). A system message keeps its place, empty: a message's index is its id (`msg-<index>`) for every reader.
 */
export function customerView(view: ConversationView): ConversationView {
  return { ...view, messages: forCustomer(view.messages), handoffs: view.handoffs.map(publicRecord) };
}

function forCustomer(messages: readonly Message[]): Message[] {
  return messages.map((message) => (message.role === "system" ? { ...message, content: "" } : message));
}

/** Background delegations shown: those waiting to start, then the latest started (running or ended), newest first. */
function backgroundOf(store: ConversationStore): BackgroundView[] {
  const iso = (at: number | null) => (at === null ? null : new Date(at).toISOString());
  const runs = store.runs
    .latest(SHOWN_BACKGROUND)
    .map((run): BackgroundView => ({ ...run, startedAt: iso(run.startedAt), endedAt: iso(run.endedAt) }));
  const waiting = store.schedule
    .list()
    .flatMap((e) => (e.kind === "delegation" && !runs.some((r) => r.id === e.id) ? [e] : []))
    .map(
      ({ id, agent, turn, toolCallId }): BackgroundView => ({
        id,
        agent,
        turn,
        toolCallId,
        status: "waiting",
        startedAt: null,
        endedAt: null,
      }),
    );
  return [...waiting, ...runs];
}

/** Started background delegations the view lists at most. */
const SHOWN_BACKGROUND = 20;

/** The requests still undecided, as clients see them: those of every run that waits (the ledger's), the turn's first. */
function waiting(store: ConversationStore): UserRequest[] {
  return store.runs.waits().flatMap(undecidedIn).map(publicRequest);
}

/** The turn's requests still undecided, as clients see them. */
function turnWaiting(state: ConversationState): UserRequest[] {
  return undecided(state).map(publicRequest);
}

/** A page of the history with its handoffs; the step awaiting approval follows the newest message, so only the newest page has it. */
export function historyPageOf(
  store: ConversationStore,
  state: ConversationState,
  query: PageQuery,
): { history: ClientHistory; page: HistoryPage } {
  const handoffs = store.handoffs().map(({ turn: _turn, ...handoff }) => publicRecord(handoff));
  const { messages, page } = pageOfHistory(store.messages(), query.limit, query.before);
  const suspension = page.end === page.total ? state.suspension : null;
  const decisions = suspension ? state.decisions : [];
  // Clients draw it for the customer: what was written for the agents stays out (see customerView).
  return { history: { messages: forCustomer(messages), handoffs, suspension, decisions }, page };
}

/** One turn as a task of its conversation: how it stands, what it added to the history, who held the conversation after it. */
export interface TurnView {
  turn: number;
  status: StoredTurnStatus;
  /** The failure's code, for a failed turn. */
  error: string | null;
  messages: Message[];
  handoffs: HandoffRecord[];
  /** Who held the conversation when the turn ended (or holds it now, while it runs or waits). */
  holder: string;
  /** What the turn waits for from the user, while it is the latest and suspended. */
  pending: UserRequest[];
  /** Whether this is the conversation's latest turn (a later one ends its part in the conversation). */
  latest: boolean;
  /** The id of the conversation's last stored event: where a reader of what follows picks up. */
  lastEventId: number;
}

/** Turn `turn` of the conversation, or null when it has no such turn. */
export function turnView(store: ConversationStore, state: ConversationState, running: boolean, turn: number): TurnView | null {
  const record = store.turns.record(turn);
  if (!record) return null;
  const latest = turn === state.turn;
  const all = store.handoffs();
  const handoffs = all.filter((h) => h.turn === turn).map(({ turn: _turn, ...handoff }) => publicRecord(handoff));
  // An earlier turn ended with the last handoff up to it; with none, with the agent the first handoff left (the entry).
  const active = state.holding.activeAgent;
  const after = all.filter((h) => h.turn <= turn).at(-1)?.to ?? all[0]?.from ?? active;
  return {
    turn,
    status: latest && running ? "running" : record.status,
    error: record.error,
    messages: store.messagesOfTurn(turn),
    handoffs,
    holder: latest ? active : after,
    // A task is a turn: a background run's requests are not its.
    pending: latest ? turnWaiting(state) : [],
    latest,
    lastEventId: state.lastEventId,
  };
}
