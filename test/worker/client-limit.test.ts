import { describe, expect, it } from "vitest";
import { underMutation } from "../support/mutation.ts";
import { inOneWindow } from "../support/rate-window.ts";
import { call, scenario } from "../support/worker.ts";

describe("the per-client turn limit (Workers rate-limiting binding)", () => {
  it.skipIf(underMutation())(
    "answers 429 with Retry-After once a client address has started exactly 600 turns in a window; other clients go on",
    async () => {
      const s = await scenario(Array.from({ length: 1400 }, () => ({ text: "ok" })));
      const send = (i: number, ip: string) =>
        call(`/v1/conversations/${s.conversationId}-${i}/messages`, {
          method: "POST",
          headers: { "content-type": "application/json", "cf-connecting-ip": ip },
          body: JSON.stringify({ message: s.tag(`turn ${i}`) }),
        });
      const { accepted, limited } = await inOneWindow(async (attempt) => {
        let accepted = 0;
        let limited: Response | undefined;
        for (let batch = 0; !limited && batch < 650; batch += 25) {
          const responses = await Promise.all(
            Array.from({ length: 25 }, (_, j) => send(1000 * attempt + batch + j, `203.0.113.${7 + attempt}`)),
          );
          for (const res of responses) {
            if (res.status === 429 && !limited) limited = res;
            else if (res.status === 200) accepted++;
            else expect(res.status).toBe(429);
            if (res !== limited) await res.text();
          }
        }
        return { accepted, limited };
      });
      expect(accepted).toBe(600);
      expect(limited!.headers.get("retry-after")).toBe("60");
      expect(await limited!.json()).toMatchObject({ error: { code: "rate_limited" } });
      const other = await send(2999, "203.0.113.9");
      expect(other.status).toBe(200);
      await other.text();
    },
    200_000,
  ); // Up to 650 turns (seen at 8-40 s on a shared machine); when the clock cuts the count, again from the next window.
});
