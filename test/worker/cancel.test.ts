/**
 * POST /v1/conversations/:id/cancel through the Worker, the real `openai` client and the fake
 * provider holding its answer: the stream ends with `done`, status `cancelled`; what was committed
 * stays and nothing of the step in flight is stored; a message sent right after is accepted.
 */
import { describe, expect, it } from "vitest";
import { readSse, type ReceivedEvent } from "../support/sse.ts";
import { call, chat, postMessage, scenario, stored } from "../support/worker.ts";

const cancel = (conversationId: string) => call(`/v1/conversations/${conversationId}/cancel`, { method: "POST" });

describe("cancelling a turn", () => {
  it("ends the stream with done cancelled, keeps what was committed, and takes the next message at once", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { text: "Let me look into that charge for you", holdAfter: 2 },
      { text: "Billing again, after the cancel." },
    ]);
    const res = await postMessage(s.conversationId, s.tag("refund me"));
    const seen: ReceivedEvent[] = [];
    const reader = readSse(res.body!);
    // Read up to the first words of the held answer, keeping the stream open.
    while (seen.at(-1)?.type !== "text-delta") seen.push((await reader.next()).value as ReceivedEvent);
    const cancelled = await cancel(s.conversationId);
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toEqual({ cancelled: true });
    for await (const event of reader) seen.push(event);

    expect(seen.at(-1)).toMatchObject({ type: "done", status: "cancelled", agent: "billing", text: "", handoffCount: 1 });
    expect(seen.filter((e) => e.type === "error")).toEqual([]);
    const view = await stored(s.conversationId);
    expect(view).toMatchObject({ status: "cancelled", activeAgent: "billing", handoffCount: 1 });
    // The handoff's step was committed; the answer in flight was not.
    expect(view.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);

    const next = await chat(s.conversationId, s.tag("are you there?"));
    expect(next[0]).toMatchObject({ type: "run-start", agent: "billing" });
    expect(next.at(-1)).toMatchObject({ type: "done", status: "completed", text: "Billing again, after the cancel." });
  });

  it("answers cancelled: false when nothing is running, and 404 for a conversation that does not exist", async () => {
    const s = await scenario([{ text: "done already" }]);
    await chat(s.conversationId, s.tag("hi"));
    const idle = await cancel(s.conversationId);
    expect(idle.status).toBe(200);
    expect(await idle.json()).toEqual({ cancelled: false });
    const missing = await cancel("nobody-here-at-all");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("conversation_not_found");
  });

  it("closes the AI SDK stream with an abort chunk", async () => {
    const s = await scenario([{ text: "A long answer that will not finish", holdAfter: 2 }]);
    const res = await call(`/v1/conversations/${s.conversationId}/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        id: s.conversationId,
        trigger: "submit-message",
        messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: s.tag("go") }] }],
      }),
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes('"text-delta"')) text += (await reader.read()).value ?? "";
    expect(await (await cancel(s.conversationId)).json()).toEqual({ cancelled: true });
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value;
    const chunks = text
      .split("\n\n")
      .filter((frame) => frame.startsWith("data: "))
      .map((frame) => frame.slice(6));
    expect(chunks.slice(-2)).toEqual(['{"type":"abort","reason":"cancelled"}', "[DONE]"]);
    expect(chunks.at(-3)).toMatch(/^\{"type":"text-end"/);
  });
});
