/** Pages of a long history: the newest by default, cursors backwards, each page a valid history on its own. */
import { describe, expect, it } from "vitest";
import { findHistoryProblem } from "../../src/runtime/messages.ts";
import type { Message } from "../../src/runtime/index.ts";
import { pageOfHistory } from "../../src/conversation/storage/history-page.ts";
import { call, chat, scenario } from "../support/worker.ts";

const turn = (n: number, withTool = false): Message[] => [
  { role: "user", content: `q${n}` },
  ...(withTool
    ? ([
        { role: "assistant", agent: "a", content: null, toolCalls: [{ id: `c${n}`, name: "t", arguments: "{}" }] },
        { role: "tool", toolCallId: `c${n}`, name: "t", content: "r", isError: false },
      ] as Message[])
    : []),
  { role: "assistant", agent: "a", content: `a${n}` },
];

describe("a page of the history", () => {
  const history = [0, 1, 2, 3, 4].flatMap((n) => turn(n, n === 2));

  it("is the newest messages by default, starting at a user message, with the cursor of the page before", () => {
    expect(pageOfHistory(history, 3)).toEqual({ messages: history.slice(10), page: { start: 10, end: 12, total: 12, previous: 10 } });
    expect(pageOfHistory(history, 3, 10).page).toEqual({ start: 8, end: 10, total: 12, previous: 8 });
    expect(pageOfHistory(history).page).toEqual({ start: 0, end: 12, total: 12, previous: null });
    // A page whose first place falls on a user message starts there: the whole of that turn fits.
    expect(pageOfHistory(history, 4).page).toEqual({ start: 8, end: 12, total: 12, previous: 8 });
  });

  it("comes whole when one turn is longer than the limit, and each page is a valid history", () => {
    expect(pageOfHistory(history, 2, 8).page).toEqual({ start: 4, end: 8, total: 12, previous: 4 });
    for (let before = history.length; before > 0; ) {
      const { messages, page } = pageOfHistory(history, 2, before);
      expect(findHistoryProblem(messages)).toBeNull();
      before = page.previous ?? 0;
    }
  });
});

describe("GET /v1/conversations/:id and /ui-messages, paged", () => {
  it("take ?limit= and ?before=, and refuse a bad page with a message that says what to fix", async () => {
    const s = await scenario([{ text: "one" }, { text: "two" }, { text: "three" }]);
    for (const q of ["first", "second", "third"]) await chat(s.conversationId, s.tag(q));
    const newest = (await (await call(`/v1/conversations/${s.conversationId}?limit=2`)).json()) as { messages: Message[]; page: unknown };
    expect(newest.messages.map((m) => m.content)).toEqual([s.tag("third"), "three"]);
    expect(newest.page).toEqual({ start: 4, end: 6, total: 6, previous: 4 });
    const older = (await (await call(`/v1/conversations/${s.conversationId}?limit=2&before=4`)).json()) as { messages: Message[] };
    expect(older.messages.map((m) => m.content)).toEqual([s.tag("second"), "two"]);

    const ui = await call(`/v1/conversations/${s.conversationId}/ui-messages?limit=2&before=4`);
    expect([ui.headers.get("x-page-start"), ui.headers.get("x-page-total"), ui.headers.get("x-page-previous")]).toEqual(["2", "6", "2"]);
    expect(((await ui.json()) as Array<{ id: string }>).map((m) => m.id)).toEqual(["msg-2", "msg-3"]);
    // The first page has nothing before it: no x-page-previous.
    const first = await call(`/v1/conversations/${s.conversationId}/ui-messages?limit=2&before=2`);
    expect([first.headers.get("x-page-start"), first.headers.has("x-page-previous")]).toEqual(["0", false]);

    const bad = await call(`/v1/conversations/${s.conversationId}?limit=0`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain("`limit` is at least 1.");
  });

  it("show the step awaiting approval on the newest page only", async () => {
    const s = await scenario([
      { text: "one" },
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "refund" }) }] },
      { toolCalls: [{ id: "rf", name: "refund", arguments: JSON.stringify({ orderId: "A1001", amountUsd: 10 }) }] },
    ]);
    await chat(s.conversationId, s.tag("first"));
    expect((await chat(s.conversationId, s.tag("refund A1001"))).at(-1)).toMatchObject({ status: "awaiting_approval" });
    const newest = await call(`/v1/conversations/${s.conversationId}/ui-messages?limit=2`);
    const start = newest.headers.get("x-page-start")!;
    expect(await newest.text()).toContain('"approval-requested"');
    const older = await call(`/v1/conversations/${s.conversationId}/ui-messages?limit=2&before=${start}`);
    expect(older.headers.get("x-page-start")).toBe("0");
    const body = await older.text();
    expect(body).toContain("one");
    expect(body).not.toContain("approval");
  });
});
