import { describe, expect, it } from "vitest";
import { call, scenario } from "../support/worker.ts";

describe("the per-client turn limit (Workers rate-limiting binding)", () => {
  it("answers 429 with Retry-After once a client address has started 600 turns in a minute; other clients go on", async () => {
    const s = await scenario(Array.from({ length: 602 }, () => ({ text: "ok" })));
    const send = (i: number, ip: string) =>
      call(`/v1/conversations/${s.conversationId}-${i}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": ip },
        body: JSON.stringify({ message: s.tag(`turn ${i}`) }),
      });
    const statuses: number[] = [];
    for (let batch = 0; batch < 600; batch += 25) {
      const responses = await Promise.all(Array.from({ length: 25 }, (_, j) => send(batch + j, "203.0.113.7")));
      for (const res of responses) {
        statuses.push(res.status);
        await res.text();
      }
    }
    expect(statuses.every((status) => status === 200)).toBe(true);
    const limited = await send(600, "203.0.113.7");
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("60");
    expect(await limited.json()).toMatchObject({ error: { code: "rate_limited" } });
    const other = await send(601, "203.0.113.8");
    expect(other.status).toBe(200);
    await other.text();
  });
});
