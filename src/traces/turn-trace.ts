import type { RunEvent, TurnOutcome } from "../runtime/events.ts";

/** What a span stands for: the turn, an agent's tenure in it, a model call, a tool call, and what happened between. */
export type SpanKind =
  | "turn"
  | "agent"
  | "model"
  | "tool"
  | "request"
  | "handoff"
  | "refused-handoff"
  | "compaction"
  | "guardrail"
  | "memory";

/** A wait for the user (of any kind: `handoff.request.kind` says which; stored traces that called it `approval` are read as it). */
function isRequest(span: Span): boolean {
  return span.kind === "request";
}

/** A memory span's name: what was done with how many (the memories' words stay out of the trace, as all content). */
export function memorySpanName(action: "recalled" | "written", count: number): string {
  return `${action === "recalled" ? "recalled" : "remembered"} ${count} ${count === 1 ? "memory" : "memories"}`;
}

/** Which memories, by id, type and key: enough to find them in the user's memory, none of their words. */
export function memoryAttributes(event: {
  action: string;
  agent: string;
  memories: ReadonlyArray<{ id: string; type: string; key?: string | undefined }>;
}) {
  return {
    "memory.action": event.action,
    "gen_ai.agent.name": event.agent,
    "memory.ids": event.memories.map((m) => m.id).join(","),
    "memory.types": event.memories.map((m) => (m.key ? `${m.type}:${m.key}` : m.type)).join(","),
  };
}

/** A finished turn's trace with what was remembered after it (a read of the conversation for memories): one instant more. */
export function withMemoriesWritten(trace: TurnTrace, event: Parameters<typeof memoryAttributes>[0], now: number): TurnTrace {
  const turn = trace.spans.find((span) => span.kind === "turn");
  const span: Span = {
    id: randomHex(8),
    parentId: turn?.id ?? null,
    kind: "memory",
    name: memorySpanName("written", event.memories.length),
    start: now,
    end: now,
    attributes: memoryAttributes(event),
  };
  return { ...trace, spans: [...trace.spans, span] };
}

/** One span of a turn's trace. Times are milliseconds since the epoch; an instant has `end === start`. */
export interface Span {
  id: string;
  parentId: string | null;
  kind: SpanKind;
  name: string;
  start: number;
  end: number | null;
  attributes: Record<string, string | number | boolean>;
}

/**
 * A turn's trace: its spans, parents first. One trace spans every leg of a turn (an approval's
 * resume continues it). Ids follow W3C Trace Context: a 32-hex-digit trace id, 16-hex-digit span ids.
 */
export interface TurnTrace {
  turn: number;
  traceId: string;
  spans: Span[];
}

/** Message content by span id, in OpenTelemetry's GenAI attribute names; kept beside a trace, never in it. */
export type SpanContent = Map<string, Record<string, string>>;

type OutputPart = { type: "text"; content: string } | { type: "tool_call"; id: string; name: string; arguments: unknown };

/** Where a leg's trace starts from, and whether it keeps the content of what it traces. */
export interface TraceOptions {
  /** The trace of an earlier leg of this turn, continued by this one. */
  previous?: TurnTrace | undefined;
  /** The span of the request that started the turn (its `traceparent`). */
  parent?: TraceParent | undefined;
  /** Keep the messages, arguments and results (`OTEL_CAPTURE_CONTENT`), with the user's message of the turn. */
  content?: { input?: string } | undefined;
  /** HTTP requests sent to the provider so far: a model call that took more than one was retried. */
  providerRequests?: (() => number) | undefined;
}

/**
 * Builds a turn's trace from the run's events as they arrive, with the time each arrived: the
 * events carry no times, the recorder sees them happen. The trace holds no content (names, ids,
 * counts); content, when asked for, is kept beside it for the export.
 */
/** The events that open or end a span (the rest mark one, or are instants of their own). */
type SpanEvent =
  | "run-start"
  | "step-start"
  | "text-delta"
  | "tool-call"
  | "tool-result"
  | "approval-required"
  | "input-required"
  | "delegated"
  | "handoff"
  | "step-finish";

export class TraceBuilder {
  readonly #spans: Span[];
  readonly #open = new Map<string, Span>();
  readonly #traceId: string;
  /** Content by span id, or null when content is not captured. */
  readonly content: SpanContent | null;
  #turn: Span;
  #agent: Span | null = null;
  #model: Span | null = null;
  /** The model call that finished last: what a warning about its answer, which comes after it, is about. */
  #answered: Span | null = null;
  /** The current model call's answer, as GenAI message parts. */
  #answer: OutputPart[] = [];
  readonly #requests: () => number;
  #requestsBefore = 0;
  /** The spans of the earlier legs this builder continues. */
  readonly #before: ReadonlySet<string>;

