/**
 * @module
 * Your own Worker: `createHandoffWorker` takes your network and gives the fetch handler, the Hono
 * app and the Durable Object class to export. One Durable Object per conversation (SQLite) holds
 * the active agent, the history and the handoff counters; responses stream as Server-Sent Events.
 */
import type { Hono } from "hono";
import { readConfig, runSettings } from "../config.ts";
import type { Env } from "../env.ts";
import { createApp } from "../http/app.ts";
import type { AppEnv } from "../http/app-env.ts";
import type { Limits } from "../runtime/limits.ts";
import type { Model } from "../runtime/ports/model-port.ts";
import { Network, type NetworkOptions } from "../runtime/network.ts";
import { Conversation as ConversationObject, type ConversationSetup } from "../conversation/index.ts";
import { OperatorDesk } from "../desk/operator-desk.ts";
import { Inbox } from "../inbox/inbox.ts";
import { UserMemory } from "../memory/user-memory.ts";
import type { WorkerVars } from "../worker-vars.ts";
import type { McpClient } from "../mcp/tool-lists.ts";
import type { Protocol } from "../http/protocols.ts";
import { A2ARemotes } from "../a2a/client/a2a-remote.ts";

export { ConversationObject, type ConversationSetup };
export { type DeskEntry, type DeskPut, type DeskStatus, OperatorDesk } from "../desk/operator-desk.ts";
export { UserMemory } from "../memory/user-memory.ts";
export { AgentMemoryStore, type AgentMemoryNamespace, type AgentMemoryProfile, type AgentMemoryMemory } from "../memory/agent-memory.ts";
export type { IngestMessage, MemoryChange, MemoryLimits, MemoryProblem, MemoryResult, UserMemoryStore } from "../memory/memory-store.ts";
export { Inbox, type InboxEntry, type InboxPage, type InboxQuery, type InboxStatus } from "../inbox/inbox.ts";
export { a2a } from "../a2a/server/a2a-routes.ts";
export { agUi } from "../http/ag-ui/ag-ui-routes.ts";
export type { Protocol } from "../http/protocols.ts";
export type { CachedToolList, McpClient, McpHost, ToolListCache } from "../mcp/tool-lists.ts";
export type { Env } from "../env.ts";
export type { AppEnv } from "../http/app-env.ts";
export type { Access } from "../http/auth.ts";
export type { SignedInUser } from "../http/user-tokens.ts";
export type { WorkerVars } from "../worker-vars.ts";
export { errorResponse, type ErrorBody, type ErrorShape, HTTP_ERROR_STATUS, HttpError, type HttpErrorCode } from "../http/errors.ts";
export { A2A_RPC_ERROR } from "../a2a/server/rpc-errors.ts";
// What the Conversation object answers over RPC: the types of its methods.
export type {
  BackgroundView,
  Caller,
  ConversationView,
  DecideOptions,
  DecisionOutcome,
  EventsOutcome,
  MessageOptions,
  PageQuery,
  Requester,
} from "../conversation/conversation-api.ts";
export type { TurnView, ViewAudience } from "../conversation/conversation-view.ts";
export type { BackgroundStatus } from "../conversation/storage/run-ledger.ts";
export type { DelegatedRun } from "../conversation/storage/conversation-store.ts";
export type { PushConfig, PushConfigOp } from "../a2a/server/push-configs.ts";
export type { Destination } from "../conversation/storage/outbox.ts";
export type { ConversationPart, Outgoing, PartContext, TurnMove, TurnEnding } from "../conversation/protocol-parts.ts";
export type { PartRows } from "../conversation/storage/protocol-rows.ts";
export type { Activity, ActivityKind } from "../conversation/storage/activity-log.ts";
export type { ForkSnapshot } from "../conversation/storage/forks.ts";
export type { IncomingFile } from "../conversation/files/file-checks.ts";
export type { SentFile } from "../conversation/files/sent-files.ts";
export type { HistoryPage } from "../conversation/storage/history-page.ts";
export type { ScheduledView, ScheduleEntry } from "../conversation/storage/schedule.ts";
export type {
  ConversationError,
  ConversationErrorCode,
  ConversationResult,
  SessionError,
  SessionErrorCode,
  SessionResult,
} from "../conversation/results.ts";
export type { StoredHandoff, StoredTurnStatus, TurnSummary } from "../conversation/storage/turn-log.ts";
export type { Span, SpanKind, TurnTrace } from "../traces/turn-trace.ts";
export type { ClientHistory, StreamFormat, TurnStream, UIMessageOut, UIPart } from "../wire/index.ts";
// Every type of the run loop, as `handoff-runtime` exports them: the types this entry's signatures use among them.
export type * from "../runtime/index.ts";

/** What `createHandoffWorker` takes: the network, and what the environment does not set. */
export interface HandoffWorkerOptions<E extends WorkerVars = WorkerVars> {
  /** The network, or a function of the environment that builds it (models and secrets per deploy); built once per environment. */
  network: Network | ((env: E) => Network);
  /**
   * The model that answers when no provider is configured (neither OPENAI_API_KEY nor
   * OPENAI_BASE_URL), such as a scripted one for local demos; without it such turns fail with
   * `model_not_configured`.
   */
  offlineModel?: (env: E) => Model;
  /** Limits that take precedence over the environment's MAX_STEPS and MAX_HANDOFFS_PER_TURN. */
  limits?: Partial<Limits>;
  /**
   * How agents reach their MCP servers: `mcpClient()` from `handoff-runtime/mcp`. Without it the
   * Worker bundles no MCP SDK, and a server an agent names is a warning (`mcp_unavailable`) saying to add it.
   */
  mcp?: McpClient;
  /**
   * The protocols served beside the chat API (SSE, the AI SDK's stream, the socket): `a2a()`, `agUi()`, or a `Protocol`
   * of your own (its paths, routes, OpenAPI part, errors' shape, and what it keeps in each conversation). Only these are
   * bundled; the paths of those the package offers and the Worker was not given answer 404 `protocol_not_enabled`.
   */
  protocols?: readonly Protocol[];
}

