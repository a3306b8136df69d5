/** A conversation's WebSocket opened through the Worker's fetch handler in workerd, its frames collected. */
import { expect } from "vitest";
import { checkEvent, isEventFrame } from "./event-schema.ts";
import { call } from "./worker.ts";

export interface Frame {
  id?: number;
  type: string;
  data: Record<string, unknown>;
}

/** Opens the socket through the Worker's fetch handler and collects its frames. */
export async function openSocket(conversationId: string, query = "", headers: Record<string, string> = {}) {
  const res = await call(`/v1/conversations/${conversationId}/socket${query}`, { headers: { upgrade: "websocket", ...headers } });
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const frames: Frame[] = [];
  const waiters: Array<() => void> = [];
  ws.addEventListener("message", (event) => {
    const frame = JSON.parse(event.data as string) as Frame;
    if (isEventFrame(frame)) checkEvent(frame.data);
    frames.push(frame);
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    ws,
    frames,
    /** Waits until a frame matches. */
    async until(match: (frame: Frame) => boolean, what: string): Promise<Frame> {
      const deadline = Date.now() + 8_000;
      for (;;) {
        const found = frames.find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no frame for ${what}; got ${JSON.stringify(frames.map((f) => f.type))}`);
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), new Promise((resolve) => setTimeout(resolve, 100))]);
      }
    },
    send: (frame: unknown) => ws.send(JSON.stringify(frame)),
  };
}
