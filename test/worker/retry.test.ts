/**
 * Retry and edit of the last turn through the Worker (POST …/retry, and useChat's regenerate()):
 * the turn is rewound to where it started — messages, handoffs, counters, context, the active
 * agent — whatever its status, and run again from its user message.
 */
import { env, exports } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { parseSse, readSse } from "../support/sse.ts";
import { call, chat, postMessage, scenario, stored } from "../support/worker.ts";

const args = (value: unknown) => JSON.stringify(value);

async function retry(conversationId: string, message?: string): Promise<Response> {
  return call(`/v1/conversations/${conversationId}/retry`, {
    method: "POST",
    ...(message === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify({ message }) }),
  });
}

async function code(res: Response): Promise<[number, string]> {
  return [res.status, ((await res.json()) as { error: { code: string } }).error.code];
}

describe("retrying the last turn", () => {
  it("returns a turn that handed off twice to the agent that held the conversation before it, and runs it again", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t1", name: "transfer_to_shipping", arguments: args({ reason: "parcel" }) }] },
      { text: "Shipping here." },
      { toolCalls: [{ id: "t2", name: "transfer_to_triage", arguments: args({ reason: "not shipping" }) }] },
      { toolCalls: [{ id: "t3", name: "transfer_to_billing", arguments: args({ reason: "a charge" }) }] },
      { text: "Billing here." },
      { text: "Shipping, second try." },
    ]);
    await chat(s.conversationId, s.tag("where is my parcel"));
    await chat(s.conversationId, s.tag("and a charge"));
    expect(await stored(s.conversationId)).toMatchObject({ activeAgent: "billing", handoffCount: 3 });

    const again = parseSse(await (await retry(s.conversationId)).text());
    expect(again[0]).toMatchObject({ type: "run-start", agent: "shipping" });
    expect(again.at(-1)).toMatchObject({
      type: "done",
      status: "completed",
      agent: "shipping",
      text: "Shipping, second try.",
      handoffCount: 1,
    });
    const view = await stored(s.conversationId);
    expect(view).toMatchObject({ activeAgent: "shipping", handoffCount: 1, status: "completed", turn: 3 });
    // The run again is a turn of its own; the rewound one stays listed as rewound.
    const turns = (await (await call(`/v1/conversations/${s.conversationId}/turns`)).json()) as Array<{ turn: number; status: string }>;
    expect(turns.map((t) => [t.turn, t.status])).toEqual([
      [1, "completed"],
      [2, "rewound"],
      [3, "completed"],
    ]);
    // Its row keeps what the rewind removed (counts, not content): the user's message, two handoffs' calls and answers, the answer.
    await runInDurableObject(env.CONVERSATIONS.getByName(s.conversationId), async (_instance, state) => {
      const row = state.storage.sql.exec<{ rewound: string }>(`SELECT rewound FROM turns WHERE turn = 2`).one();
      expect(JSON.parse(row.rewound)).toEqual({ messages: 6, handoffs: 2, compactions: 0 });
    });
    expect(view.handoffs.map((h) => [h.from, h.to])).toEqual([["triage", "shipping"]]);
    expect(view.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      s.tag("where is my parcel"),
      s.tag("and a charge"),
    ]);
    expect(view.messages.at(-1)).toMatchObject({ role: "assistant", agent: "shipping", content: "Shipping, second try." });
    // The rewound turn's request is never sent again: the retried call sees the first turn and the user message only.
    const { requests } = await s.sent();
    expect(
      requests
        .at(-1)!
        .messages.slice(1)
        .map((m) => m.role),
    ).toEqual(["user", "assistant", "tool", "assistant", "user"]);
  });

  it("rewinds a turn waiting for approval (the suspension goes) and one that was cancelled; an edit replaces the text", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: args({ reason: "refund" }) }] },
      { toolCalls: [{ id: "r", name: "refund", arguments: args({ orderId: "A1001", amountUsd: 129 }) }] },
      { text: "A slow answer that is cut short", holdAfter: 2 },
      { text: "About order A1002, then." },
    ]);
    const first = await chat(s.conversationId, s.tag("refund A1001"));
    expect(first.at(-1)).toMatchObject({ type: "done", status: "awaiting_approval" });

    const res = await retry(s.conversationId);
    const reader = readSse(res.body!);
    let event = (await reader.next()).value;
    while (event?.type !== "text-delta") event = (await reader.next()).value;
    expect(await (await call(`/v1/conversations/${s.conversationId}/cancel`, { method: "POST" })).json()).toEqual({ cancelled: true });
    expect(await stored(s.conversationId)).toMatchObject({
      status: "cancelled",
      activeAgent: "triage",
      handoffCount: 0,
      pendingApprovals: [],
    });

    const edited = parseSse(await (await retry(s.conversationId, s.tag("refund A1002 instead"))).text());
    expect(edited.at(-1)).toMatchObject({ type: "done", status: "completed", text: "About order A1002, then." });
    const view = await stored(s.conversationId);
    expect(view.messages.map((m) => m.content)).toEqual([s.tag("refund A1002 instead"), "About order A1002, then."]);
  });

  it("refuses while a run is going, and when there is no turn to run again", async () => {
    const s = await scenario([{ text: "a long answer", holdAfter: 1 }]);
    const created = (await (await call("/v1/conversations", { method: "POST" })).json()) as { id: string };
    expect(await code(await retry(created.id))).toEqual([409, "nothing_to_retry"]);
    const running = await postMessage(s.conversationId, s.tag("hi"));
    const reader = readSse(running.body!);
    await reader.next();
    expect(await code(await retry(s.conversationId))).toEqual([409, "run_in_progress"]);
    await s.release();
    for await (const _ of reader);
    expect(await code(await retry("nobody-here-either"))).toEqual([404, "conversation_not_found"]);
  });

  it("is what useChat's regenerate() and an edit of the newest message do: one user message and one answer for the turn afterwards", async () => {
    const s = await scenario([{ text: "First answer." }, { text: "Second answer." }, { text: "Third answer." }]);
    const transport = new DefaultChatTransport<UIMessage>({
      api: `https://chat.test/v1/conversations/${s.conversationId}/chat`,
      fetch: (input, init) => exports.default.fetch(new Request(input as RequestInfo, init)),
    });
    const user: UIMessage = { id: "u1", role: "user", parts: [{ type: "text", text: s.tag("hello") }] };
    const read = async (stream: Parameters<typeof readUIMessageStream>[0]["stream"]) => {
      let last: UIMessage | undefined;
      for await (const message of readUIMessageStream<UIMessage>({ stream, terminateOnError: true })) last = message;
      return last!;
    };
    await read(
      await transport.sendMessages({
        chatId: s.conversationId,
        messages: [user],
        trigger: "submit-message",
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    const regenerated = await read(
      await transport.sendMessages({
        chatId: s.conversationId,
        messages: [user],
        trigger: "regenerate-message",
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    expect(regenerated.parts.find((p) => p.type === "text")).toMatchObject({ text: "Second answer." });
    const view = await stored(s.conversationId);
    expect(view.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", s.tag("hello")],
      ["assistant", "Second answer."],
    ]);

    // An edit: sendMessage with the id of the newest user message replaces it and what followed.
    const edited: UIMessage = { ...user, parts: [{ type: "text", text: s.tag("hello, edited") }] };
    const third = await read(
      await transport.sendMessages({
        chatId: s.conversationId,
        messages: [edited],
        trigger: "submit-message",
        messageId: "u1",
        abortSignal: undefined,
      }),
    );
    expect(third.parts.find((p) => p.type === "text")).toMatchObject({ text: "Third answer." });
    expect((await stored(s.conversationId)).messages.map((m) => [m.role, m.content])).toEqual([
      ["user", s.tag("hello, edited")],
      ["assistant", "Third answer."],
    ]);
  });
});
