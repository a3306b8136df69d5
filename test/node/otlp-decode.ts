/**
 * Decodes an OTLP/HTTP JSON export with OpenTelemetry's own compiled protos, so a test checks what
 * a collector would read, not what the exporter meant to write. A field the schema does not know,
 * an id of the wrong length or a value of the wrong type shows up as a problem.
 */
import { createRequire } from "node:module";

interface MessageType {
  fromObject(object: unknown): unknown;
  encode(message: unknown): { finish(): Uint8Array };
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): unknown;
}

// Pinned to 0.57: the last @opentelemetry/otlp-transformer that ships the official protos compiled
// (with protobufjs); later releases encode by hand and cannot decode a request.
const root = createRequire(import.meta.url)("@opentelemetry/otlp-transformer/build/src/generated/root") as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: MessageType } } } } };
};
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

export type AttributeValue = string | number | boolean;

/** A span as a collector reads it: ids in hex, times in nanoseconds as strings, attributes as values. */
export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  status: number;
  attributes: Record<string, AttributeValue>;
}

export interface DecodedExport {
  resource: Record<string, AttributeValue>;
  scopes: string[];
  spans: DecodedSpan[];
  /** What the schema could not read: fields it does not have, ids of the wrong length. */
  problems: string[];
}

type Json = Record<string, unknown>;
type ProtoKeyValue = { key: string; value: Record<string, unknown> };

const ID_BYTES: Record<string, number> = { traceId: 16, spanId: 8, parentSpanId: 8 };

export function decodeOtlpJson(body: unknown): DecodedExport {
  const problems: string[] = [];
  // OTLP/JSON's one departure from the proto3 JSON mapping: ids are hex, not base64.
  const input = mapIds(body, (hex, field, path) => {
    const bytes = /^[0-9a-f]*$/.test(hex) ? Buffer.from(hex, "hex") : Buffer.alloc(0);
    if (bytes.length !== ID_BYTES[field]) problems.push(`${path}: ${field} "${hex}" is not ${ID_BYTES[field]} bytes of hex`);
    return bytes.toString("base64");
  });
  const message = ExportTraceServiceRequest.decode(ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(input)).finish());
  const read = ExportTraceServiceRequest.toObject(message, { longs: String, enums: Number, bytes: String, defaults: true }) as Json;
  problems.push(...unread(input, read, "request"));
  const resourceSpans = (read.resourceSpans ?? []) as Array<{ resource: { attributes: ProtoKeyValue[] }; scopeSpans: Json[] }>;
  const scopeSpans = resourceSpans.flatMap((r) => r.scopeSpans) as Array<{ scope: { name: string }; spans: Json[] }>;
  return {
    resource: Object.assign({}, ...resourceSpans.map((r) => attributeMap(r.resource.attributes))) as Record<string, AttributeValue>,
    scopes: scopeSpans.map((s) => s.scope.name),
    spans: scopeSpans.flatMap((s) => s.spans).map(decodedSpan),
    problems,
  };
}

function decodedSpan(span: Json): DecodedSpan {
  const hex = (value: unknown) => Buffer.from(String(value), "base64").toString("hex");
  const parent = hex(span.parentSpanId);
  return {
    traceId: hex(span.traceId),
    spanId: hex(span.spanId),
    ...(parent ? { parentSpanId: parent } : {}),
    name: String(span.name),
    kind: Number(span.kind),
    startTimeUnixNano: String(span.startTimeUnixNano),
    endTimeUnixNano: String(span.endTimeUnixNano),
    status: Number((span.status as Json | undefined)?.code ?? 0),
    attributes: attributeMap(span.attributes as ProtoKeyValue[]),
  };
}

/** An AnyValue holds one of its members (a oneof): the one that is set. */
function attributeMap(list: ProtoKeyValue[]): Record<string, AttributeValue> {
  return Object.fromEntries(
    list.map(({ key, value }) => {
      const [member, item] = Object.entries(value)[0] ?? ["", ""];
      return [key, member === "intValue" ? Number(item) : (item as AttributeValue)];
    }),
  );
}

/** Replaces every id field's hex with what `convert` returns. */
function mapIds(value: unknown, convert: (hex: string, field: string, path: string) => string, path = "request"): unknown {
  if (Array.isArray(value)) return value.map((item, i) => mapIds(item, convert, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key in ID_BYTES && typeof item === "string" ? convert(item, key, path) : mapIds(item, convert, `${path}.${key}`),
    ]),
  );
}

/** Paths of the input that the decoded message does not have: fields the schema dropped. */
function unread(sent: unknown, read: unknown, path: string): string[] {
  if (Array.isArray(sent)) return sent.flatMap((item, i) => unread(item, (read as unknown[] | undefined)?.[i], `${path}[${i}]`));
  if (sent === null || typeof sent !== "object") return [];
  return Object.entries(sent).flatMap(([key, item]) => {
    const there = (read as Json | undefined)?.[key];
    return there === undefined ? [`${path}.${key}: not a field of the OTLP schema`] : unread(item, there, `${path}.${key}`);
  });
}
