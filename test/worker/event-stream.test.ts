/**
 * One reader's byte stream of a turn's events (`eventStream`): it reads a batch only when its
 * reader asks, and says it is closed once (the open-stream count is taken back once) however it
 * ends: read to the end, cancelled by the client, let go by the lag bound, or several of those.
 */
import { describe, expect, it } from "vitest";
import { eventStream } from "../../src/conversation/turns/event-stream.ts";
import type { StoredEvent } from "../../src/wire/index.ts";

const event = (id: number): StoredEvent => ({ id, type: "text-delta", delta: `d${id}` });

/** Batches from a list, one per read; counts the reads and the closes, and keeps the lag bound's `disconnect`. */
function source(batches: Array<StoredEvent[] | null>) {
  const seen = { reads: 0, closes: 0, disconnect: () => {} };
  const make = (disconnect: () => void) => {
    seen.disconnect = disconnect;
    return {
      next: () => {
        seen.reads++;
        return batches.shift() ?? null;
      },
      close: () => seen.closes++,
    };
  };
  return { seen, make };
}

describe("a reader's event stream", () => {
  it("reads nothing before its reader asks, then a batch a read", async () => {
    const { seen, make } = source([[event(1)], [event(2)]]);
    const stream = eventStream(make, () => {});
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(seen.reads).toBe(0);
    const reader = stream.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"delta":"d1"');
    expect(seen.reads).toBe(1);
    await reader.cancel();
  });

  it("is closed once when read to its end and then cancelled, or let go after its end", async () => {
    const { seen, make } = source([[event(1)], null]);
    let closed = 0;
    const stream = eventStream(make, () => closed++);
    const text = await new Response(stream).text();
    expect(text).toContain('"delta":"d1"');
    // The lag bound can let a reader go after its stream ended: nothing more happens.
    expect(() => seen.disconnect()).not.toThrow();
    await stream.cancel().catch(() => {});
    expect([closed, seen.closes]).toEqual([1, 1]);
  });

  it("is closed once when let go by the lag bound and then cancelled by its client", async () => {
    const { seen, make } = source([[event(1)]]);
    let closed = 0;
    const stream = eventStream(make, () => closed++);
    const reader = stream.getReader();
    await reader.read();
    seen.disconnect();
    seen.disconnect();
    expect(await reader.read()).toMatchObject({ done: true });
    await reader.cancel();
    expect([closed, seen.closes]).toEqual([1, 1]);
  });

  it("drops a batch that arrives after its client left, and is closed once", async () => {
    let release: (batch: StoredEvent[]) => void = () => {};
    let closes = 0;
    const make = () => ({
      next: () => new Promise<StoredEvent[]>((resolve) => (release = resolve)),
      close: () => closes++,
    });
    let closed = 0;
    const stream = eventStream(make, () => closed++);
    const reader = stream.getReader();
    const pending = reader.read();
    await reader.cancel();
    release([event(1)]);
    expect(await pending).toMatchObject({ done: true });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect([closed, closes]).toEqual([1, 1]);
  });
});
