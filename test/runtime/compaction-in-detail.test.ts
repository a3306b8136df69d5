/**
 * Compaction in its detail: the size estimate, what the summarizing model is sent (a plain
 * transcript, no tools, the summary so far), how history is chunked at turn starts, where the
 * cut falls, and what the summary calls cost the turn.
 */
import { describe, expect, it } from "vitest";
import { chooseCut, compactedView, estimateTokens, summarize } from "../../src/runtime/compaction.ts";
import { Agent, type Message, type Model, type ModelRequest, Network } from "../../src/runtime/index.ts";
import { MemoryStore } from "../support/scripted-model.ts";
import { eventsOfTurn, ofType } from "../support/run.ts";

const history: Message[] = [
  { role: "user", content: "refund A1" },
  {
    role: "assistant",
    agent: "billing",
    content: "Looking.",
    toolCalls: [
      { id: "l", name: "lookup", arguments: '{"id":"A1"}' },
      { id: "x", name: "refund", arguments: "{}" },
    ],
  },
  { role: "tool", toolCallId: "l", name: "lookup", content: "charged twice", isError: false },
  { role: "tool", toolCallId: "x", name: "refund", content: "declined", isError: true },
  { role: "system", agent: "billing", content: "appended prompt" },
  { role: "assistant", agent: "billing", content: null },
  { role: "user", content: "thanks" },
];

/** A model that answers every summary call with the next text, recording each request. */
function summarizer(texts: string[]): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    async *stream(request) {
      requests.push(request);
      yield { type: "text-delta", delta: `  ${texts.shift() ?? ""}  ` };
      yield { type: "finish", finishReason: "stop", usage: { inputTokens: 7, outputTokens: 2 } };
    },
  };
}

const base = { agent: "billing", model: "small", settings: {}, signal: new AbortController().signal };

describe("the size estimate", () => {
  it("counts instructions, tool specs, contents, assistant calls and 16 characters a message, at four characters a token", () => {
    const tools = [{ name: "t", description: "d", parameters: {} }];
    const calls = JSON.stringify(history[1]!.role === "assistant" ? history[1]!.toolCalls : []).length;
    const chars = 5 + JSON.stringify(tools).length + (9 + 16) + (8 + calls + 16) + (13 + 16);
    expect(estimateTokens("abcde", history.slice(0, 3), tools)).toBe(Math.ceil(chars / 4));
    expect(estimateTokens("", [], [])).toBe(1);
    expect(estimateTokens("", [{ role: "assistant", agent: "a", content: null }], [])).toBe(Math.ceil((2 + 2 + 16) / 4));
  });
});

describe("summarizing", () => {
  it("sends a plain transcript with no tools, and trims the answer", async () => {
    const model = summarizer(["the user wants A1 refunded"]);
    const result = await summarize(model, base, undefined, history, 10_000);
    expect(result).toEqual({ summary: "the user wants A1 refunded", calls: 1, inputTokens: 7, outputTokens: 2 });
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]).toMatchObject({
      agent: "billing",
      model: "small",
      tools: [],
      instructions: expect.stringMatching(/^Summarize the conversation so far/),
    });
    expect(model.requests[0]!.messages).toEqual([
      {
        role: "user",
        content: [
          "Conversation to summarize:",
          "User: refund A1",
          'billing: Looking. [called lookup({"id":"A1"}), refund({})]',
          "Result of lookup: charged twice",
          "Result of refund (error): declined",
          "Note: appended prompt",
          "billing: ",
          "User: thanks",
        ].join("\n"),
      },
    ]);
  });

  it("chunks at turn starts when a chunk would pass its size, carrying the summary so far; an empty answer keeps it", async () => {
    const model = summarizer(["first part", "", "third part"]);
    const turns: Message[] = Array.from(
      { length: 6 },
      (_, i): Message => (i % 2 ? { role: "assistant", agent: "a", content: "x".repeat(40) } : { role: "user", content: "y".repeat(40) }),
    );
    const result = await summarize(model, base, "earlier", turns, 30);
    expect(result).toEqual({ summary: "third part", calls: 3, inputTokens: 21, outputTokens: 6 });
    expect(model.requests.map((r) => r.messages[0])).toEqual([
      { role: "system", agent: "compaction", content: "Summary so far: earlier" },
      { role: "system", agent: "compaction", content: "Summary so far: first part" },
      { role: "system", agent: "compaction", content: "Summary so far: first part" },
    ]);
    expect(model.requests.map((r) => r.messages[1]!.content!.split("\n").length)).toEqual([3, 3, 3]);
  });
});

