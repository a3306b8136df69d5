/**
 * Stored rows' JSON read through schemas at the storage boundary: a row that does not fit is an error that names its table
 * and what is wrong, never a wrong value passed on. The schemas check what readers rely on (the discriminants, the keys and
 * ids) and keep the rest as it was written: rows of earlier releases carry fields in older forms, which their readers
 * upgrade (stored-state.ts), and a field added later must not make an older row unreadable.
 */
import * as z from "zod";
import type { CallsInFlight } from "../../runtime/calls-in-flight.ts";
import type { Message } from "../../runtime/messages.ts";
import { REQUEST_KINDS, type UserRequest, type UserRequestKind } from "../../runtime/wait/requests.ts";
import type { StoredEvent } from "../../wire/sse.ts";
import type { Span, TurnTrace } from "../../traces/turn-trace.ts";

/** Reads a row's JSON through its schema; `what` names the row in the error. */
export function readRow<T>(schema: z.ZodType<T>, json: string, what: string): T {
  const parsed = schema.safeParse(JSON.parse(json));
  if (!parsed.success) throw new Error(`A stored ${what} does not fit its schema: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

const ToolCallSchema = z.looseObject({ id: z.string(), name: z.string(), arguments: z.string() });

/** A message of a history (the conversation's, or a delegated run's). */
export const MessageSchema = z
  .discriminatedUnion("role", [
    z.looseObject({ role: z.literal("user"), content: z.string() }),
    z.looseObject({
      role: z.literal("assistant"),
      agent: z.string(),
      content: z.string().nullable(),
      toolCalls: z.array(ToolCallSchema).optional(),
    }),
    z.looseObject({ role: z.literal("tool"), toolCallId: z.string(), name: z.string(), content: z.string(), isError: z.boolean() }),
    z.looseObject({ role: z.literal("system"), content: z.string() }),
  ])
  .transform((message) => message as Message);

/** A request to the user, as a wait stores it: its kind and the call it waits on are checked, the rest is the request as asked. */
export const StoredRequestSchema = z
  .looseObject({
    kind: z.enum(REQUEST_KINDS as [UserRequestKind, ...UserRequestKind[]]),
    toolCallId: z.string(),
    name: z.string(),
    agent: z.string(),
  })
  .transform((request) => request as unknown as UserRequest);

/** An events row: the events of one turn, in id order. */
export const EventsRowSchema = z
  .array(z.looseObject({ id: z.number(), type: z.string() }))
  .transform((events) => events as unknown as StoredEvent[]);

/** The calls of a step written ahead of its tools. */
export const CallsInFlightSchema = z
  .looseObject({ assistant: z.looseObject({ role: z.literal("assistant"), agent: z.string() }), started: z.array(z.string()) })
  .transform((calls) => calls as unknown as CallsInFlight);

/** A trace's spans (a turn's, or a background run's under the call that started it). */
export const SpansSchema = z
  .array(z.looseObject({ id: z.string(), parentId: z.string().nullable(), kind: z.string(), name: z.string(), start: z.number() }))
  .transform((spans) => spans as unknown as Span[]);

/** A turn's trace, as the ring of traces keeps it. */
export const TraceSchema = z
  .looseObject({ turn: z.number(), traceId: z.string(), spans: SpansSchema })
  .transform((trace) => trace as unknown as TurnTrace);
