/**
 * The admission asks other objects (the client limiter) before a turn starts, so requests
 * interleave there: of messages sent to one idle conversation at the same moment, exactly one
 * starts a turn and the others are refused with run_in_progress, whatever order they resume in.
 */
import { describe, expect, it } from "vitest";
import { call, scenario } from "../support/worker.ts";

describe("messages sent at the same moment", () => {
  it("start one turn; the others are refused with run_in_progress and nothing of theirs is stored", async () => {
    const s = await scenario([{ text: "One answer." }, { text: "Never sent." }, { text: "Never sent." }, { text: "Never sent." }]);
    const send = (i: number) =>
      call(`/v1/conversations/${s.conversationId}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "cf-connecting-ip": `192.0.2.${i}` },
        body: JSON.stringify({ message: s.tag(`message ${i}`) }),
      });
    const responses = await Promise.all([1, 2, 3, 4].map(send));
    const outcomes = await Promise.all(
      responses.map(async (res) =>
        res.status === 200 ? (await res.text(), "started") : ((await res.json()) as { error: { code: string } }).error.code,
      ),
    );
    expect(outcomes.filter((o) => o === "started")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "run_in_progress")).toHaveLength(3);
    const view = (await (await call(`/v1/conversations/${s.conversationId}`)).json()) as {
      turn: number;
      messages: Array<{ role: string }>;
    };
    expect(view.turn).toBe(1);
    expect(view.messages.filter((m) => m.role === "user")).toHaveLength(1);
  });
});
