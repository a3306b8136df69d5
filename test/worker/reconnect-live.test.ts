/**
 * A reconnect while the turn still runs, by example: `Last-Event-ID` equal to an event the client
 * already has continues right after it, and one before it gives that event again first; both then
 * follow the live run to its end, agreeing with the original stream event for event.
 */
import { describe, expect, it } from "vitest";
import { parseSse, type ReceivedEvent, readSse } from "../support/sse.ts";
import { scenario } from "../support/scenario.ts";
import { call, postMessage } from "../support/worker.ts";

describe("a reconnect during a running turn", () => {
  it("at an event the client has continues after it; one before it gives that event again, then the same live events", async () => {
    const s = await scenario([{ text: "A slow answer, streamed a few characters at a time over a while.", delayMs: 40, chunkChars: 4 }]);
    const res = await postMessage(s.conversationId, s.tag("hello"));
    expect(res.status).toBe(200);
    const original = readSse(res.body!);
    const head: ReceivedEvent[] = [];
    while (head.filter((e) => e.type === "text-delta").length < 2) head.push((await original.next()).value as ReceivedEvent);
    const at = head.at(-1)!;
    const reconnect = (lastEventId: number) =>
      call(`/v1/conversations/${s.conversationId}/events`, { headers: { "last-event-id": String(lastEventId) } });
    const [same, before] = await Promise.all([reconnect(at.id), reconnect(at.id - 1)]);
    expect([same.status, before.status]).toEqual([200, 200]);
    const rest: ReceivedEvent[] = [];
    for await (const event of original) rest.push(event);
    // The turn was still running when both reconnected: there were events after the one they named.
    expect(rest.length).toBeGreaterThan(3);
    expect(rest.at(-1)).toMatchObject({ type: "done", status: "completed" });
    expect(parseSse(await same.text())).toEqual(rest);
    expect(parseSse(await before.text())).toEqual([at, ...rest]);
  });
});
