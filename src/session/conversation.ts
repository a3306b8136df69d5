import { DurableObject } from "cloudflare:workers";
import { type Config, readConfig, redactorFor, runSettings } from "../config.ts";
import type { WorkerVars } from "../worker-vars.ts";

import {
  type ApprovalDecision,
  type CallerFrame,
  type Compaction,
  type Limits,
  type Message,
  type Model,
  type Network,
  type PendingApproval,
  type Redactor,
  type RunItemsOptions,
  RuntimeError,
  runTurnItems,
  type TurnInput,
  type UsageTotals,
} from "../runtime/index.ts";
import { encoderFor, type StoredEvent, type StreamFormat, toUIMessages, type UIMessageOut } from "../wire/index.ts";
import { checkDecisions } from "./approvals.ts";
import { createModel } from "./configured-model.ts";
import { McpConnections } from "../mcp/index.ts";
import { mcpHeaderValues } from "./mcp-secrets.ts";
import { SqlToolListCache } from "./mcp-tool-cache.ts";
import { redactingModel } from "./redacting-model.ts";
import {
  type ConversationState,
  ConversationStore,
  type ForkSnapshot,
  type StoredHandoff,
  type StoredTurnStatus,
  type TurnSummary,
} from "./conversation-store.ts";
import { type EventBatches, eventStream } from "./event-stream.ts";
import { fail, ok, type SessionResult } from "./results.ts";
import { type HistoryPage, pageOfHistory } from "./history-page.ts";
import { TurnBroadcast } from "./turn-broadcast.ts";
import { OtlpExporter, parseOtlpHeaders, toOtlp } from "./otlp-export.ts";
import { PersonHold } from "./person-hold.ts";
import { TurnRecorder } from "./turn-recorder.ts";
import { parseTraceparent, spansToExport, TraceBuilder, type TurnTrace } from "./turn-trace.ts";

export interface ConversationView {
  id: string;
  activeAgent: string;
  handoffCount: number;
  /** Agents waiting for the conversation to come back (returning handoffs), the next to get it last. */
  callers: CallerFrame[];
  turn: number;
  status: StoredTurnStatus | "idle";
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
  /** Where `messages` sits in the whole history (indexes, as `compactions` count them). */
  page: HistoryPage;
}

/** A page of the history: at most `limit` messages before `before` (the newest by default). */
export interface PageQuery {
  limit?: number | undefined;
  before?: number | undefined;
}

export type DecisionOutcome = { kind: "stream"; stream: ReadableStream<Uint8Array> } | { kind: "awaiting"; pending: string[] };

/** `idle`: nothing after the cursor, and no run that could add to it. */
export type EventsOutcome = { kind: "stream"; stream: ReadableStream<Uint8Array> } | { kind: "idle" };

/**
 * Who is asking: the conversation, and the grant of the conversation token used (absent for the
 * master key and anonymous use). A token whose grant is not the conversation's is revoked.
 */
export interface Caller {
  conversationId: string;
  grant?: string | undefined;
  /** The request's W3C `traceparent`: a turn it starts is traced as that span's child. */
  traceparent?: string | undefined;
}

/**
 * Streams open at once on one conversation (live readers and replays); more are refused with 429.
 * A conversation is one person's, in a few tabs: 16 is plenty, and bounds what clients that never
 * read can make the runtime hold for them (workerd buffers a stream it carries over RPC).
 */
export const MAX_STREAMS = 16;

/** How long a stream following a person-held conversation stays open before its client reconnects. */
const HOLD_STREAM_MS = 5 * 60_000;

/** What a Worker gives its conversations: the network they run, and what overrides the environment. */
export interface ConversationSetup {
  network: Network;
  /** Answers when no provider is configured (neither OPENAI_API_KEY nor OPENAI_BASE_URL); without it such turns fail with `model_not_configured`. */
  offlineModel?: Model | undefined;
  /** Limits that take precedence over MAX_STEPS and MAX_HANDOFFS_PER_TURN. */
  limits?: Partial<Limits> | undefined;
}

