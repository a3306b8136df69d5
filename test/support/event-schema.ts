/**
 * Every event a test receives is checked against its schema here (`EVENT_SCHEMAS`, the ones the
 * OpenAPI document publishes): an event that breaks its schema fails every test that sees it.
 */
import { EVENT_SCHEMAS } from "../../src/runtime/events.ts";

/** Throws, naming the event and what is wrong, when `event` (less the wire's `id`) is not what its schema says. */
export function checkEvent(event: object): void {
  const { id: _id, sseEvent: _sse, ...data } = event as Record<string, unknown>;
  const schema = EVENT_SCHEMAS[data.type as keyof typeof EVENT_SCHEMAS];
  if (!schema) throw new Error(`an event of no known type: ${JSON.stringify(event).slice(0, 300)}`);
  const parsed = schema.safeParse(data);
  if (!parsed.success)
    throw new Error(`a ${String(data.type)} event breaks its schema: ${parsed.error.message}\n${JSON.stringify(event).slice(0, 500)}`);
}

/** Whether a socket frame carries an event (its `data` is the event, `type` its type). */
export function isEventFrame(frame: { type: string; data?: unknown }): frame is { type: string; data: Record<string, unknown> } {
  return (
    frame.type in EVENT_SCHEMAS &&
    typeof frame.data === "object" &&
    frame.data !== null &&
    (frame.data as { type?: unknown }).type === frame.type
  );
}
