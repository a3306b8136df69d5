import { DurableObject } from "cloudflare:workers";
import { configuredNetwork } from "../agents/index.ts";
import { type Config, readConfig } from "../config.ts";
import type { Env } from "../env.ts";
import { createModel } from "../models/index.ts";
import { type ApprovalDecision, type Compaction, type Message, type Model, type Network, type PendingApproval, runTurn, type TurnInput, type UsageTotals } from "../runtime/index.ts";
import { checkDecisions } from "./approvals.ts";
import { ConversationStore, type StoredHandoff, type TurnStatus } from "./conversation-store.ts";
import { fail, ok, type SessionResult } from "./results.ts";
import type { StoredEvent } from "./sse.ts";
import { replayStream, TurnBroadcast } from "./turn-broadcast.ts";

export interface ConversationView {
  id: string;
  activeAgent: string;
  handoffCount: number;
  turn: number;
  status: TurnStatus | "idle";
  messages: readonly Message[];
  handoffs: StoredHandoff[];
  pendingApprovals: PendingApproval[];
  /** The id of the last stored event: where GET /events picks up. */
  lastEventId: number;
  /** Storage written by the latest turn: rows (what Durable Object storage bills) and bytes. */
  lastTurnStorage: { rowsWritten: number; bytesWritten: number } | null;
  /** What the conversation has spent: model calls, tokens, tool calls. */
  usage: UsageTotals;
  /** Summaries the model is sent in place of older messages; `messages` keeps every original. */
  compactions: Array<Compaction & { turn: number; agent: string }>;
}

export type DecisionOutcome = { kind: "stream"; stream: ReadableStream<Uint8Array> } | { kind: "awaiting"; pending: string[] };

/**
 * One conversation: its active agent, history and counters in SQLite, and at most one run.
 * Thin glue: the loop is in src/runtime, storage in ConversationStore, fan-out in TurnBroadcast.
 */
