/**
 * An anonymous conversation has no memory beyond itself: nothing is recalled into it, a tool that remembers is answered
 * with an error the agent reads (and answers the user from), no read is planned when it goes quiet, and /v1/me/memory
 * is refused to a caller who is no signed-in user.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseSse } from "../support/sse.ts";
import { call, postMessage, scenario } from "../support/worker.ts";

describe("an anonymous conversation", () => {
  it("remembers nothing beyond itself: the remember tool is an error result, and no read is planned", async () => {
    const s = await scenario([
      { toolCalls: [{ name: "remember", arguments: JSON.stringify({ text: "Prefers French" }) }] },
      { text: "I cannot remember that for next time." },
    ]);
    const events = parseSse(await (await postMessage(s.conversationId, s.tag("Remember I prefer French"))).text());
    const result = events.find((e) => e.type === "tool-result");
    expect(result).toMatchObject({ name: "remember", isError: true });
    expect(JSON.stringify(result)).toContain("This conversation has no signed-in user: nothing is remembered beyond it.");
    expect(events.some((e) => e.type === "memory")).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    const planned = await runInDurableObject(env.CONVERSATIONS.getByName(s.conversationId), (_instance, state) =>
      state.storage.sql.exec(`SELECT kind FROM schedule`).toArray(),
    );
    expect(planned).toEqual([]);
  });

  it("has no /v1/me/memory: a caller who is no signed-in user is refused with what to send", async () => {
    const res = await call("/v1/me/memory");
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect([res.status, body.error.code]).toEqual([403, "forbidden"]);
    expect(body.error.message).toContain("sign in as that user");
  });
});
