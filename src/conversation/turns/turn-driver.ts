/**
 * Driving a conversation's turns: starting a leg, running it to its end, and reading a turn's
 * stored and live events together as one stream. At most one leg runs at a time; the streams open
 * on the conversation are counted here. The Durable Object decides who may start what.
 */
import { errorMessage, RuntimeError } from "../../runtime/errors.ts";
import { runTurnItems } from "../../runtime/run-loop.ts";
import type { Redactor } from "../../runtime/redact.ts";
import type { OperatorIdentity } from "../../runtime/handoff/types.ts";
import type { RunItemsOptions, TurnInput } from "../../runtime/run-options.ts";
import type { MemoryPort } from "../../runtime/ports/memory-port.ts";
import type { StoredEvent, TurnStream } from "../../wire/sse.ts";
import type { ConversationState, ConversationStore } from "../storage/conversation-store.ts";
import { type EventBatches, eventStream } from "./event-stream.ts";
import { type OtlpExporter, toOtlp } from "../../traces/otlp-export.ts";
import type { InboxLink } from "../inbox-link.ts";
import { fail, type ConversationResult } from "../results.ts";
import { TurnBroadcast } from "./turn-broadcast.ts";
import { NOT_STORED, TurnRecorder } from "./turn-recorder.ts";
import { parseTraceparent, spansToExport, TraceBuilder } from "../../traces/turn-trace.ts";

/**
 * Streams open at once on one conversation (live readers and replays); more are refused with 429.
 * A conversation is one person's, in a few tabs: 16 is plenty, and bounds what clients that never
 * read can make the runtime hold for them (workerd buffers a stream it carries over RPC).
 */
export const MAX_STREAMS = 16;

/** How long a stream following a person-held conversation stays open before its client reconnects. */
const HOLD_STREAM_MS = 5 * 60_000;

/** What the driver runs legs with: the loop's options but the stored conversation and the input, and the host's parts. */
export interface DriverSetup {
  store: ConversationStore;
  redactor: Redactor;
  /** The conversation's entry in its owner's inbox: shown running as a leg starts. */
  inbox: InboxLink;
  /** Resolves once what the leg's stored events call for is done (EventEffects): its stream ends after. */
  settled: () => Promise<void>;
  exporter: OtlpExporter | null;
  /** The run's options that do not change from leg to leg. */
  options: Omit<RunItemsOptions, "conversationId" | "conversation" | "input" | "signal" | "memory">;
  /** The owner's memory a leg runs with (none for an anonymous conversation). */
  memory: () => MemoryPort | undefined;
  /** Turns whose trace is kept, and whether content goes to exported spans. */
  traces: { keep: number; captureContent: boolean };
  /** Requests the provider's client has sent: the trace counts a model call's retries by it. */
  providerRequests: () => number;
  waitUntil: (promise: Promise<unknown>) => void;
  /** Told each event of a leg as it is published (the open WebSockets). */
  tap: (event: StoredEvent) => void;
}

/** Who started a leg: the conversation, and the request's W3C `traceparent` (a new turn is traced as its child). */
export interface LegRequester {
  conversationId: string;
  traceparent?: string | undefined;
  /** The signed-in user the leg runs for, and who they are: the desk shows who waits. */
  user?: string | undefined;
  identity?: OperatorIdentity | undefined;
}

/** The one running leg of a conversation: its fan-out, what cancels it, and when it has ended. */
interface RunningLeg {
  broadcast: TurnBroadcast;
  controller: AbortController;
  ended: Promise<void>;
  /** Its events are all stored and sent; what follows its end (`settled`) is being done. */
  ending: boolean;
}

export class TurnDriver {
  readonly #setup: DriverSetup;
  #running: RunningLeg | null = null;
  #openStreams = 0;

  constructor(setup: DriverSetup) {
    this.#setup = setup;
  }

  get running(): boolean {
    return this.#running !== null;
  }