  constructor(turn: number, { previous, parent, content, providerRequests }: TraceOptions = {}) {
    this.#requests = providerRequests ?? (() => 0);
    this.#spans = previous ? structuredClone(previous.spans) : [];
    this.#before = new Set(this.#spans.map((span) => span.id));
    this.#traceId = previous?.traceId ?? parent?.traceId ?? randomHex(16);
    this.#turn = this.#spans.find((s) => s.kind === "turn") ?? this.#add(parent?.spanId ?? null, "turn", `turn ${turn}`, Date.now());
    this.content = content ? new Map() : null;
    if (content?.input !== undefined)
      this.#keep(this.#turn, "gen_ai.input.messages", [{ role: "user", parts: [{ type: "text", content: content.input }] }]);
    // A resumed leg picks up the calls that waited for a person: their requests, and the calls themselves.
    for (const span of this.#spans) {
      if (span.end !== null || !isRequest(span)) continue;
      const callId = String(span.attributes["gen_ai.tool.call.id"]);
      this.#open.set(`request:${callId}`, span);
      const call = this.#spans.find((s) => s.kind === "tool" && s.attributes["gen_ai.tool.call.id"] === callId);
      if (call) this.#open.set(callId, call);
    }
  }

  record(event: RunEvent, now: number): void {
    switch (event.type) {
      case "run-start":
        if (event.resumed) this.#turn.end = null;
        this.#holder(event.agent, now);
        break;
      case "step-start":
        this.#startModel(event, now);
        break;
      case "text-delta":
      case "tool-call":
        this.#output(event, now);
        break;
      case "tool-result":
        this.#toolResult(event, now);
        break;
      case "approval-required":
      case "input-required":
        this.#awaiting(event, now);
        break;
      case "delegated":
        this.#delegated(event, now);
        break;
      case "handoff":
        this.#handoff(event, now);
        break;
      case "step-finish":
        this.#finishModel(event, now);
        break;
      default:
        this.#mark(event, now);
    }
  }

  /** An event that opens or ends no span: an instant of its own, or a note on the model call it concerns. */
  #mark(event: Exclude<RunEvent, { type: SpanEvent }>, now: number): void {
    switch (event.type) {
      case "compaction":
        this.#instant("compaction", "compaction", now, { replaced: event.replaced, kept: event.kept });
        // Its summary calls went to the provider too: they are not the model call's retries.
        this.#requestsBefore = this.#requests();
        break;
      case "guardrail":
        this.#instant("guardrail", `${event.kind} guardrail`, now, { reason: event.reason, kind: event.kind });
        break;
      case "memory":
        this.#instant("memory", memorySpanName(event.action, event.memories.length), now, memoryAttributes(event));
        break;
      case "error":
        if (this.#model) {
          this.#model.attributes.error = event.code;
          this.#countRetries(this.#model);
        }
        break;
      case "warning":
        // The model call whose answer announced a handoff it did not make carries it (the warning follows its step-finish).
        if (event.code === "handoff_announced_not_made" && this.#answered)
          this.#answered.attributes["handoff.announced_not_made"] = event.message;
        break;
      case "operator-message":
      case "done":
        break;
      default: {
        const exhaustive: never = event;
        throw new Error(`unknown event ${JSON.stringify(exhaustive)}`);
      }
    }
  }

