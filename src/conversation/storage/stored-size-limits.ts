import type { HandoffRecord } from "../../runtime/handoff/types.ts";
import type { Message } from "../../runtime/messages.ts";
import type { StoredEvent } from "../../wire/sse.ts";

/**
 * Values are cut before they are written, far below SQLite's 2 MB row limit, so a huge tool
 * output or answer never fails a commit. The cut is marked where the model and clients see it.
 */
export const MAX_STORED_CONTENT = 256 * 1024;

function cut(text: string): string {
  if (text.length <= MAX_STORED_CONTENT) return text;
  return `${text.slice(0, MAX_STORED_CONTENT)}\n[truncated: ${text.length - MAX_STORED_CONTENT} more characters]`;
}

/** A message's text, and an assistant's call arguments (a transfer's reason is the model's to make as long as it likes). */
export function capMessage(message: Message): Message {
  const capped =
    typeof message.content === "string" && message.content.length > MAX_STORED_CONTENT
      ? { ...message, content: cut(message.content) }
      : message;
  if (capped.role !== "assistant" || !capped.toolCalls?.some((call) => call.arguments.length > MAX_STORED_CONTENT)) return capped;
  return { ...capped, toolCalls: capped.toolCalls.map((call) => ({ ...call, arguments: cut(call.arguments) })) };
}

/** A change of hands as the handoffs row, its event and the turn's `done` keep it: its reason cut. */
export function capHandoff<T extends HandoffRecord>(record: T): T {
  return "reason" in record && typeof record.reason === "string" && record.reason.length > MAX_STORED_CONTENT
    ? { ...record, reason: cut(record.reason) }
    : record;
}

export function capEvent(event: StoredEvent): StoredEvent {
  switch (event.type) {
    case "tool-result":
    case "tool-call": {
      const field = event.type === "tool-result" ? "result" : "args";
      const json = JSON.stringify(event[field as keyof typeof event] ?? null);
      return json.length > MAX_STORED_CONTENT ? { ...event, [field]: cut(json) } : event;
    }
    case "handoff":
      return capHandoff(event);
    case "done":
      return { ...event, text: cut(event.text), handoffs: event.handoffs.map(capHandoff) };
    default:
      return event;
  }
}
