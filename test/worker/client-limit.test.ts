import { describe, expect, it } from "vitest";
import { call, scenario } from "../support/worker.ts";

/** The binding's windows are aligned to the clock (epoch minutes), as Cloudflare's are. */
const WINDOW_MS = 60_000;

describe("the per-client turn limit (Workers rate-limiting binding)", () => {
  it("answers 429 with Retry-After once a client address has started exactly 600 turns in a window; other clients go on", async () => {
    const s = await scenario(Array.from({ length: 700 }, () => ({ text: "ok" })));
    const send = (i: number, ip: string) =>
      call(`/v1/conversations/${s.conversationId}-${i}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": ip },
        body: JSON.stringify({ message: s.tag(`turn ${i}`) }),
      });
    // Start early in a window, so the whole count falls in one and the limit is pinned exactly.
    if (Date.now() % WINDOW_MS > 20_000) await new Promise((resolve) => setTimeout(resolve, WINDOW_MS - (Date.now() % WINDOW_MS) + 200));
    const window = Math.floor(Date.now() / WINDOW_MS);
    let accepted = 0;
    let limited: Response | undefined;
    for (let batch = 0; !limited && batch < 650; batch += 25) {
      const responses = await Promise.all(Array.from({ length: 25 }, (_, j) => send(batch + j, "203.0.113.7")));
      for (const res of responses) {
        if (res.status === 429 && !limited) limited = res;
        else if (res.status === 200) accepted++;
        else expect(res.status).toBe(429);
        if (res !== limited) await res.text();
      }
    }
    expect(Math.floor(Date.now() / WINDOW_MS), "the count ran past its window: the machine is too slow for this test").toBe(window);
    expect(accepted).toBe(600);
    expect(limited!.headers.get("retry-after")).toBe("60");
    expect(await limited!.json()).toMatchObject({ error: { code: "rate_limited" } });
    const other = await send(699, "203.0.113.8");
    expect(other.status).toBe(200);
    await other.text();
  }, 100_000); // Up to 40 s waiting for a fresh window, then up to 650 turns (seen at 8-20 s on a shared machine).
});
