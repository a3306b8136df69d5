/**
 * A minimal client of workerd's inspector (the Chrome DevTools Protocol) through wrangler dev's
 * inspector port: for CPU profiles (profile.ts) and the live heap (live-heap.ts).
 */
import type { WranglerDev } from "../test/e2e/wrangler-dev.ts";

/** Node's WebSocket (undici's) takes a non-standard init with headers, which the DOM's typing does not know. */
const NodeWebSocket = WebSocket as unknown as new (url: string, init: { headers: Record<string, string> }) => WebSocket;

/**
 * A CDP client over the inspector's WebSocket: `send` answers with the method's result, or `{ error }`; `on` hears a
 * method's events (one listener a method).
 */
export async function inspector(dev: WranglerDev) {
  const targets = (await (await fetch(`http://127.0.0.1:${dev.inspectorPort}/json`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  // wrangler's inspector proxy accepts a local Origin only (Node's WebSocket sends none unless told: undici's `headers`).
  const socket = new NodeWebSocket(targets[0]!.webSocketDebuggerUrl, { headers: { origin: "http://127.0.0.1" } });
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve);
    socket.addEventListener("error", reject);
  });
  let next = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  const listeners = new Map<string, (params: unknown) => void>();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      method?: string;
      params?: unknown;
      result?: unknown;
      error?: { message: string };
    };
    if (message.id === undefined) return message.method && listeners.get(message.method)?.(message.params);
    waiting.get(message.id)?.(message.error ? { error: message.error.message } : message.result);
    waiting.delete(message.id);
  });
  const send = <T>(method: string, params: object = {}): Promise<T> =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve as (result: unknown) => void);
      socket.send(JSON.stringify({ id, method, params }));
    });
  const on = <T>(method: string, listener: (params: T) => void) => listeners.set(method, listener as (params: unknown) => void);
  return { send, on, close: () => socket.close() };
}