  /** Ends what is open; a request still awaited stays open into the next leg. */
  finish(turn: number, outcome: TurnOutcome, now: number): TurnTrace {
    for (const span of this.#spans) {
      if (span.end === null && !isRequest(span)) span.end = now;
    }
    this.#turn.attributes.status = outcome.status;
    if (outcome.status === "failed") this.#turn.attributes.error = outcome.code;
    return { turn, traceId: this.#traceId, spans: this.#spans };
  }

  /**
   * A background delegation started by a call of this (ended) turn: its run's spans go under that call's span, which is
   * followed as if still open. Nothing else of the turn changes.
   */
  follow(toolCallId: string): void {
    const call = this.#spans.find((s) => s.kind === "tool" && s.attributes["gen_ai.tool.call.id"] === toolCallId);
    if (call) this.#open.set(toolCallId, call);
  }

  /** The spans this builder added to the earlier legs' (a background run's), those still open ended `now`. */
  added(now: number): Span[] {
    const added = this.#spans.filter((span) => !this.#before.has(span.id));
    for (const span of added) span.end ??= now;
    return added;
  }

  #handoff(event: Extract<RunEvent, { type: "handoff" }>, now: number): void {
    // A router's transfer: the step's span was the router's, not a model's.
    if (event.kind === "transfer" && event.router && this.#model) {
      this.#model.name = `router ${event.router.name}`;
      Object.assign(this.#model.attributes, { "router.name": event.router.name, "router.confidence": event.router.confidence });
    }
    this.#instant("handoff", `${event.from} → ${event.to}${event.kind === "return" ? " (return)" : ""}`, now, {
      from: event.from,
      to: event.to,
      ...("reason" in event && event.reason ? { reason: event.reason } : {}),
      kind: event.kind,
      ...(event.kind === "return" ? { mode: event.mode } : {}),
    });
    this.#holder(event.to, now);
  }

  #holder(agent: string, now: number): void {
    if (this.#agent?.name === agent && this.#agent.end === null) return;
    if (this.#agent && this.#agent.end === null) this.#agent.end = now;
    this.#agent = this.#add(this.#turn.id, "agent", agent, now, { "gen_ai.agent.name": agent });
  }

  /** What the model streams: the first of it is the call's time to first token. */
  #output(event: Extract<RunEvent, { type: "text-delta" | "tool-call" }>, now: number): void {
    if (this.#model && this.#model.attributes.timeToFirstTokenMs === undefined)
      this.#model.attributes.timeToFirstTokenMs = now - this.#model.start;
    if (event.type === "tool-call") this.#toolCall(event, now);
    else if (this.content) this.#outputText(event.delta);
  }

  /** A tool call is a span of its own, and so is a refused handoff; a handoff taken is the `handoff` event's span. */
  #toolCall({ toolCallId, name, args, plan }: Extract<RunEvent, { type: "tool-call" }>, now: number): void {
    const kind = plan === "tool" || plan === "refused-handoff" ? plan : undefined;
    const attributes: Span["attributes"] = { ...(kind === "tool" ? { "gen_ai.tool.name": name } : {}), "gen_ai.tool.call.id": toolCallId };
    const span = kind && this.#add(this.#model?.id ?? this.#turn.id, kind, name, now, attributes);
    if (span) this.#open.set(toolCallId, span);
    if (!this.content) return;
    this.#answer.push({ type: "tool_call", id: toolCallId, name, arguments: args });
    if (span) this.#keep(span, "gen_ai.tool.call.arguments", JSON.stringify(args));
  }

  #outputText(delta: string): void {
    const last = this.#answer.at(-1);
    if (last?.type === "text") last.content += delta;
    else this.#answer.push({ type: "text", content: delta });
  }

  /** Keeps one content attribute of a span: a string as it is, anything else as JSON. */
  #keep(span: Span, key: string, value: unknown): void {
    const kept = this.content?.get(span.id) ?? {};
    kept[key] = typeof value === "string" ? value : JSON.stringify(value);
    this.content?.set(span.id, kept);
  }

  /**
   * A delegated agent's run is an agent span under the call that delegated it (a child of a child, under its parent's), and
   * each of its model calls a span under that; the run's end closes them.
   */
  #delegated(event: Extract<RunEvent, { type: "delegated" }>, now: number): void {
    const key = `delegation:${event.path.join("/")}`;
    const inner = event.event;
    if (inner.type === "run-start") {
      const parent =
        event.path.length > 1 ? this.#open.get(`delegation:${event.path.slice(0, -1).join("/")}`) : this.#open.get(event.path[0]!);
      const span = this.#add(parent?.id ?? this.#turn.id, "agent", `delegated ${inner.agent}`, now, {
        "gen_ai.agent.name": inner.agent,
        "handoff.delegation.path": event.path.join("/"),
      });
      this.#open.set(key, span);
    } else if (inner.type === "step-start") {
      const model = this.#add(this.#open.get(key)?.id ?? this.#turn.id, "model", `${inner.agent} step ${inner.stepIndex}`, now);
      this.#open.set(`${key}:model`, model);
    } else if (inner.type === "step-finish") {
      this.#close(`${key}:model`, now);
    } else if (inner.type === "done" || inner.type === "error") {
      this.#close(`${key}:model`, now);
      this.#close(key, now);
    }
  }

  #close(key: string, now: number): void {
    const span = this.#open.get(key);
    if (span) span.end = now;
    this.#open.delete(key);
  }

  /** The one wait: a request of any kind (an approval, a question, a choice…) is a span held open till its answer. */
  #awaiting(event: Extract<RunEvent, { type: "approval-required" | "input-required" }>, now: number): void {
    const kind = event.type === "approval-required" ? "approval" : event.kind;
    const attributes = { "gen_ai.tool.call.id": event.toolCallId, "handoff.request.kind": kind };
    this.#open.set(`request:${event.toolCallId}`, this.#add(this.#turn.id, "request", `${kind} for ${event.name}`, now, attributes));
  }

  #toolResult(event: Extract<RunEvent, { type: "tool-result" }>, now: number): void {
    const request = this.#open.get(`request:${event.toolCallId}`);
    if (request) {
      request.end = now;
      request.attributes.approved = !event.denied;
      this.#open.delete(`request:${event.toolCallId}`);
    }
    const span = this.#open.get(event.toolCallId);
    if (!span) return;
    this.#open.delete(event.toolCallId);
    span.end = now;
    if (this.content) this.#keep(span, "gen_ai.tool.call.result", event.result);
    if (span.kind === "refused-handoff") {
      span.attributes.reason = String(event.result);
      return;
    }
    span.attributes.error = event.isError;
    if (event.denied) span.attributes.denied = true;
  }

  /** A step's call: a model's, or a remote agent's, which is a span of its own name, with where it went. */
  #startModel(event: Extract<RunEvent, { type: "step-start" }>, now: number): void {
    const { stepIndex, remote, agent } = event;
    const name = remote ? `remote agent ${agent} (call ${stepIndex})` : `model call ${stepIndex}`;
    const attributes = { stepIndex, ...(remote ? { "gen_ai.system": "a2a", "a2a.remote.url": remote } : {}) };
    this.#model = this.#add(this.#agent?.id ?? this.#turn.id, "model", name, now, attributes);
    this.#requestsBefore = this.#requests();
  }

  #finishModel(event: Extract<RunEvent, { type: "step-finish" }>, now: number): void {
    const model = this.#model;
    if (!model) return;
    model.end = now;
    model.attributes["gen_ai.response.finish_reasons"] = event.finishReason;
    this.#countRetries(model);
    if (event.usage) {
      model.attributes["gen_ai.usage.input_tokens"] = event.usage.inputTokens;
      model.attributes["gen_ai.usage.output_tokens"] = event.usage.outputTokens;
    }
    if (this.content)
      this.#keep(model, "gen_ai.output.messages", [{ role: "assistant", parts: this.#answer, finish_reason: event.finishReason }]);
    this.#answer = [];
    this.#answered = model;
    this.#model = null;
  }

  #countRetries(model: Span): void {
    const retries = this.#requests() - this.#requestsBefore - 1;
    if (retries > 0) model.attributes.retries = retries;
  }

  #instant(kind: SpanKind, name: string, now: number, attributes: Span["attributes"]): void {
    const span = this.#add(this.#agent?.id ?? this.#turn.id, kind, name, now, attributes);
    span.end = now;
  }

  #add(parentId: string | null, kind: SpanKind, name: string, start: number, attributes: Span["attributes"] = {}): Span {
    const span: Span = { id: randomHex(8), parentId, kind, name, start, end: null, attributes };
    this.#spans.push(span);
    return span;
  }
}

