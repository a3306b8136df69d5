import { DurableObject } from "cloudflare:workers";
import { createSupportNetwork } from "../agents/network.ts";
import { type Config, readConfig } from "../config.ts";
import type { Env } from "../env.ts";
import { createModel } from "../models/index.ts";
import { type Message, type Model, type Network, runTurn } from "../runtime/index.ts";
import { ConversationStore, type StoredHandoff } from "./conversation-store.ts";
import { fail, ok, type SessionResult } from "./results.ts";
import type { StoredEvent } from "./sse.ts";
import { TurnBroadcast } from "./turn-broadcast.ts";

export interface ConversationView {
  id: string;
  activeAgent: string;
  handoffCount: number;
  turn: number;
  status: string;
  messages: readonly Message[];
  handoffs: StoredHandoff[];
}

/**
 * One conversation: its active agent, history and counters in SQLite, and at most one run.
 * Thin glue: the loop is in src/runtime, storage in ConversationStore.
 */
export class Conversation extends DurableObject<Env> {
  readonly #store: ConversationStore;
  readonly #config: Config;
  readonly #network: Network;
  readonly #model: Model;
  #running: TurnBroadcast | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#config = readConfig(env);
    this.#store = new ConversationStore(ctx.storage);
    this.#network = createSupportNetwork(this.#config.OPENAI_MODEL);
    this.#model = createModel(this.#config);
  }

  /** Starts a turn and returns its SSE stream. The run goes on if the stream's reader leaves. */
  async sendMessage(conversationId: string, message: string): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    if (this.#running) return fail("run_in_progress", "A run is in progress for this conversation; wait for it to end.");
    const previous = this.#store.state();
    const state = this.#store.beginTurn({ conversationId, activeAgent: previous?.activeAgent ?? this.#network.entry.name });
    const broadcast = new TurnBroadcast();
    this.#running = broadcast;
    const stream = broadcast.subscribe(state.lastEventId);
    this.ctx.waitUntil(this.#drive(broadcast, conversationId, message));
    return ok(stream);
  }

  async getView(conversationId: string): Promise<SessionResult<ConversationView>> {
    const state = this.#store.state();
    if (!state) return fail("conversation_not_found", `No conversation '${conversationId}'; send a message to start one.`);
    return ok({
      id: state.conversationId,
      activeAgent: state.activeAgent,
      handoffCount: state.handoffCount,
      turn: state.turn,
      status: this.#running ? "running" : (this.#store.turnStatus(state.turn) ?? "idle"),
      messages: this.#store.messages(),
      handoffs: this.#store.handoffs(),
    });
  }

  async #drive(broadcast: TurnBroadcast, conversationId: string, message: string): Promise<void> {
    const state = this.#store.state()!;
    let nextId = state.lastEventId + 1;
    let pending: StoredEvent[] = [];
    let last: StoredEvent | undefined;
    try {
      const events = runTurn({
        conversationId,
        network: this.#network,
        model: this.#model,
        history: this.#store.messages(),
        activeAgent: state.activeAgent,
        handoffCount: state.handoffCount,
        userMessage: message,
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
      const outcome = last?.type === "error" ? "failed" : last?.type === "done" && last.status === "awaiting_approval" ? "awaiting_approval" : "completed";
      this.#store.endTurn(outcome, pending, last?.type === "error" ? last.code : undefined);
    } catch (error) {
      // Only storage can fail here (the loop turns every other failure into an error event).
      console.error("conversation turn failed", error instanceof Error ? error.message : String(error));
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
