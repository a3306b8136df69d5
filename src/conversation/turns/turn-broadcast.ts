import type { StoredEvent } from "../../wire/sse.ts";

/**
 * A reader more than this many bytes of events behind the run, not counting the newest event, is
 * disconnected (it resumes with Last-Event-ID), so one event larger than the bound is no lag.
 */
export const MAX_LAG_BYTES = 8 * 1024 * 1024;

/** Events handed to a reader at once: a reader far behind catches up in chunks of this many. */
const BATCH = 256;

interface Reader {
  /** Bytes of events published up to what this reader has taken. */
  position: number;
  /** Where in the list this reader's next event is. */
  index: number;
  disconnect(): void;
}

/**
 * Holds one running turn's events once, for any number of readers. Readers pull at their own
 * pace from the shared list, so one that never reads costs its place in the list, not a copy;
 * one that falls more than MAX_LAG_BYTES behind is let go. The run does not depend on readers.
 */
export class TurnBroadcast {
  readonly #events: StoredEvent[] = [];
  /** Bytes published up to and including each event (the size of its JSON, near enough). */
  readonly #ends: number[] = [];
  #bytes = 0;
  #closed = false;
  #wake: Array<() => void> = [];
  readonly #readers = new Set<Reader>();
  /** Told each event as it is published (the open WebSockets). */
  readonly #tap: (event: StoredEvent) => void;

  constructor(tap: (event: StoredEvent) => void) {
    this.#tap = tap;
  }

  /** The id of the first event of this leg: stored events before it are read from storage. */
  get firstId(): number | undefined {
    return this.#events[0]?.id;
  }

  publish(event: StoredEvent): void {
    for (const reader of this.#readers) if (this.#bytes - reader.position > MAX_LAG_BYTES) reader.disconnect();
    this.#events.push(event);
    this.#bytes += event.type === "text-delta" ? event.delta.length + 48 : JSON.stringify(event).length;
    this.#ends.push(this.#bytes);
    this.#notify();
    this.#tap(event);
  }

  close(): void {
    this.#closed = true;
    this.#notify();
  }

  /** Registers a reader for the lag bound; returns its removal. */
  track(disconnect: () => void): { reader: Reader; untrack(): void } {
    const reader: Reader = { position: 0, index: 0, disconnect };
    this.#readers.add(reader);
    return { reader, untrack: () => this.#readers.delete(reader) };
  }

  /**
   * The events after `afterId`, waiting for the next one when there are none yet; null once the
   * turn has ended and everything was taken. A reader whose cursor is past every event still gets
   * the terminal event, so its stream ends with `done` or `error` like any other.
   */
  async next(afterId: number, reader: Reader, sawEnd: boolean): Promise<StoredEvent[] | null> {
    for (;;) {
      let start = reader.index;
      while (start < this.#events.length && this.#events[start]!.id <= afterId) start++;
      if (start < this.#events.length) {
        const end = Math.min(start + BATCH, this.#events.length);
        reader.index = end;
        reader.position = this.#ends[end - 1]!;
        return this.#events.slice(start, end);
      }
      reader.index = start;
      if (this.#closed) {
        const last = this.#events.at(-1);
        return !sawEnd && last && (last.type === "done" || last.type === "error") ? [last] : null;
      }
      reader.position = this.#bytes;
      await new Promise<void>((resolve) => this.#wake.push(resolve));
    }
  }

  #notify(): void {
    const waiting = this.#wake;
    this.#wake = [];
    for (const resolve of waiting) resolve();
  }
}
