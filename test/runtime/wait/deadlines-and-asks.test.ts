/**
 * A wait's deadlines (the same for a turn's and a background run's), and what a call that stopped on an ask runs again with:
 * the answers in order, and what it remembered given back instead of run again.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { expiredRequests, expiryDecisions, nextDeadline } from "../../../src/runtime/wait/deadlines.ts";
import { callAsks, InputNeeded } from "../../../src/runtime/wait/asks.ts";
import type { UserRequest } from "../../../src/runtime/wait/requests.ts";

const at = (ms: number) => new Date(ms).toISOString();
const request = (toolCallId: string, expiresAt?: number): UserRequest => ({
  kind: "approval",
  toolCallId,
  name: "refund",
  args: {},
  agent: "billing",
  ...(expiresAt === undefined ? {} : { expiresAt: at(expiresAt) }),
});

describe("a wait's deadlines", () => {
  it("declines as expired only the undecided requests past their deadline, and looks next at the earliest left", () => {
    const wait = {
      requests: [request("a", 1_000), request("b", 5_000), request("c"), request("d", 500)],
      decisions: [{ toolCallId: "d", approved: true }],
    };
    expect(expiredRequests(wait, 2_000).map((r) => r.toolCallId)).toEqual(["a"]);
    expect(expiryDecisions(expiredRequests(wait, 2_000))).toEqual([{ toolCallId: "a", approved: false, reason: "expired" }]);
    expect(nextDeadline(wait)).toBe(1_000);
    expect(nextDeadline({ requests: [request("c")], decisions: [] })).toBeUndefined();
  });

  it("a deadline is past at its very millisecond; a request with none never expires", () => {
    const wait = { requests: [request("a", 1_000), request("c")], decisions: [] };
    expect(expiredRequests(wait, 999)).toEqual([]);
    expect(expiredRequests(wait, 1_000).map((r) => r.toolCallId)).toEqual(["a"]);
    expect(expiredRequests(wait, Number.MAX_SAFE_INTEGER).map((r) => r.toolCallId)).toEqual(["a"]);
  });
});

describe("a call's asks", () => {
  it("stops on the first ask with no answer, and gives the answers back in order when it runs again", async () => {
    const first = callAsks([]);
    await expect(first.ask({ message: "Which day?", schema: z.string() })).rejects.toBeInstanceOf(InputNeeded);
    expect(first.pending).toMatchObject({ kind: "question", message: "Which day?" });
    const again = callAsks(["monday"]);
    expect(await again.ask({ message: "Which day?", schema: z.string() })).toBe("monday");
    expect(again.pending).toBeUndefined();
  });

  it("remembers what ran before the ask it stopped on: run again, the call gets it back and does not run it twice", async () => {
    let calls = 0;
    const offer = () => Promise.resolve({ offer: ++calls });
    const first = callAsks([]);
    expect(await first.remember(offer)).toEqual({ offer: 1 });
    await expect(first.elicit({ server: "s", message: "Take it?", mode: "form", schema: {} })).rejects.toBeInstanceOf(InputNeeded);
    expect(first.recorded).toEqual([{ offer: 1 }]);
    // Run again with the answer and what it remembered: the offer it asked about, without a second call.
    const again = callAsks([{ action: "accept" }], first.recorded);
    expect(await again.remember(offer)).toEqual({ offer: 1 });
    expect(await again.elicit({ server: "s", message: "Take it?", mode: "form", schema: {} })).toEqual({ action: "accept" });
    // Past what it remembered, it runs: the call after the answer is made once.
    expect(await again.remember(offer)).toEqual({ offer: 2 });
    expect(calls).toBe(2);
  });

  it("remembers each value of a run in turn, nothing as null, and gives each back in its place", async () => {
    const first = callAsks([]);
    expect(await first.remember(async () => undefined)).toBeUndefined();
    expect(await first.remember(async () => "second")).toBe("second");
    expect(await first.remember(async () => ({ third: 3 }))).toEqual({ third: 3 });
    expect(first.recorded).toEqual([null, "second", { third: 3 }]);
    const again = callAsks([], first.recorded);
    const never = async () => "ran again";
    expect([await again.remember(never), await again.remember(never), await again.remember(never)]).toEqual([null, "second", { third: 3 }]);
  });

  it("stops a call with an error a tool's author can tell (its name and words), and refuses an ask with no words or a bad deadline", async () => {
    const asks = callAsks([]);
    const stopped = await asks.ask({ message: "Which day?", schema: z.string() }).catch((error: unknown) => error);
    expect(stopped).toMatchObject({ name: "InputNeeded", message: "This call waits for the user's answer." });
    const wordless = callAsks([]);
    for (const question of [undefined, {}, { message: "  " }] as unknown as Array<{ message: string; schema: z.ZodString }>)
      await expect(wordless.ask(question)).rejects.toThrow(new TypeError("ctx.ask needs a message."));
    await expect(wordless.ask({ message: "When?", schema: z.string(), expiresIn: "soon" as "1m" })).rejects.toThrow(/ctx\.ask's expiresIn/);
  });
});
