/**
 * Stored rows' JSON read through schemas at the storage boundary: each kind of row has one schema that describes all of
 * it (`exactly` compiles only when the schema and the named type agree), and a row that does not fit is an error naming
 * the row and the key, never a wrong value passed on. Rows of earlier releases are brought to today's form by their
 * readers (stored-state.ts, event-log.ts) before they are checked. The schemas are built on first use: an isolate that
 * reads no row pays nothing for them.
 */
import * as z from "zod";
import type { CallsInFlight } from "../../runtime/calls-in-flight.ts";
import { exactly } from "../../runtime/schema/exactly.ts";
import { EVENT_SCHEMAS, FileRefSchema, HandoffRecordSchema, type RunEvent, usageTotalsSchema } from "../../runtime/events.ts";
import type { Holding } from "../../runtime/holding.ts";
import type { AssistantMessage, Message, ToolCall, ToolMessage } from "../../runtime/messages.ts";
import type { TurnProgress } from "../../runtime/turn-progress.ts";
import { DecisionSchema } from "../../runtime/wait/decisions.ts";
import { userRequestSchema } from "../../runtime/wait/kinds/index.ts";
import type { Suspension } from "../../runtime/wait/suspension.ts";
import type { Span, SpanKind, TurnTrace } from "../../traces/turn-trace.ts";
import type { StoredEvent } from "../../wire/sse.ts";

/** Reads a row's JSON through its schema; `what` names the row in the error. */
export function readRow<T>(schema: z.ZodType<T>, json: string, what: string): T {
  return fitted(schema, JSON.parse(json), what);
}

/** A stored value (parsed already) through its schema; `what` names the row in the error. */
export function fitted<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new Error(`A stored ${what} does not fit its schema: ${z.prettifyError(new z.ZodError(closest(parsed.error.issues)))}`);
}

/** A union's issues as those of its closest branch (the one with fewest), so the error names the key that is wrong. */
function closest(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues.flatMap((issue) => {
    if (issue.code !== "invalid_union" || issue.errors.length === 0) return [issue];
    const branch = issue.errors.reduce((best, errors) => (errors.length < best.length ? errors : best));
    return closest(branch).map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }));
  });
}

const ToolCallSchema = exactly<ToolCall>()(
  z.lazy(() =>
    z.object({
      id: z.string(),
      name: z.string(),
      arguments: z.string(),
      plan: z.enum(["tool", "transfer", "person", "return", "refused-handoff"]).optional(),
      said: z.string().optional(),
    }),
  ),
);

const assistantShape = () =>
  z.object({
    role: z.literal("assistant"),
    agent: z.string(),
    content: z.string().nullable(),
    toolCalls: z.array(ToolCallSchema).optional(),
  });

const toolShape = () =>
  z.object({
    role: z.literal("tool"),
    toolCallId: z.string(),
    name: z.string(),
    content: z.string(),
    isError: z.boolean(),
    approval: z.object({ approved: z.boolean(), reason: z.string().optional(), message: z.string().optional() }).optional(),
    files: z.array(FileRefSchema).optional(),
  });

export const AssistantMessageSchema = exactly<AssistantMessage>()(z.lazy(assistantShape));
export const ToolMessageSchema = exactly<ToolMessage>()(z.lazy(toolShape));

/** A message of a history (the conversation's, or a delegated run's). */
export const MessageSchema = exactly<Message>()(
  z.lazy(() =>
    z.discriminatedUnion("role", [
      z.object({ role: z.literal("user"), content: z.string(), files: z.array(FileRefSchema).optional() }),
      assistantShape(),
      toolShape(),
      z.object({ role: z.literal("system"), agent: z.string(), content: z.string() }),
    ]),
  ),
);

/** Who holds a conversation (or a delegated run), and what travels with it. */
export const HoldingSchema = exactly<Holding>()(
  z.lazy(() =>
    z.object({
      activeAgent: z.string(),
      handoffCount: z.number(),
      callers: z.array(
        z.object({ caller: z.string(), callee: z.string(), mode: z.enum(["on-answer", "on-call"]), toolCallId: z.string() }),
      ),
      agentStates: z.record(z.string(), z.record(z.string(), z.unknown())),
      context: z.record(z.string(), z.unknown()),
    }),
  ),
);

const TurnProgressSchema = exactly<TurnProgress>()(
  z.lazy(() =>
    z.object({
      handoffs: z.array(HandoffRecordSchema),
      agentSteps: z.number(),
      errorSteps: z.number(),
      stepIndex: z.number(),
      usage: usageTotalsSchema(),
    }),
  ),
);

/** A run's step suspended on its requests (the turn's, or a delegated run's). */
export const SuspensionSchema = exactly<Suspension>()(
  z.lazy(() =>
    z.object({
      assistant: AssistantMessageSchema,
      results: z.array(ToolMessageSchema.nullable()),
      pending: z.array(userRequestSchema()),
      progress: TurnProgressSchema,
      trailing: z.array(MessageSchema),
    }),
  ),
);

/** The decisions a wait has so far. */
export const DecisionsSchema = z.lazy(() => z.array(DecisionSchema));

/** The calls of a step written ahead of its tools. */
export const CallsInFlightSchema = exactly<CallsInFlight>()(
  z.lazy(() => z.object({ assistant: AssistantMessageSchema, started: z.array(z.string()) })),
);

const SPAN_KINDS = [
  "turn",
  "agent",
  "model",
  "tool",
  "request",
  "handoff",
  "refused-handoff",
  "compaction",
  "guardrail",
  "memory",
] as const;

const SpanSchema = exactly<Span>()(
  z.lazy(() =>
    z.object({
      id: z.string(),
      parentId: z.string().nullable(),
      // Traces stored before every kind of request had one span kind named it `approval`.
      kind: z.enum([...SPAN_KINDS, "approval"]).transform((kind): SpanKind => (kind === "approval" ? "request" : kind)),
      name: z.string(),
      start: z.number(),
      end: z.number().nullable(),
      attributes: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    }),
  ),
);

/** A trace's spans (a turn's, or a background run's under the call that started it). */
export const SpansSchema = z.lazy(() => z.array(SpanSchema));

/** A turn's trace, as the ring of traces keeps it. */
export const TraceSchema = exactly<TurnTrace>()(z.lazy(() => z.object({ turn: z.number(), traceId: z.string(), spans: SpansSchema })));

function isEventType(type: string): type is RunEvent["type"] {
  return Object.hasOwn(EVENT_SCHEMAS, type);
}

/** One stored event: its id, and the event as its type's schema describes it. */
export const StoredEventSchema: z.ZodType<StoredEvent> = z.lazy(() =>
  z.looseObject({ id: z.number(), type: z.string() }).transform((row, context): StoredEvent => {
    const { id, ...event } = row;
    if (!isEventType(event.type)) {
      context.issues.push({ code: "custom", message: `\`${event.type}\` is no event's type.`, input: row, path: ["type"] });
      return z.NEVER;
    }
    const parsed = EVENT_SCHEMAS[event.type].safeParse(event);
    if (parsed.success) return { ...parsed.data, id };
    context.issues.push({ code: "custom", message: `event ${id}: ${z.prettifyError(parsed.error)}`, input: row });
    return z.NEVER;
  }),
);

/** An events row of today's form: the events of one turn, in id order. */
export const EventsRowSchema = z.lazy(() => z.array(StoredEventSchema));