/**
 * One conversation: its active agent, history and counters in SQLite, and at most one run.
 * Thin glue: the loop is in src/runtime, storage in ConversationStore, fan-out in TurnBroadcast.
 * Everything it stores or streams passes the redactor of the configured secrets first. A Worker
 * makes its own subclass with `setup` (`createHandoffWorker` in `handoff-runtime/cloudflare` does).
 */
export abstract class Conversation extends DurableObject<WorkerVars> {
  readonly #store: ConversationStore;
  readonly #config: Config;
  readonly #network: Network;
  readonly #model: Model;
  /** Requests the provider's client has sent: the trace counts a model call's retries by it. */
  readonly #providerRequests = { sent: 0 };
  readonly #limits: Partial<Limits>;
  readonly #redactor: Redactor;
  readonly #exporter: OtlpExporter | null;
  /** Sessions with the agents' MCP servers, kept while the object lives. */
  readonly #mcp: McpConnections;
  /** While a person holds the conversation: their messages, their hand back, the followers and the desk. */
  readonly #hold: PersonHold;
  /** The one running turn: its fan-out, what cancels it, and when it has ended. */
  #running: { broadcast: TurnBroadcast; controller: AbortController; ended: Promise<void> } | null = null;
  #openStreams = 0;
  /** Start times of recent turns, for the per-conversation rate limit. */
  #recentTurns: number[] = [];

