// The conversation's WebSocket (GET /v1/conversations/:id/socket), when the Worker offers it: every
// event of every turn — a turn the schedule ran, a person's message, a turn from another tab —
// as {id, type, data} frames. The page draws each event once, whichever way it came first. A frame
// with no id is in no turn's log (a background delegation's work as it runs): `onUnlogged` draws it.

/**
 * Opens the socket for `id` from `after()` (the last event drawn) and hands each event to `onEvent`;
 * reconnects with backoff while `current()` is still `id`. `token` goes as ?token= (a browser's
 * WebSocket sends no Authorization). Resolves false when the socket could not be opened at all.
 */
export function liveSocket({ id, token, after, onEvent, onUnlogged, current }) {
  let attempt = 0;
  let socket = null;
  const connect = () =>
    new Promise((resolve) => {
      const scheme = location.protocol === "https:" ? "wss" : "ws";
      const query = new URLSearchParams({ after: String(after()), ...(token ? { token } : {}) });
      socket = new WebSocket(`${scheme}://${location.host}/v1/conversations/${id}/socket?${query}`);
      let opened = false;
      socket.addEventListener("open", () => {
        opened = true;
        attempt = 0;
        resolve(true);
      });
      socket.addEventListener("message", (message) => {
        const frame = JSON.parse(message.data);
        if (typeof frame.id === "number") onEvent(frame.id, frame.data);
        else if (frame.type === "delegated") onUnlogged?.(frame.data);
      });
      socket.addEventListener("close", () => {
        if (!opened) resolve(false);
        if (current() !== id || !opened) return;
        attempt++;
        setTimeout(() => current() === id && connect(), Math.min(10_000, 250 * 2 ** attempt));
      });
    });
  return {
    opened: connect(),
    close: () => socket?.close(),
  };
}
