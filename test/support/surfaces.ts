import { vi } from "vitest";
import { call } from "./worker.ts";

/** Captures what the Worker logs, at every level, until `stop()`: log lines are a path a secret could take. */
export function captureLogs(): { lines: string[]; stop(): void } {
  const lines: string[] = [];
  const spies = (["log", "warn", "error", "info"] as const).map((level) =>
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" "))),
  );
  return { lines, stop: () => spies.forEach((spy) => spy.mockRestore()) };
}

/** Everything a conversation shows of itself after its first turn: its view, a replay, its UI messages, its turns and trace. */
export async function conversationSurfaces(conversationId: string): Promise<string[]> {
  const base = `/v1/conversations/${conversationId}`;
  return Promise.all([
    call(base).then((r) => r.text()),
    call(`${base}/events`, { headers: { "last-event-id": "0" } }).then((r) => r.text()),
    call(`${base}/ui-messages`).then((r) => r.text()),
    call(`${base}/turns`).then((r) => r.text()),
    call(`${base}/turns/1/trace`).then((r) => r.text()),
  ]);
}
