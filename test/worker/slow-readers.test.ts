/**
 * The per-reader lag bound end to end, through the Worker: the Durable Object's events reach the
 * Worker over RPC only as the Worker's own response is read, so a client that stops reading falls
 * behind in the object, which lets it go once it is MAX_LAG_BYTES behind (its stream ends without
 * a terminal event, to be resumed with Last-Event-ID), while a client that reads gets every event.
 * Were the Worker to drain the object whatever its client's pace, the idle client would be sent
 * the whole turn and its `done`.
 */
import { describe, expect, it } from "vitest";
import { MAX_LAG_BYTES, TurnBroadcast } from "../../src/conversation/turns/turn-broadcast.ts";
import { parseSse } from "../support/sse.ts";
import { call, postMessage, scenario } from "../support/worker.ts";

const deltas = (events: ReturnType<typeof parseSse>) => events.flatMap((e) => (e.type === "text-delta" ? [e.delta] : [])).join("");

describe("a client that stops reading", () => {
  it("is let go once it is MAX_LAG_BYTES behind, resumes from its last event, and the reading client gets everything", async () => {
    const text = "x".repeat(MAX_LAG_BYTES + 4 * 2 ** 20);
    const s = await scenario([{ text, chunkChars: 6000, holdAfter: 2 }]);
    const turn = await postMessage(s.conversationId, s.tag("stream a lot"));
    const reading = turn.text();
    const idle = await call(`/v1/conversations/${s.conversationId}/events`);
    expect(idle.status).toBe(200);
    await s.release();

    const read = parseSse(await reading);
    expect(read.at(-1)).toMatchObject({ type: "done", status: "completed" });
    expect(deltas(read)).toBe(text);

    // The idle client's stream ended short: what was in flight when the object let it go, far less than the turn.
    const cut = parseSse(await idle.text());
    expect(cut.some((e) => e.type === "done" || e.type === "error")).toBe(false);
    expect(cut[0]).toMatchObject({ type: "run-start" });
    expect(deltas(cut).length).toBeLessThan(text.length - MAX_LAG_BYTES / 2);
    const resumed = await call(`/v1/conversations/${s.conversationId}/events`, {
      headers: { "last-event-id": String(cut.at(-1)!.id) },
    });
    const rest = parseSse(await resumed.text());
    expect(rest.at(-1)).toMatchObject({ type: "done", status: "completed" });
    expect(deltas(cut) + deltas(rest)).toBe(text);
  });
});

describe("the lag bound", () => {
  const delta = (id: number, text = "x") => ({ id, type: "text-delta" as const, delta: text });

  it("lets go a reader of many small deltas too: each counts its text and its frame", () => {
    const broadcast = new TurnBroadcast(() => {});
    let gone = 0;
    broadcast.track(() => gone++);
    let published = 0;
    while (gone === 0 && published < MAX_LAG_BYTES) broadcast.publish(delta(++published));
    // A one-character delta costs tens of bytes as a frame, so the bound is met after MAX_LAG_BYTES/64 to /32 of them.
    expect(gone).toBe(1);
    expect(published).toBeGreaterThan(MAX_LAG_BYTES / 64);
    expect(published).toBeLessThan(MAX_LAG_BYTES / 32);
  });

  it("does not count the newest event: one event larger than the bound is no lag until another follows", async () => {
    const broadcast = new TurnBroadcast(() => {});
    let gone = 0;
    const { reader } = broadcast.track(() => gone++);
    broadcast.publish(delta(1, "y".repeat(MAX_LAG_BYTES + 1)));
    expect(gone).toBe(0);
    // Read, the reader is level again: the next event is no lag either.
    expect((await broadcast.next(0, reader, false))?.map((e) => e.id)).toEqual([1]);
    broadcast.publish(delta(2));
    expect(gone).toBe(0);
    broadcast.publish(delta(3));
    expect(gone).toBe(0);
  });
});