  /** Resolves once a leg that has sent its last event is done with what follows its end; a leg still running is not waited for. */
  async settled(): Promise<void> {
    if (this.#running?.ending) await this.#running.ended;
  }

  /** Refuses a new stream while MAX_STREAMS are open. */
  limitStreams(): ConversationResult<never> | null {
    if (this.#openStreams < MAX_STREAMS) return null;
    return fail("too_many_streams", `This conversation already has ${MAX_STREAMS} open streams; close one, or try again later.`, {
      retryAfter: 5,
    });
  }

  /** Starts a leg of the current turn and returns its stream; the run goes on if the stream's reader leaves. */
  start(requester: LegRequester, input: TurnInput): TurnStream {
    const running = this.#claim();
    const state = this.#setup.store.state()!;
    const stream = this.#open(this.#readEvents(state, state.lastEventId), this.#answerId(input.kind === "message"));
    this.#launch(running, requester, input);
    return stream;
  }

  /**
   * Runs a leg no request reads (the schedule's, a socket's): no stream is opened for it; its events
   * are stored and reach the sockets and whoever follows. Resolves when it has ended.
   */
  runUnread(requester: LegRequester, input: TurnInput): Promise<void> {
    return this.#launch(this.#claim(), requester, input);
  }

  /** Makes a new leg the running one, before anything reads it. */
  #claim(): RunningLeg {
    const running: RunningLeg = {
      broadcast: new TurnBroadcast(this.#setup.tap),
      controller: new AbortController(),
      ended: Promise.resolve(),
      ending: false,
    };
    this.#running = running;
    return running;
  }

  /** The run is driven here, not by a response stream: a client that drops does not stop it. */
  #launch(running: RunningLeg, requester: LegRequester, input: TurnInput): Promise<void> {
    // Who the leg answers: the signed-in user whose message or decision started it (the desk shows who waits).
    this.#setup.store.legFor = requester.user && requester.identity?.id === requester.user ? requester.identity : undefined;
    running.ended = this.#drive(running.broadcast, requester, input, running.controller.signal);
    this.#setup.waitUntil(running.ended);
    this.#setup.inbox.started(this.#setup.waitUntil);
    return running.ended;
  }

  /** The current or last turn's events after `afterId`, then the live leg (or, `hold`, a person's messages) until it ends. */
  read(state: ConversationState, afterId: number, hold?: TurnBroadcast): TurnStream {
    return this.#open(this.#readEvents(state, afterId, hold), this.#answerId(false));
  }

  /** What a WebSocket opened after `afterId` missed, across turns, then the running leg's events until it ends. */
  catchUp(state: ConversationState, afterId: number): EventBatches {
    return this.#readEvents(state, afterId, undefined, "every");
  }

  /** Aborts the running leg and waits for it to end; false when nothing was running. */
  async cancel(): Promise<boolean> {
    const running = this.#running;
    if (!running) return false;
    running.controller.abort();
    await running.ended;
    return true;
  }

  #open(batches: EventBatches, answerId: string): TurnStream {
    this.#openStreams++;
    return { events: eventStream(batches, () => this.#openStreams--), answerId };
  }

  /**
   * The id of the current turn's answer, as /ui-messages names it (`msg-<index>`): the message after
   * the turn's user message. `userPending`: the user message is about to be stored (a new turn),
   * after a note when the agent that held the conversation is gone.
   */
  #answerId(userPending: boolean): string {
    const { store, options } = this.#setup;
    const messages = store.messages();
    if (userPending) {
      const note = options.network.get(store.state()!.holding.activeAgent) ? 0 : 1;
      return `msg-${messages.length + note + 1}`;
    }
    return `msg-${messages.findLastIndex((m) => m.role === "user") + 1}`;
  }

  /**
   * A reader's events: the turn's stored rows after `afterId`, one at a time, then (while a run
   * goes on) the live run's events. Stored rows pass the redactor again: rows written before
   * redaction by value existed are cleaned on the way out.
   */
  #readEvents(state: ConversationState, afterId: number, hold?: TurnBroadcast, turns: "current" | "every" = "current"): EventBatches {
    const { store, redactor } = this.#setup;
    return (disconnect) => {
      const live = this.#running?.broadcast ?? hold;
      const tracked = live?.track(disconnect);
      // A follower of a person-held conversation reconnects now and then (Last-Event-ID): no stream is held for ever.
      const timer = hold ? setTimeout(disconnect, HOLD_STREAM_MS) : undefined;
      const firstLive = live?.firstId ?? Number.POSITIVE_INFINITY;
      let stored =
        afterId < state.lastEventId && afterId + 1 < firstLive
          ? store.events.replay(turns === "every" ? "every" : state.turn, afterId, firstLive)
          : null;
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
            else if (batch.length > 0) return take(redactor.value(batch));
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

  async #drive(broadcast: TurnBroadcast, requester: LegRequester, input: TurnInput, signal: AbortSignal): Promise<void> {
    const { store, redactor, traces } = this.#setup;
    const { conversationId } = requester;
    const state = store.state()!;
    // A resumed leg continues the trace its turn began; a new turn is the child of the request's traceparent.
    const previous = input.kind === "resume" ? store.traces.read(state.turn) : undefined;
    const builder = new TraceBuilder(state.turn, {
      previous,
      parent: parseTraceparent(requester.traceparent),
      content: traces.captureContent ? { ...(input.kind === "message" ? { input: input.text } : {}) } : undefined,
      providerRequests: this.#setup.providerRequests,
    });
    const recorder = new TurnRecorder(store, redactor, broadcast, state.lastEventId + 1, {
      builder,
      conversationId,
      turn: state.turn,
      keep: traces.keep,
    });
    try {
      const memory = this.#setup.memory();
      const options = { ...this.#setup.options, ...(memory ? { memory } : {}) };
      const items = runTurnItems({ ...options, conversationId, conversation: store.snapshot(), input, signal });
      let next = await items.next();
      while (!next.done) {
        let stored = true;
        try {
          recorder.record(next.value);
        } catch (error) {
          stored = false;
          // The step was not stored: the loop ends the turn, telling the client what any storage failure tells it.
          console.error(redactor.text(`conversation step not stored: ${errorMessage(error)}`));
          next = await items.throw(new RuntimeError("internal_error", NOT_STORED));
        }
        if (stored) next = await items.next();
      }
      const trace = recorder.end(next.value);
      // What the leg's end calls for (the title, A2A push, the approvals' deadline, the desk) follows from its stored events.
      // The one running leg is this one.
      if (this.#running) this.#running.ending = true;
      await this.#setup.settled();
      // Sent off the turn's path: a slow or dead collector never delays a stream or fails a turn.
      const spans = spansToExport(trace, previous);
      const { exporter } = this.#setup;
      if (exporter && spans.length > 0) {
        const body = toOtlp({ traceId: trace.traceId, spans, conversationId, content: builder.content });
        this.#setup.waitUntil(exporter.export(redactor.value(body)));
      }
    } catch (error) {
      // Only storage can fail here: the loop turns every other failure into an error event.
      console.error(redactor.text(`conversation turn failed: ${errorMessage(error)}`));
      recorder.fail();
    } finally {
      this.#running = null;
      broadcast.close();
    }
  }
}
