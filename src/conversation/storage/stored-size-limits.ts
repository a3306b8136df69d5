import type { Message } from "../../runtime/messages.ts";
import type { StoredEvent } from "../../wire/index.ts";

/**
 * Values are cut before they are written, far below SQLite's 2 MB row limit, so a huge tool
 * output or answer never fails a commit. The cut is marked where the model and clients see it.
 */
export const MAX_STORED_CONTENT = 256 * 1024;

function cut(text: string): string {
  if (text.length <= MAX_STORED_CONTENT) return text;
  return `${text.slice(0, MAX_STORED_CONTENT)}\n[truncated: ${text.length - MAX_STORED_CONTENT} more characters]`;
}

export function capMessage(message: Message): Message {
  return typeof message.content === "string" && message.content.length > MAX_STORED_CONTENT
    ? { ...message, content: cut(message.content) }
    : message;
}

export function capEvent(event: StoredEvent): StoredEvent {
  switch (event.type) {
    case "tool-result":
    case "tool-call": {
      const field = event.type === "tool-result" ? "result" : "args";
      const json = JSON.stringify(event[field as keyof typeof event] ?? null);
      return json.length > MAX_STORED_CONTENT ? { ...event, [field]: cut(json) } : event;
    }
    case "done":
      return { ...event, text: cut(event.text) };
    default:
      return event;
  }
}