/** What `createHandoffWorker` gives: the fetch handler, the Hono app and the Durable Object class. */
export interface HandoffWorker {
  /** The Worker's fetch handler: `export default { fetch: worker.fetch }`, or the worker itself. */
  fetch: Hono<AppEnv>["fetch"];
  /** The Hono app: mount it under a prefix of your own Worker (`app.route("/chat", worker.app)`), or add routes beside it. */
  app: Hono<AppEnv>;
  /** The Durable Object class: export it under the `class_name` your wrangler.toml binds to `CONVERSATIONS`. */
  Conversation: new (
    ctx: DurableObjectState,
    env: WorkerVars,
  ) => ConversationObject;
  /** The operator desk's Durable Object class, for networks with people (`humanAgent`): bind it as `OPERATOR_DESK`. */
  OperatorDesk: typeof OperatorDesk;
  /** Signed-in users' inboxes (one Durable Object per user): bind it as `INBOXES`. */
  Inbox: typeof Inbox;
  /** Signed-in users' memories (one Durable Object per user, SQLite with full-text search): bind it as `MEMORIES`. */
  UserMemory: typeof UserMemory;
}

/**
 * A Worker of your own around your network. Access, the provider and the limits come from the
 * environment (API_KEY, SESSION_SECRET, ALLOW_ANONYMOUS, OPENAI_API_KEY, OPENAI_BASE_URL, ...), as
 * docs/configuration.md lists; `options` can set what the environment does not.
 */
export function createHandoffWorker<E extends WorkerVars = WorkerVars>(options: HandoffWorkerOptions<E>): HandoffWorker {
  const built = new WeakMap<object, Network>();
  const networkFor = (env: E): Network => {
    if (typeof options.network !== "function") return options.network;
    let network = built.get(env);
    if (!network) {
      network = networkWithEnvironment(options.network(env), env);
      built.set(env, network);
    }
    return network;
  };
  class Conversation extends ConversationObject {
    protected override setup(env: WorkerVars): ConversationSetup {
      return {
        network: networkFor(env as E),
        offlineModel: options.offlineModel?.(env as E),
        limits: options.limits,
        mcp: options.mcp,
        // Remote agents speak A2A.
        remote: (vars) => new A2ARemotes(vars),
        parts: options.protocols?.flatMap((protocol) => (protocol.conversation ? [protocol.conversation] : [])),
      };
    }
  }
  const app = createApp((env: Env) => networkFor(env as unknown as E), options.protocols);
  return { fetch: app.fetch, app, Conversation, OperatorDesk, Inbox, UserMemory };
}

/**
 * The network with what the environment sets (`networkOptionsFromEnv`) beneath its own options:
 * an option the network sets wins, each budget and compaction field on its own; the rest comes
 * from OPENAI_MODEL, TURN_BUDGET, CONVERSATION_BUDGET, CONTEXT_BUDGET, COMPACTION_KEEP_TURNS,
 * APPROVAL_EXPIRES_IN and IMAGES_SENT. `createHandoffWorker` applies it to every network, whether or not the
 * network reads the environment itself; the same network comes back when the environment adds nothing.
 */
export function networkWithEnvironment(network: Network, env: WorkerVars): Network {
  const fromEnv = networkOptionsFromEnv(env);
  const own = network.options;
  const perTurn = { ...fromEnv.budgets?.perTurn, ...own.budgets?.perTurn };
  const perConversation = { ...fromEnv.budgets?.perConversation, ...own.budgets?.perConversation };
  const merged: NetworkOptions = {
    ...own,
    ...((own.defaultModel ?? fromEnv.defaultModel) ? { defaultModel: own.defaultModel ?? fromEnv.defaultModel } : {}),
    budgets: {
      ...(Object.keys(perTurn).length ? { perTurn } : {}),
      ...(Object.keys(perConversation).length ? { perConversation } : {}),
    },
    compaction: { ...fromEnv.compaction, ...own.compaction },
    ...((own.approvalExpiresIn ?? fromEnv.approvalExpiresIn)
      ? { approvalExpiresIn: own.approvalExpiresIn ?? fromEnv.approvalExpiresIn }
      : {}),
    ...((own.imagesSent ?? fromEnv.imagesSent) !== undefined ? { imagesSent: own.imagesSent ?? fromEnv.imagesSent } : {}),
  };
  const same = (["defaultModel", "budgets", "compaction", "approvalExpiresIn", "imagesSent"] as const).every(
    (key) => JSON.stringify(merged[key] ?? {}) === JSON.stringify(own[key] ?? {}),
  );
  // Agents linked after the network was built come along.
  return same ? network : new Network(network.entry, { ...merged, register: [...network.agents.values()] });
}

/**
 * What the environment sets for a network: the default model (OPENAI_MODEL), budgets (TURN_BUDGET,
 * CONVERSATION_BUDGET), compaction (CONTEXT_BUDGET, COMPACTION_KEEP_TURNS), the approvals' deadline
 * (APPROVAL_EXPIRES_IN) and the images sent (IMAGES_SENT).
 */
export function networkOptionsFromEnv(
  env: WorkerVars,
): Pick<NetworkOptions, "defaultModel" | "budgets" | "compaction" | "approvalExpiresIn" | "imagesSent"> {
  return runSettings(readConfig(env)).network;
}
