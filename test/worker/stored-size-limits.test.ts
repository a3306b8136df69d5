/** What is cut before it is stored: at most MAX_STORED_CONTENT characters kept, the cut marked; nothing at the limit itself. */
import { describe, expect, it } from "vitest";
import { MAX_STORED_CONTENT, capEvent, capMessage } from "../../src/conversation/storage/stored-size-limits.ts";
import type { StoredEvent } from "../../src/wire/index.ts";

const done = (text: string): StoredEvent => ({
  id: 1,
  type: "done",
  agent: "triage",
  status: "completed",
  text,
  handoffs: [],
  handoffCount: 0,
});

describe("stored size limits", () => {
  it("keep a text of exactly the limit whole, and cut one character more with a mark saying how much went", () => {
    const atLimit = "x".repeat(MAX_STORED_CONTENT);
    expect(capEvent(done(atLimit))).toMatchObject({ text: atLimit });
    expect(capMessage({ role: "user", content: atLimit })).toEqual({ role: "user", content: atLimit });
    expect(capEvent(done(`${atLimit}y`))).toMatchObject({ text: `${atLimit}\n[truncated: 1 more characters]` });
    expect(capMessage({ role: "user", content: `${atLimit}yz` })).toEqual({
      role: "user",
      content: `${atLimit}\n[truncated: 2 more characters]`,
    });
  });

  it("cut an assistant's call arguments past the limit, and leave its other calls' as they are", () => {
    const long = `{"note":"${"n".repeat(MAX_STORED_CONTENT)}"}`;
    const calls = [
      { id: "a", name: "lookup_order", arguments: '{"orderId":"A1001"}' },
      { id: "b", name: "write_note", arguments: long },
    ];
    expect(capMessage({ role: "assistant", agent: "triage", content: "", toolCalls: calls })).toEqual({
      role: "assistant",
      agent: "triage",
      content: "",
      toolCalls: [calls[0], { ...calls[1], arguments: `${long.slice(0, MAX_STORED_CONTENT)}\n[truncated: 11 more characters]` }],
    });
  });
});