/**
 * The spans of a leg to send: those finished for good and not sent by an earlier leg. A turn that
 * waits for a person holds back its own span, its open requests and their calls, which the
 * resumed leg finishes; so a collector receives each span once.
 */
export function spansToExport(trace: TurnTrace, previous?: TurnTrace): Span[] {
  const held = heldBack(trace);
  const sent = new Set(previous ? previous.spans.map((s) => s.id).filter((id) => !heldBack(previous).has(id)) : []);
  return trace.spans.filter((s) => !held.has(s.id) && !sent.has(s.id));
}

function heldBack(trace: TurnTrace): Set<string> {
  const waiting = new Set(trace.spans.filter((s) => isRequest(s) && s.end === null).map((s) => s.attributes["gen_ai.tool.call.id"]));
  const held = trace.spans.filter(
    (s) =>
      (s.kind === "turn" && (s.attributes.status === "awaiting_approval" || s.attributes.status === "awaiting_input")) ||
      ((isRequest(s) || s.kind === "tool") && waiting.has(s.attributes["gen_ai.tool.call.id"]!)),
  );
  return new Set(held.map((s) => s.id));
}

/** The span a request's W3C `traceparent` names. */
export interface TraceParent {
  traceId: string;
  spanId: string;
}

/** A W3C `traceparent` (`00-<trace id>-<span id>-<flags>`); undefined when absent or malformed, as the spec asks. */
export function parseTraceparent(header: string | undefined): TraceParent | undefined {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(header?.trim() ?? "");
  if (!match || /^0+$/.test(match[1]!) || /^0+$/.test(match[2]!)) return undefined;
  return { traceId: match[1]!, spanId: match[2]! };
}

/** `bytes` random bytes as lower-case hex: W3C trace ids take 16, span ids 8. */
function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
}
