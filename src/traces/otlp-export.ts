import type { Config } from "../config.ts";
import type { Span, SpanContent } from "./turn-trace.ts";
import { errorMessage } from "../runtime/errors.ts";

/** Where traces go: an OTLP/HTTP endpoint (JSON), with headers such as an API key. */
export interface OtlpTarget {
  endpoint: string;
  headers: Record<string, string>;
}

type AttributeValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

/** The GenAI operation each kind of span is, in OpenTelemetry's GenAI semantic conventions. */
const OPERATION: Partial<Record<Span["kind"], string>> = { agent: "invoke_agent", model: "chat", tool: "execute_tool" };

/** What an export of one leg's spans is made of. */
export interface OtlpSpans {
  traceId: string;
  spans: readonly Span[];
  conversationId: string;
  /** Message content by span id, only when content is captured. */
  content?: SpanContent | null;
}

/** A turn's spans as an OTLP/HTTP JSON export request, with the GenAI attributes. */
export function toOtlp({ traceId, spans, conversationId, content }: OtlpSpans): unknown {
  return {
    resourceSpans: [
      {
        resource: { attributes: attributes({ "service.name": "handoff-runtime" }) },
        scopeSpans: [
          {
            scope: { name: "handoff-runtime" },
            spans: spans.map((span) => otlpSpan(traceId, span, conversationId, content?.get(span.id))),
          },
        ],
      },
    ],
  };
}

function otlpSpan(traceId: string, span: Span, conversationId: string, content: Record<string, string> | undefined): unknown {
  const operation = OPERATION[span.kind];
  const end = span.end ?? span.start;
  const failed = span.attributes.error === true || span.attributes.status === "failed";
  return {
    traceId,
    spanId: span.id,
    ...(span.parentId ? { parentSpanId: span.parentId } : {}),
    name: operation ? `${operation} ${span.name}` : span.name,
    // CLIENT for a call out to a model, INTERNAL for the rest.
    kind: span.kind === "model" ? 3 : 1,
    startTimeUnixNano: `${span.start}000000`,
    endTimeUnixNano: `${end}000000`,
    attributes: attributes({
      "gen_ai.conversation.id": conversationId,
      "handoff.span.kind": span.kind,
      ...(operation ? { "gen_ai.operation.name": operation } : {}),
      ...(span.kind === "handoff" ? { "handoff.from": span.attributes.from, "handoff.to": span.attributes.to } : {}),
      ...span.attributes,
      ...content,
    }),
    status: { code: failed ? 2 : 1 },
  };
}

function attributes(values: Record<string, string | number | boolean | undefined>): Array<{ key: string; value: AttributeValue }> {
  return Object.entries(values).flatMap(([key, value]): Array<{ key: string; value: AttributeValue }> => {
    if (value === undefined) return [];
    return [{ key, value: attributeValue(value) }];
  });
}

function attributeValue(value: string | number | boolean): AttributeValue {
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  return { stringValue: value };
}

/** Exports waiting behind the one in flight; beyond it the oldest is dropped (a dead collector never grows memory). */
const MAX_QUEUED = 16;
const ATTEMPTS = 3;
const ATTEMPT_TIMEOUT_MS = 5_000;

/**
 * Sends traces after their turns, off the turn's path: one export in flight at a time, a bounded
 * queue, and each export retried with backoff on 429, 5xx and network failures, then given up.
 * Nothing it does can fail a turn or delay a stream.
 */
export class OtlpExporter {
  readonly #target: OtlpTarget;
  readonly #log: (message: string) => void;
  readonly #queue: unknown[] = [];
  #sending: Promise<void> | null = null;

  constructor(target: OtlpTarget, log: (message: string) => void) {
    this.#target = target;
    this.#log = log;
  }

  /** Queues an export; the promise (for `waitUntil`) settles when the queue has drained. */
  export(body: unknown): Promise<void> {
    if (this.#queue.length >= MAX_QUEUED) {
      this.#queue.shift();
      this.#log("trace export: the queue is full; the oldest trace was dropped");
    }
    this.#queue.push(body);
    this.#sending ??= this.#drain().finally(() => {
      this.#sending = null;
    });
    return this.#sending;
  }

  async #drain(): Promise<void> {
    for (let body = this.#queue.shift(); body !== undefined; body = this.#queue.shift()) await this.#send(body);
  }

  async #send(body: unknown): Promise<void> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      let retryAfterMs = 250 * 2 ** (attempt - 1);
      try {
        const res = await fetch(this.#target.endpoint, {
          method: "POST",
          headers: { "content-type": "application/json", ...this.#target.headers },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
        });
        await res.body?.cancel();
        if (res.ok) return;
        if (res.status !== 429 && res.status < 500) {
          this.#log(`trace export: the collector answered ${res.status}; the trace was dropped`);
          return;
        }
        const header = Number(res.headers.get("retry-after"));
        if (Number.isFinite(header) && header >= 0) retryAfterMs = Math.min(5_000, header * 1000);
      } catch (error) {
        this.#log(`trace export: ${errorMessage(error)}`);
      }
      if (attempt < ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, retryAfterMs));
    }
    this.#log(`trace export: gave up after ${ATTEMPTS} attempts; the trace was dropped`);
  }
}

/** `OTEL_EXPORTER_OTLP_HEADERS`: `name=value,name=value`, values URL-encoded as OpenTelemetry specifies. */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  if (!text) return {};
  return Object.fromEntries(
    text.split(",").flatMap((pair) => {
      const at = pair.indexOf("=");
      if (at <= 0) return [];
      const value = pair.slice(at + 1).trim();
      try {
        return [[pair.slice(0, at).trim(), decodeURIComponent(value)]];
      } catch {
        return [[pair.slice(0, at).trim(), value]];
      }
    }),
  );
}

/** The exporter of a configuration that names an OTLP endpoint; null without one. */
export function exporterFor(config: Config, log: (message: string) => void): OtlpExporter | null {
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return null;
  return new OtlpExporter(
    { endpoint: `${endpoint.replace(/\/$/, "")}/v1/traces`, headers: parseOtlpHeaders(config.OTEL_EXPORTER_OTLP_HEADERS) },
    log,
  );
}