describe("chunk boundaries", () => {
  const user: Message = { role: "user", content: "y".repeat(40) };
  const reply: Message = { role: "assistant", agent: "a", content: "x".repeat(40) };
  const size = (m: Message) => estimateTokens("", [m], []);

  it("cut only at a turn start, only once something is gathered, and only past the chunk's size", async () => {
    const exactly = size(user) + size(reply) + size(user);
    expect((await summarize(summarizer(["s"]), base, undefined, [user, reply, user, reply], exactly)).calls).toBe(1);
    expect((await summarize(summarizer(["s", "t"]), base, undefined, [user, reply, user, reply], exactly - 1)).calls).toBe(2);
    const long: Message = { role: "assistant", agent: "a", content: "x".repeat(400) };
    expect((await summarize(summarizer(["s"]), base, undefined, [user, long], size(user))).calls).toBe(1);
    expect((await summarize(summarizer(["s"]), base, undefined, [{ role: "user", content: "y".repeat(400) }, reply], 5)).calls).toBe(1);
  });
});

describe("summarizing nothing", () => {
  it("makes no call and keeps no summary", async () => {
    const model = summarizer([]);
    expect(await summarize(model, base, undefined, [], 100)).toEqual({ summary: "", calls: 0, inputTokens: 0, outputTokens: 0 });
    expect(model.requests).toEqual([]);
  });
});

describe("where the cut falls", () => {
  it("keeps the last keepTurns turns when they fit, fewer when they do not, and at least the last turn", () => {
    const starts = [0, 6];
    expect(chooseCut(history, 2, () => true)).toBe(starts[0]);
    expect(chooseCut(history, 2, (cut) => cut >= 6)).toBe(6);
    expect(chooseCut(history, 5, () => false)).toBe(6);
    expect(chooseCut([{ role: "assistant", agent: "a", content: "no turns" }], 3, () => true)).toBe(0);
  });

  it("shows the summary in place of what it replaces", () => {
    expect(compactedView(history, { replaces: 6, summary: "S" })).toEqual([
      { role: "system", agent: "compaction", content: "Summary of the earlier conversation: S" },
      history[6],
    ]);
    expect(compactedView(history, undefined)).toBe(history);
  });
});

describe("a turn that compacts", () => {
  it("summarizes with the network's summarizeModel, counts the summary calls in the turn's usage, and sends the compacted view", async () => {
    const requests: ModelRequest[] = [];
    const model: Model = {
      async *stream(request) {
        requests.push(request);
        yield { type: "text-delta", delta: request.instructions.startsWith("Summarize") ? "what happened" : "answer" };
        yield { type: "finish", finishReason: "stop", usage: { inputTokens: 100, outputTokens: 10 } };
      },
    };
    const long: Message[] = Array.from(
      { length: 30 },
      (_, i): Message =>
        i % 2 ? { role: "assistant", agent: "solo", content: "a".repeat(200) } : { role: "user", content: "q".repeat(200) },
    );
    const net = new Network(new Agent({ name: "solo", instructions: "x", contextBudget: 600 }), {
      defaultModel: "m",
      compaction: { keepTurns: 2, summarizeModel: "cheap" },
    });
    const store = new MemoryStore("solo");
    store.history = long;
    const events = await eventsOfTurn(net, model, { store, conversation: store.conversation(), input: { kind: "message", text: "now" } });
    const summaries = requests.filter((r) => r.instructions.startsWith("Summarize"));
    expect(summaries.length).toBeGreaterThan(0);
    expect(summaries.every((r) => r.model === "cheap" && r.tools.length === 0)).toBe(true);
    const answer = requests.at(-1)!;
    expect(answer.model).toBe("m");
    expect(answer.messages[0]).toEqual({
      role: "system",
      agent: "compaction",
      content: "Summary of the earlier conversation: what happened",
    });
    const [compaction] = ofType(events, "compaction");
    // The last two turns are kept: the one before "now" (messages 28-29) and "now" itself.
    expect(compaction).toEqual({ type: "compaction", agent: "solo", replaced: 28, kept: 3, summaryChars: "what happened".length });
    expect(answer.messages.slice(1)).toEqual(store.history.slice(28, 31));
    const done = ofType(events, "done")[0]!;
    expect(done.usage).toEqual({
      modelCalls: summaries.length + 1,
      inputTokens: 100 * (summaries.length + 1),
      outputTokens: 10 * (summaries.length + 1),
      toolCalls: 0,
    });
    expect(store.commits.find((c) => c.compaction)?.compaction).toEqual({ replaces: 28, summary: "what happened" });
  });
});
