import { encodeSse, type StoredEvent } from "./sse.ts";

type Listener = (event: StoredEvent | null) => void;

/**
 * Fans one running turn's events out to any number of readers. The run does not depend on
 * them: a reader that goes away only unsubscribes, and a late reader replays what it missed.
 */
export class TurnBroadcast {
  readonly #events: StoredEvent[] = [];
  readonly #listeners = new Set<Listener>();
  #closed = false;

  publish(event: StoredEvent): void {
    this.#events.push(event);
    for (const listener of this.#listeners) listener(event);
  }

  close(): void {
    this.#closed = true;
    for (const listener of this.#listeners) listener(null);
    this.#listeners.clear();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** An SSE byte stream of the events after `afterId`, then live ones until the turn ends. */
  subscribe(afterId: number, replay: readonly StoredEvent[] = []): ReadableStream<Uint8Array> {
    let listener: Listener | undefined;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        let last = afterId;
        const send = (event: StoredEvent) => {
          if (event.id <= last) return;
          last = event.id;
          controller.enqueue(encodeSse(event));
        };
        for (const event of replay) send(event);
        for (const event of this.#events) send(event);
        if (this.#closed) {
          controller.close();
          return;
        }
        listener = (event) => {
          if (event) send(event);
          else controller.close();
        };
        this.#listeners.add(listener);
      },
      cancel: () => {
        if (listener) this.#listeners.delete(listener);
      },
    });
  }
}

/** A finished turn's stored events as an SSE stream. */
export function replayStream(events: readonly StoredEvent[]): ReadableStream<Uint8Array> {
  const finished = new TurnBroadcast();
  finished.close();
  return finished.subscribe(0, events);
}