  constructor(ctx: DurableObjectState, env: WorkerVars) {
    super(ctx, env);
    this.#config = readConfig(env);
    const setup = this.setup(env);
    this.#network = setup.network;
    // The MCP servers' header values are secrets too, wherever they came from.
    this.#redactor = redactorFor(env).with(mcpHeaderValues(setup.network, env));
    this.#store = new ConversationStore(ctx.storage);
    this.#hold = new PersonHold(this.#store, this.#redactor, env);
    this.#mcp = new McpConnections({
      env,
      cache: new SqlToolListCache(ctx.storage.sql),
      log: (message) => console.warn(this.#redactor.text(message)),
    });
    this.#model = redactingModel(
      createModel(this.#config, this.#redactor, this.#providerRequests) ?? setup.offlineModel ?? unconfiguredModel(),
      this.#redactor,
    );
    this.#limits = { ...runSettings(this.#config).limits, ...setup.limits };
    const endpoint = this.#config.OTEL_EXPORTER_OTLP_ENDPOINT;
    this.#exporter = endpoint
      ? new OtlpExporter(
          { endpoint: `${endpoint.replace(/\/$/, "")}/v1/traces`, headers: parseOtlpHeaders(this.#config.OTEL_EXPORTER_OTLP_HEADERS) },
          (message) => console.warn(this.#redactor.text(message)),
        )
      : null;
  }

  /** The network this conversation runs and what overrides the environment, from the Worker that exports the class. */
  protected abstract setup(env: WorkerVars): ConversationSetup;

  /** Creates the conversation, held by the entry agent, without a turn; the grant signs its tokens. */
  async create(caller: Caller): Promise<SessionResult<{ activeAgent: string; grant: string }>> {
    const state = this.#store.create(caller.conversationId, this.#network.entry.name, newGrant());
    return ok({ activeAgent: state.activeAgent, grant: state.grant ?? this.#store.setGrant(newGrant()).grant! });
  }

  /** The grant for new tokens of an existing conversation; `rotate` revokes every token issued before. */
  async issueGrant(caller: Caller, rotate: boolean): Promise<SessionResult<{ grant: string }>> {
    const state = this.#store.state();
    if (!state) return notFound(caller.conversationId);
    return ok({ grant: !rotate && state.grant ? state.grant : this.#store.setGrant(newGrant()).grant! });
  }

  /** Starts a turn and returns its stream. The run goes on if the stream's reader leaves. */
  async sendMessage(caller: Caller, message: string, format: StreamFormat = "sse"): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    const admitted = this.#admit(caller);
    if (!admitted.ok) return admitted;
    if (this.#running) return fail("run_in_progress", "A run is in progress for this conversation; wait for it to end.");
    const suspension = admitted.value?.suspension;
    if (suspension) {
      return fail("approval_pending", "Tool calls are waiting for approval: decide them at POST /v1/conversations/:id/approvals first.", {
        pending: suspension.pending.map((p) => p.toolCallId),
      });
    }
    const limited = this.#limitTurns() ?? this.#limitStreams();
    if (limited) return limited;
    this.#recentTurns.push(Date.now());
    // The master key (or anonymous use) may start a conversation with its first message.
    if (!admitted.value) this.#store.create(caller.conversationId, this.#network.entry.name, newGrant());
    this.#store.beginTurn(message);
    return ok(this.#startLeg(caller, { kind: "message", text: message }, format));
  }

  /**
   * Rewinds the last turn and runs it again from its user message (`message` replaces its text):
   * its messages, handoffs, counters, context and active agent return to what they were when it
   * started, whatever its status. Only the last turn can be rewound; what it spent stays counted.
   */
  async retry(caller: Caller, message?: string, format: StreamFormat = "sse"): Promise<SessionResult<ReadableStream<Uint8Array>>> {
    const admitted = this.#existing(caller);
    if (!admitted.ok) return admitted;
    if (this.#running) return fail("run_in_progress", "A run is in progress for this conversation; cancel it or wait for it to end.");
    const limited = this.#limitTurns() ?? this.#limitStreams();
    if (limited) return limited;
    const opening = admitted.value.turn > 0 ? this.#store.rewindLastTurn() : null;
    if (!opening) return fail("nothing_to_retry", "There is no turn to run again: send a message instead.");
    this.#recentTurns.push(Date.now());
    const text = message ?? opening.message;
    this.#store.beginTurn(text);
    return ok(this.#startLeg(caller, { kind: "message", text }, format));
  }

  /** Records decisions; once every pending call is decided, resumes the turn as the same agent. */
  async decide(caller: Caller, decisions: ApprovalDecision[], format: StreamFormat = "sse"): Promise<SessionResult<DecisionOutcome>> {
    const admitted = this.#existing(caller);
    if (!admitted.ok) return admitted;
    if (this.#running) return fail("run_in_progress", "A run is in progress for this conversation; wait for it to end.");
    const checked = checkDecisions(admitted.value, this.#store.messages(), decisions);
    if (!checked.ok) return checked;
    const limited = checked.value.complete ? this.#limitStreams() : null;
    if (limited) return limited;
    const state = this.#store.recordDecisions(decisions, checked.value.complete);
    const suspension = state.suspension!;
    if (!checked.value.complete) {
      const decided = new Set(state.decisions.map((d) => d.toolCallId));
      return ok({ kind: "awaiting", pending: suspension.pending.filter((p) => !decided.has(p.toolCallId)).map((p) => p.toolCallId) });
    }
    const stream = this.#startLeg(caller, { kind: "resume", suspension, decisions: state.decisions }, format);
    return ok({ kind: "stream", stream });
  }

  /**
   * The current or last turn's events after `afterId`, then the live run until it ends. A cursor
   * past the last event of a finished turn is refused: it belongs to a conversation deleted since.
   */
  async events(caller: Caller, afterId: number, format: StreamFormat = "sse", follow = false): Promise<SessionResult<EventsOutcome>> {
    const admitted = this.#existing(caller);
    if (!admitted.ok) return admitted;
    const state = admitted.value;
    // Following a conversation a person holds: its events, then the person's messages as they are sent.
    const hold = follow && !this.#running && this.#network.get(state.activeAgent)?.human ? this.#hold.followers() : undefined;
    if (!this.#running && !hold) {
      if (afterId > state.lastEventId) {
        return fail(
          "event_id_unknown",
          `Event ${afterId} is past this conversation's last event (${state.lastEventId}); it may belong to a deleted conversation of the same id. Reconnect without Last-Event-ID.`,
          {
            lastEventId: state.lastEventId,
          },
        );
      }
      if (afterId === state.lastEventId) return ok({ kind: "idle" });
    }
    const limited = this.#limitStreams();
    if (limited) return limited;
    return ok({ kind: "stream", stream: this.#openStream(this.#readEvents(state, afterId, hold), format, this.#answerId(false)) });
  }

  async getView(caller: Caller, query: PageQuery = {}): Promise<SessionResult<ConversationView>> {
    const admitted = this.#existing(caller);
    if (!admitted.ok) return admitted;
    const state = admitted.value;
    const turn = this.#store.turn(state.turn);
    const { messages, page } = pageOfHistory(this.#store.messages(), query.limit, query.before);
    return ok(
      this.#redactor.value({
        id: state.conversationId,
        activeAgent: state.activeAgent,
        handoffCount: state.handoffCount,
        callers: state.callers,
        turn: state.turn,
        status: this.#running ? "running" : (turn?.status ?? "idle"),
        messages,
        page,
        handoffs: this.#store.handoffs(),
        pendingApprovals: state.suspension?.pending ?? [],
        lastEventId: state.lastEventId,
        lastTurnStorage: turn && turn.status !== "running" ? { rowsWritten: turn.rowsWritten, bytesWritten: turn.bytesWritten } : null,
        usage: this.#store.usage(),
        compactions: this.#store.compactions(),
      }),
    );
  }

  /** Every turn: status, times, usage, handoffs. */
  async turns(caller: Caller): Promise<SessionResult<TurnSummary[]>> {
    const admitted = this.#existing(caller);
    if (!admitted.ok) return admitted;
    return ok(this.#redactor.value(this.#store.turns()));
  }

  /** A turn's trace: its spans, from the turn down to each model call, tool call and handoff. */
  async turnTrace(caller: Caller, turn: number): Promise<SessionResult<TurnTrace>> {
    const admitted = this.#existing(caller);
    if (!admitted.ok) return admitted;
    const trace = this.#store.trace(turn);
    if (!trace)
      return fail(
        "turn_not_found",
        `No trace of turn ${turn}: only the latest turns keep theirs (turns 1 to ${admitted.value.turn} exist).`,
      );
    return ok(this.#redactor.value(trace));
  }

  /** The conversation as it stood after `afterTurn`, for a fork; the conversation itself is untouched. */
  async forkSnapshot(caller: Caller, afterTurn: number): Promise<SessionResult<ForkSnapshot>> {
    const admitted = this.#existing(caller);
    if (!admitted.ok) return admitted;
    const state = admitted.value;
    if (afterTurn > state.turn)
      return fail("turn_not_found", `This conversation has ${state.turn} turns; fork after one of them (1 to ${state.turn}).`);
    if (this.#running && afterTurn === state.turn)
      return fail("run_in_progress", "That turn is still running; fork after it has ended, or after an earlier turn.");
    const snapshot = this.#store.forkSnapshot(afterTurn);
    if (!snapshot) return fail("turn_not_found", `Turn ${afterTurn} was stored before forks were possible; fork after a later turn.`);
    return ok(snapshot);
  }

  /** Creates this conversation as a fork of another, from its snapshot, with a grant of its own. */
  async importFork(caller: Caller, snapshot: ForkSnapshot): Promise<SessionResult<{ activeAgent: string; grant: string }>> {
    // A fork's id is freshly made by the Worker: it cannot be taken.
    if (this.#store.state()) throw new Error(`conversation ${caller.conversationId} already exists`);
    const state = this.#store.importFork(caller.conversationId, newGrant(), snapshot);
    return ok({ activeAgent: state.activeAgent, grant: state.grant! });
  }

  /** The stored conversation as the AI SDK's `UIMessage[]`, to seed `useChat({ messages })` after a reload. */
  async uiMessages(caller: Caller, query: PageQuery = {}): Promise<SessionResult<{ messages: UIMessageOut[]; page: HistoryPage }>> {
    const admitted = this.#existing(caller);
    if (!admitted.ok) return admitted;
    const state = admitted.value;
    const handoffs = this.#store.handoffs().map(({ turn: _turn, ...handoff }) => handoff);
    const { messages, page } = pageOfHistory(this.#store.messages(), query.limit, query.before);
    // The step awaiting approval follows the newest message: only the newest page has it.
    const suspension = page.end === page.total ? state.suspension : null;
    return ok(this.#redactor.value({ messages: toUIMessages({ messages, handoffs, suspension }, page.start), page }));
  }

  /**
   * Stops the running turn: its model request is aborted, tools not yet started never start, what
   * was committed stays, and its stream ends with `done`, status `cancelled`. Answers once the turn
   * has ended, so a new message is accepted right after; `cancelled: false` when nothing was running.
   */
  async cancel(caller: Caller): Promise<SessionResult<{ cancelled: boolean }>> {
    const admitted = this.#existing(caller);
    if (!admitted.ok) return admitted;
    const running = this.#running;
    if (!running) return ok({ cancelled: false });
    running.controller.abort();
    await running.ended;
    return ok({ cancelled: true });
  }

  /** Erases the conversation entirely: its tokens are revoked with it, and it leaves the operator desk. */
  async erase(caller: Caller): Promise<SessionResult<null>> {
    const admitted = this.#admit(caller);
    if (!admitted.ok) return admitted;
    if (this.#running) return fail("run_in_progress", "A run is in progress for this conversation; delete it when the run has ended.");
    if (!admitted.value) return notFound(caller.conversationId);
    await this.#store.erase();
    await this.#hold.end(caller.conversationId);
    return ok(null);
  }

  /** A person's message to the user, while a person holds the conversation: stored, and streamed to whoever follows it. */
  async operatorMessage(caller: Caller, text: string, operator?: string): Promise<SessionResult<{ eventId: number; agent: string }>> {
    const held = this.#heldByPerson(caller);
    if (!held.ok) return held;
    const { state, person } = held.value;
    return ok({ eventId: await this.#hold.say(state, person, text, operator), agent: person });
  }

  /** The person gives the conversation back to an agent, with a note the agent reads; the user's next message goes to it. */
  async operatorHandBack(caller: Caller, to: string, note: string): Promise<SessionResult<{ activeAgent: string }>> {
    const held = this.#heldByPerson(caller);
    if (!held.ok) return held;
    const target = this.#network.get(to);
    if (!target || target.human) {
      const agents = [...this.#network.agents.values()].filter((a) => !a.human).map((a) => a.name);
      return fail("unknown_agent", `'${to}' is not an agent of this network to hand back to: one of ${agents.join(", ")}.`);
    }
    await this.#hold.handBack(held.value.state, held.value.person, to, note);
    return ok({ activeAgent: to });
  }

  /** The conversation exists, no run is going on, and a person holds it. */
  #heldByPerson(caller: Caller): SessionResult<{ state: ConversationState; person: string }> {
    const admitted = this.#existing(caller);
    if (!admitted.ok) return admitted;
    const state = admitted.value;
    if (this.#running) return fail("run_in_progress", "A run is in progress for this conversation; try again when it has ended.");
    if (!this.#network.get(state.activeAgent)?.human)
      return fail("not_held_by_person", `No person holds this conversation: '${state.activeAgent}' does.`);
    return ok({ state, person: state.activeAgent });
  }

  /** The conversation's state for a caller the token admits, or why not: revoked, or no such conversation. */
  #existing(caller: Caller): SessionResult<ConversationState> {
    const admitted = this.#admit(caller);
    if (!admitted.ok) return admitted;
    return admitted.value ? ok(admitted.value) : notFound(caller.conversationId);
  }

  /** A token passes while its grant is the conversation's; it never reaches a conversation that does not exist. */
  #admit(caller: Caller): SessionResult<ConversationState | null> {
    const state = this.#store.state();
    if (caller.grant === undefined || (state?.grant !== undefined && state.grant === caller.grant)) return ok(state);
    return fail(
      "token_revoked",
      "This conversation token was revoked: the conversation was deleted or its tokens were rotated. Ask for a new token.",
    );
  }

  #limitTurns(): SessionResult<never> | null {
    const now = Date.now();
    this.#recentTurns = this.#recentTurns.filter((t) => t > now - 60_000);
    if (this.#recentTurns.length < this.#config.TURNS_PER_MINUTE) return null;
    const retryAfter = Math.max(1, Math.ceil((this.#recentTurns[0]! + 60_000 - now) / 1000));
    return fail(
      "rate_limited",
      `This conversation takes ${this.#config.TURNS_PER_MINUTE} new turns a minute; try again in ${retryAfter} s.`,
      { retryAfter },
    );
  }

  #limitStreams(): SessionResult<never> | null {
    if (this.#openStreams < MAX_STREAMS) return null;
    return fail("too_many_streams", `This conversation already has ${MAX_STREAMS} open streams; close one, or try again later.`, {
      retryAfter: 5,
    });
  }

  #openStream(batches: EventBatches, format: StreamFormat, messageId?: string): ReadableStream<Uint8Array> {
    this.#openStreams++;
    return eventStream(batches, encoderFor(format, messageId), () => this.#openStreams--);
  }

  /**
   * The id of the current turn's answer, as /ui-messages names it (`msg-<index>`): the message after
   * the turn's user message. `userPending`: the user message is about to be stored (a new turn),
   * after a note when the agent that held the conversation is gone.
   */
  #answerId(userPending: boolean): string {
    const messages = this.#store.messages();
    if (userPending) {
      const note = this.#network.get(this.#store.state()!.activeAgent) ? 0 : 1;
      return `msg-${messages.length + note + 1}`;
    }
    return `msg-${messages.findLastIndex((m) => m.role === "user") + 1}`;
  }

  /**
   * A reader's events: the turn's stored rows after `afterId`, one at a time, then (while a run
   * goes on) the live run's events. Stored rows pass the redactor again: rows written before
   * redaction by value existed are cleaned on the way out.
   */
  #readEvents(state: ConversationState, afterId: number, hold?: TurnBroadcast): EventBatches {
    return (disconnect) => {
      const live = this.#running?.broadcast ?? hold;
      const tracked = live?.track(disconnect);
      // A follower of a person-held conversation reconnects now and then (Last-Event-ID): no stream is held for ever.
      const timer = hold ? setTimeout(disconnect, HOLD_STREAM_MS) : undefined;
      const firstLive = live?.firstId ?? Number.POSITIVE_INFINITY;
      let stored = afterId < state.lastEventId && afterId + 1 < firstLive ? this.#store.storedEvents(state.turn, afterId, firstLive) : null;
      let last = afterId;
      let sawEnd = false;
      const take = (batch: StoredEvent[]) => {
        last = batch.at(-1)!.id;
        sawEnd ||= batch.some((event) => event.type === "done" || event.type === "error");
        return batch;
      };
      return {
        next: async () => {
          while (stored) {
            const batch = stored();
            if (batch === null) stored = null;
            else if (batch.length > 0) return take(this.#redactor.value(batch));
          }
          if (!live || !tracked) return null;
          const batch = await live.next(last, tracked.reader, sawEnd);
          return batch && take(batch);
        },
        close: () => {
          clearTimeout(timer);
          tracked?.untrack();
        },
      };
    };
  }

  #startLeg(caller: Caller, input: TurnInput, format: StreamFormat): ReadableStream<Uint8Array> {
    const running = { broadcast: new TurnBroadcast(), controller: new AbortController(), ended: Promise.resolve() };
    this.#running = running;
    const state = this.#store.state()!;
    const stream = this.#openStream(this.#readEvents(state, state.lastEventId), format, this.#answerId(input.kind === "message"));
    // The run is driven here, not by the response stream: a client that drops does not stop it.
    running.ended = this.#drive(running.broadcast, caller, input, running.controller.signal);
    this.ctx.waitUntil(running.ended);
    return stream;
  }

  async #drive(broadcast: TurnBroadcast, caller: Caller, input: TurnInput, signal: AbortSignal): Promise<void> {
    const { conversationId } = caller;
    const state = this.#store.state()!;
    // A resumed leg continues the trace its turn began; a new turn is the child of the request's traceparent.
    const previous = input.kind === "resume" ? this.#store.trace(state.turn) : undefined;
    const builder = new TraceBuilder(state.turn, {
      previous,
      parent: parseTraceparent(caller.traceparent),
      content: this.#config.OTEL_CAPTURE_CONTENT ? { ...(input.kind === "message" ? { input: input.text } : {}) } : undefined,
      providerRequests: () => this.#providerRequests.sent,
    });
    const recorder = new TurnRecorder(this.#store, this.#redactor, broadcast, state.lastEventId + 1, {
      builder,
      conversationId,
      turn: state.turn,
      keep: this.#config.TRACE_TURNS,
    });
    try {
      const items = runTurnItems({ ...this.#runOptions(conversationId, state, input), signal });
      let next = await items.next();
      while (!next.done) {
        let stored = true;
        try {
          recorder.record(next.value);
        } catch (error) {
          stored = false;
          next = await items.throw(error);
        }
        if (stored) next = await items.next();
      }
      const trace = recorder.end(next.value);
      if (next.value.status === "awaiting_human") {
        // Handed over in this leg: it waits for the person; a message while they hold it keeps its status.
        const person = this.#store.state()!.activeAgent;
        const handedOver = trace.spans.some((span) => span.kind === "handoff" && span.attributes.to === person);
        await this.#hold.toDesk(conversationId, person, handedOver ? "waiting" : undefined);
      }
      // Sent off the turn's path: a slow or dead collector never delays a stream or fails a turn.
      const spans = spansToExport(trace, previous);
      if (this.#exporter && spans.length > 0) {
        const body = toOtlp({ traceId: trace.traceId, spans, conversationId, content: builder.content });
        this.ctx.waitUntil(this.#exporter.export(this.#redactor.value(body)));
      }
    } catch (error) {
      // Only storage can fail here: the loop turns every other failure into an error event.
      console.error(this.#redactor.text(`conversation turn failed: ${error instanceof Error ? error.message : String(error)}`));
      recorder.fail();
    } finally {
      this.#running = null;
      broadcast.close();
    }
  }

  /** What the loop is given: the stored conversation, and the limits the configuration sets. */
  #runOptions(conversationId: string, state: ConversationState, input: TurnInput): RunItemsOptions {
    const lastHandoff = this.#store.lastHandoff();
    const compaction = this.#store.latestCompaction();
    return {
      conversationId,
      network: this.#network,
      model: this.#model,
      mcp: this.#mcp,
      history: this.#store.messages(),
      activeAgent: state.activeAgent,
      handoffCount: state.handoffCount,
      callers: state.callers,
      agentStates: state.agentStates,
      ...(lastHandoff ? { lastHandoff } : {}),
      ...(compaction ? { compaction } : {}),
      context: state.context ?? {},
      usage: this.#store.usage(),
      input,
      limits: this.#limits,
    };
  }
}

/** A random grant: 128 bits, base64url. */
function newGrant(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** Without a provider and without an offline model, every turn says what to configure. */
function unconfiguredModel(): Model {
  return {
    stream() {
      throw new RuntimeError(
        "model_not_configured",
        "No model is configured: set OPENAI_API_KEY (and OPENAI_BASE_URL for a provider other than OpenAI).",
      );
    },
  };
}

function notFound<T>(conversationId: string): SessionResult<T> {
  return fail(
    "conversation_not_found",
    `No conversation '${conversationId}'; create it with POST /v1/conversations, or send a message to it with the API key.`,
  );
}
