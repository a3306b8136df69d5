/** What the conversation's Durable Object answers over RPC, and what a Worker gives it: the types of its surface. */
import type { ConversationPart } from "./protocol-parts.ts";
import type { HostEnv } from "../runtime/ports/host-env.ts";
import type { RemotePort } from "../runtime/ports/remote-port.ts";
import type { TurnStream } from "../wire/sse.ts";
import type { OperatorIdentity } from "../runtime/handoff/types.ts";
import type { Activity } from "./storage/activity-log.ts";
import type { Compaction } from "../runtime/compaction.ts";
import type { Holding } from "../runtime/holding.ts";
import type { Limits } from "../runtime/limits.ts";
import type { FileRef, Message } from "../runtime/messages.ts";
import type { Model } from "../runtime/ports/model-port.ts";
import type { Network } from "../runtime/network.ts";
import type { McpClient } from "../mcp/tool-lists.ts";
import type { ApprovalRequest, UserRequest } from "../runtime/wait/requests.ts";
import type { UsageTotals } from "../runtime/usage.ts";
import type { SentFile } from "./files/sent-files.ts";
import type { HistoryPage } from "./storage/history-page.ts";
import type { BackgroundStatus } from "./storage/run-ledger.ts";
import type { StoredHandoff, StoredTurnStatus } from "./storage/turn-log.ts";

/** A conversation as GET /v1/conversations/:id shows it: who holds it, its history page, handoffs, approvals, usage, storage. */
export interface ConversationView extends Pick<Holding, "activeAgent" | "handoffCount" | "callers"> {
  id: string;
  turn: number;
  status: StoredTurnStatus | "idle";
  messages: readonly Message[];
  handoffs: StoredHandoff[];
  /** What the turn waits for from the user, of every kind (approvals, questions, client tools, elicitations). */
  pendingRequests: UserRequest[];
  /** The approvals among `pendingRequests` (as this view has always listed them). */
  pendingApprovals: ApprovalRequest[];
  /** The id of the last stored event: where GET /events picks up. */
  lastEventId: number;
  /**
   * Storage written by the latest turn: rows (what Durable Object storage bills) and bytes; and the
   * rows its owner's inbox wrote to keep its entry current, while this object has stayed in memory.
   */
  lastTurnStorage: { rowsWritten: number; bytesWritten: number; inboxRowsWritten?: number } | null;
  /** What the conversation has spent: model calls, tokens, tool calls. */
  usage: UsageTotals;
  /** Summaries the model is sent in place of older messages; `messages` keeps every original. */
  compactions: Array<Compaction & { turn: number; agent: string }>;
  /** Where `messages` sits in the whole history (indexes, as `compactions` count them). */
  page: HistoryPage;
  /** What people did, and when: a person's answers and hand backs, approvals and denials, with who (the latest 100). */
  activity: Activity[];
  /** Background delegations (`asTool({ background: true })`): those waiting to start, then the latest 20 started, newest first. */
  background: BackgroundView[];
  /** The files the conversation holds (sent in its messages, or uploaded for the next), by reference: read each at …/files/:id. */
  files: FileRef[];
  /** The model the latest leg ran on (`demo`: the offline demo model), as its `run-start` said; null before any leg. */
  model: { name: string; demo: boolean } | null;
}

/** A background delegation as the view shows it: its entry's id, the call that started it, how it stands, its times (ISO 8601). */
export interface BackgroundView {
  id: string;
  agent: string;
  turn: number;
  toolCallId: string;
  status: "waiting" | BackgroundStatus;
  startedAt: string | null;
  endedAt: string | null;
}

/** A page of the history: at most `limit` messages before `before` (the newest by default). */
export interface PageQuery {
  limit?: number | undefined;
  before?: number | undefined;
}

/**
 * After decisions: the resumed turn's stream, or the calls still waiting for a decision; `background`: decisions on what a
 * background run asked (`id`, its entry's), which carries on from the alarm once `pending` is empty.
 */
export type DecisionOutcome =
  | ({ kind: "stream" } & TurnStream)
  | { kind: "awaiting"; pending: string[] }
  | { kind: "background"; id: string; pending: string[] };

/** `idle`: nothing after the cursor, and no run that could add to it. */
export type EventsOutcome = ({ kind: "stream" } & TurnStream) | { kind: "idle" };

/** How a message starts its turn. */
export interface MessageOptions {
  /** A conversation of this id that does not exist yet is created, owned by the signed-in requester (AG-UI names its threads). */
  createOwned?: boolean;
  /**
   * The files the message carries, in order: each the id of one uploaded to this conversation before (`uploadFiles`), or
   * one sent with the message, stored first as `uploadFiles` stores it and let go of should the message be refused.
   */
  files?: Array<string | SentFile>;
}

/** How decisions are taken. */
export interface DecideOptions {
  /** Decisions already recorded are left out (the AI SDK's client sends every decision again). */
  ignoreRepeats?: boolean;
}

/**
 * Who is asking: the conversation, and the grant of the conversation token used (absent for the
 * master key and anonymous use). A token whose grant is not the conversation's is revoked.
 */
export interface Requester {
  conversationId: string;
  grant?: string | undefined;
  /** A signed-in user's id: they reach only the conversations they own, and own those they create or fork. */
  user?: string | undefined;
  /** Who acts, from their sign-in token (a user, or an operator): recorded with their approvals and denials. */
  identity?: OperatorIdentity | undefined;
  /** Asks through the operator API: answers only the requests that let an operator answer (approvals, and asks that say so). */
  operator?: boolean | undefined;
  /** The request's W3C `traceparent`: a turn it starts is traced as that span's child. */
  traceparent?: string | undefined;
  /** The client's address (`cf-connecting-ip`): the per-client turn limit's key when no user signed in. */
  address?: string | undefined;
}

/** @deprecated Renamed `Requester` (docs/layout.md, "Words"); this alias goes in the next minor version. */
export type Caller = Requester;

/** What a Worker gives its conversations: the network they run, and what overrides the environment. */
export interface ConversationSetup {
  network: Network;
  /**
   * Answers when no provider is configured (neither OPENAI_API_KEY nor OPENAI_BASE_URL); without it such turns fail with
   * `model_not_configured`.
   */
  offlineModel?: Model | undefined;
  /** Limits that take precedence over MAX_STEPS and MAX_HANDOFFS_PER_TURN. */
  limits?: Partial<Limits> | undefined;
  /** How agents reach their MCP servers (`mcpClient()` from `handoff-runtime/mcp`); without it, a server an agent names is a warning. */
  mcp?: McpClient | undefined;
  /**
   * How remote agents (`remoteAgent`) are reached, given the environment (`createHandoffWorker` reaches them over A2A);
   * without it, handing to one gives the conversation straight back.
   */
  remote?: ((env: HostEnv) => RemotePort) | undefined;
  /** What the Worker's protocols keep in each conversation and send from it (`Protocol.conversation`: A2A's push configs). */
  parts?: readonly ConversationPart[] | undefined;
}