export class Conversation extends DurableObject<Env> {
  readonly #store: ConversationStore;
  readonly #config: Config;
  readonly #network: Network;
  readonly #model: Model;
  #running: TurnBroadcast | null = null;
  /** Start times of recent turns, for the per-conversation rate limit. */
  #recentTurns: number[] = [];

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#config = readConfig(env);
    this.#store = new ConversationStore(ctx.storage);
    this.#network = configuredNetwork(this.#config);
    this.#model = createModel(this.#config);
  }

  /** Creates the conversation, held by the entry agent, without a turn. */
  async create(conversationId: string): Promise<SessionResult<{ activeAgent: string }>> {
    return ok({ activeAgent: this.#store.create(conversationId, this.#network.entry.name).activeAgent });
  }

  /** Starts a turn and returns its SSE stream. The run goes on if the stream's reader leaves. */
  async sendMessage(conversationId: string, message: string): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    if (this.#running) return fail("run_in_progress", "A run is in progress for this conversation; wait for it to end.");
    const suspension = this.#store.state()?.suspension;
    if (suspension) {
      return fail("approval_pending", "Tool calls are waiting for approval: decide them at POST /v1/conversations/:id/approvals first.", {
        pending: suspension.pending.map((p) => p.toolCallId),
      });
    }
    const now = Date.now();
    this.#recentTurns = this.#recentTurns.filter((t) => t > now - 60_000);
    if (this.#recentTurns.length >= this.#config.TURNS_PER_MINUTE) {
      const retryAfter = Math.max(1, Math.ceil((this.#recentTurns[0]! + 60_000 - now) / 1000));
      return fail("rate_limited", `This conversation takes ${this.#config.TURNS_PER_MINUTE} new turns a minute; try again in ${retryAfter} s.`, { retryAfter });
    }
    this.#recentTurns.push(now);
    this.#store.beginTurn(conversationId, this.#network.entry.name);
    return ok(this.#startLeg(conversationId, { kind: "message", text: message }));
  }

  /** Records decisions; once every pending call is decided, resumes the turn as the same agent. */
  async decide(conversationId: string, decisions: ApprovalDecision[]): Promise<SessionResult<DecisionOutcome>> {
    if (this.#running) return fail("run_in_progress", "A run is in progress for this conversation; wait for it to end.");
    const checked = checkDecisions(this.#store.state(), this.#store.messages(), decisions);
    if (!checked.ok) return checked;
    const state = this.#store.recordDecisions(decisions, checked.value.complete);
    const suspension = state.suspension!;
    if (!checked.value.complete) {
      const decided = new Set(state.decisions.map((d) => d.toolCallId));
      return ok({ kind: "awaiting", pending: suspension.pending.filter((p) => !decided.has(p.toolCallId)).map((p) => p.toolCallId) });
    }
    return ok({ kind: "stream", stream: this.#startLeg(conversationId, { kind: "resume", suspension, decisions: state.decisions }) });
  }

  /** The current or last turn's events after `afterId`, then the live run until it ends. */
  async events(conversationId: string, afterId: number): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    const state = this.#store.state();
    if (!state) return notFound(conversationId);
    const stored = this.#store.eventsAfter(state.turn, afterId);
    return ok(this.#running ? this.#running.subscribe(afterId, stored) : replayStream(stored));
  }

  async getView(conversationId: string): Promise<SessionResult<ConversationView>> {
    const state = this.#store.state();
    if (!state) return notFound(conversationId);
    const turn = this.#store.turn(state.turn);
    return ok({
      id: state.conversationId,
      activeAgent: state.activeAgent,
      handoffCount: state.handoffCount,
      turn: state.turn,
      status: this.#running ? "running" : (turn?.status ?? "idle"),
      messages: this.#store.messages(),
      handoffs: this.#store.handoffs(),
      pendingApprovals: state.suspension?.pending ?? [],
      lastEventId: state.lastEventId,
      lastTurnStorage: turn && turn.status !== "running" ? { rowsWritten: turn.rowsWritten, bytesWritten: turn.bytesWritten } : null,
      usage: this.#store.usage(),
      compactions: this.#store.compactions(),
    });
  }

  /** Erases the conversation entirely. */
  async erase(conversationId: string): Promise<SessionResult<null>> {
    if (this.#running) return fail("run_in_progress", "A run is in progress for this conversation; delete it when the run has ended.");
    if (!this.#store.state()) return notFound(conversationId);
    await this.#store.erase();
    return ok(null);
  }

  #startLeg(conversationId: string, input: TurnInput): ReadableStream<Uint8Array> {
    const broadcast = new TurnBroadcast();
    this.#running = broadcast;
    const stream = broadcast.subscribe(this.#store.state()!.lastEventId);
    // The run is driven here, not by the response stream: a client that drops does not stop it.
    this.ctx.waitUntil(this.#drive(broadcast, conversationId, input));
    return stream;
  }

  async #drive(broadcast: TurnBroadcast, conversationId: string, input: TurnInput): Promise<void> {
    const state = this.#store.state()!;
    let nextId = state.lastEventId + 1;
    let pending: StoredEvent[] = [];
    let last: StoredEvent | undefined;
    const lastHandoff = this.#store.lastHandoff();
    const compaction = this.#store.latestCompaction();
    try {
      const events = runTurn({
        conversationId,
        network: this.#network,
        model: this.#model,
        history: this.#store.messages(),
        activeAgent: state.activeAgent,
        handoffCount: state.handoffCount,
        ...(lastHandoff ? { lastHandoff } : {}),
        ...(compaction ? { compaction } : {}),
        context: state.context ?? {},
        usage: this.#store.usage(),
        input,
        limits: {
          ...(this.#config.MAX_STEPS ? { maxSteps: this.#config.MAX_STEPS } : {}),
          ...(this.#config.MAX_HANDOFFS_PER_TURN !== undefined ? { maxHandoffsPerTurn: this.#config.MAX_HANDOFFS_PER_TURN } : {}),
        },
        store: {
          commitStep: (commit) => {
            this.#store.commitStep(commit, pending);
            pending = [];
          },
        },
      });
      for await (const event of events) {
        last = { id: nextId++, ...event };
        pending.push(last);
        broadcast.publish(last);
      }
      const status = last?.type === "error" ? "failed" : last?.type === "done" && last.status === "awaiting_approval" ? "awaiting_approval" : "completed";
      this.#store.endTurn(status, pending, last?.type === "error" ? last.code : undefined);
    } catch (error) {
      // Only storage can fail here: the loop turns every other failure into an error event.
      console.error("conversation turn failed:", error instanceof Error ? error.message : String(error));
      if (last?.type !== "error" && last?.type !== "done") {
        broadcast.publish({ id: nextId++, type: "error", code: "internal_error", message: "The turn could not be stored." });
      }
      try {
        this.#store.endTurn("failed", [], "internal_error");
      } catch {
        // The constructor marks a turn left running as failed on the next start.
      }
    } finally {
      this.#running = null;
      broadcast.close();
    }
  }
}

function notFound<T>(conversationId: string): SessionResult<T> {
  return fail("conversation_not_found", `No conversation '${conversationId}'; send a message to start one.`);
}
