import { describe, expect, it } from "vitest";
import { providerModel, step } from "../support/model-step.ts";
import { scenario } from "../support/scenario.ts";

type Delta = Record<string, unknown>;
const base = { id: "chatcmpl-q", object: "chat.completion.chunk", created: 1, model: "m" };
const chunk = (delta: Delta, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  ...base,
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});
const sse = (...chunks: unknown[]) => `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`;
const call = (fields: Record<string, unknown>) => ({ tool_calls: [fields] });

/** Streams a hand-made provider answer through the real client and the adapter. */
async function parse(body: string) {
  const s = await scenario([{ raw: body }]);
  const result = await step(providerModel(), s.tag("quirk"));
  expect(result.error).toBeUndefined();
  return result;
}

describe("the Chat Completions parser accepts streams as providers send them", () => {
  it("arguments split over many chunks", async () => {
    const args = '{"location": "San Francisco, CA"}';
    const r = await parse(
      sse(
        chunk(call({ index: 0, id: "c1", type: "function", function: { name: "weather", arguments: "" } })),
        ...[...args].map((ch) => chunk(call({ index: 0, function: { arguments: ch } }))),
        chunk({}, "tool_calls"),
      ),
    );
    expect(r.toolCalls).toEqual([{ id: "c1", name: "weather", arguments: args }]);
  });

  it("a whole tool call in one chunk, and several tool calls in one chunk", async () => {
    const r = await parse(
      sse(
        chunk({
          tool_calls: [
            { index: 0, id: "a", type: "function", function: { name: "weather", arguments: '{"location":"Paris"}' } },
            { index: 1, id: "b", type: "function", function: { name: "weather", arguments: '{"location":"Rome"}' } },
          ],
        }),
        chunk({}, "tool_calls"),
      ),
    );
    expect(r.toolCalls.map((c) => [c.id, c.arguments])).toEqual([
      ["a", '{"location":"Paris"}'],
      ["b", '{"location":"Rome"}'],
    ]);
  });

  it("a tool call id only on its first chunk, or repeated as an empty string", async () => {
    const r = await parse(
      sse(
        chunk(call({ index: 0, id: "first", function: { name: "weather", arguments: '{"loc' } })),
        chunk(call({ index: 0, id: "", function: { arguments: 'ation":"Oslo"}' } })),
        chunk({}, "tool_calls"),
      ),
    );
    expect(r.toolCalls).toEqual([{ id: "first", name: "weather", arguments: '{"location":"Oslo"}' }]);
  });

  it("index missing where there is one tool call", async () => {
    const r = await parse(
      sse(
        chunk(call({ id: "m1", function: { name: "weather", arguments: '{"loca' } })),
        chunk(call({ function: { arguments: 'tion":"Lima"}' } })),
        chunk({}, "tool_calls"),
      ),
    );
    expect(r.toolCalls).toEqual([{ id: "m1", name: "weather", arguments: '{"location":"Lima"}' }]);
  });

  it('content: null beside tool calls and content: "" chunks', async () => {
    const r = await parse(
      sse(
        chunk({ role: "assistant", content: "" }),
        chunk({ content: null, ...call({ index: 0, id: "n", function: { name: "weather", arguments: "{}" } }) }),
        chunk({ content: "" }),
        chunk({}, "tool_calls"),
      ),
    );
    expect(r.text).toBe("");
    expect(r.deltas).toBe(0);
    expect(r.toolCalls).toHaveLength(1);
  });

  it("a finish_reason of stop although tool calls were sent still runs the calls", async () => {
    const r = await parse(sse(chunk(call({ index: 0, id: "s", function: { name: "weather", arguments: "{}" } })), chunk({}, "stop")));
    expect(r.toolCalls).toHaveLength(1);
    expect(r.finish?.finishReason).toBe("stop");
  });

  it("a final usage chunk with an empty choices array", async () => {
    const r = await parse(
      sse(chunk({ content: "hi" }), chunk({}, "stop"), { ...base, choices: [], usage: { prompt_tokens: 3, completion_tokens: 1 } }),
    );
    expect(r.finish).toMatchObject({ finishReason: "stop", usage: { inputTokens: 3, outputTokens: 1 } });
  });

  describe("no finish_reason on any chunk, closed by [DONE] (a finished answer)", () => {
    it("text, then usage in a chunk with an empty choices array: finish reason stop, usage kept", async () => {
      const r = await parse(
        sse(chunk({ role: "assistant", content: "All " }), chunk({ content: "done." }), {
          ...base,
          choices: [],
          usage: { prompt_tokens: 9, completion_tokens: 2 },
        }),
      );
      expect(r.text).toBe("All done.");
      expect(r.finish).toEqual({ type: "finish", finishReason: "stop", usage: { inputTokens: 9, outputTokens: 2 } });
    });

    it("tool calls: finish reason tool_calls, and the calls run", async () => {
      const r = await parse(sse(chunk(call({ index: 0, id: "t", function: { name: "weather", arguments: '{"location":"Oslo"}' } }))));
      expect(r.toolCalls).toEqual([{ id: "t", name: "weather", arguments: '{"location":"Oslo"}' }]);
      expect(r.finish?.finishReason).toBe("tool_calls");
    });

    it("[DONE] with no line break after it, or with no space after data:", async () => {
      for (const done of ["data: [DONE]", "data:[DONE]\n\n", "data: [DONE]\r\n\r\n"]) {
        const r = await parse(`data: ${JSON.stringify(chunk({ content: "ok" }))}\n\n${done}`);
        expect(r.finish?.finishReason).toBe("stop");
      }
    });

    it("a stream with neither a finish reason nor [DONE] was cut short: model_stream_interrupted, nothing kept", async () => {
      const s = await scenario([
        { raw: `data: ${JSON.stringify(chunk(call({ index: 0, id: "c", function: { name: "weather", arguments: "{}" } })))}\n\n` },
      ]);
      const r = await step(providerModel(), s.tag("cut"));
      expect(r.error?.code).toBe("model_stream_interrupted");
      expect(r.toolCalls).toEqual([]);
    });

    it("[DONE] inside a chunk's text is text, not the end", async () => {
      const s = await scenario([{ raw: `data: ${JSON.stringify(chunk({ content: "data: [DONE]" }))}\n\n` }]);
      const r = await step(providerModel(), s.tag("inside"));
      expect(r.text).toBe("data: [DONE]");
      expect(r.error?.code).toBe("model_stream_interrupted");
    });
  });

  it("reasoning_content and reasoning fields are ignored, not errors", async () => {
    const r = await parse(
      sse(
        chunk({ reasoning_content: "thinking..." }),
        chunk({ reasoning: "more thinking" }),
        chunk({ content: "answer" }),
        chunk({}, "stop"),
      ),
    );
    expect(r.text).toBe("answer");
  });

  it("choices beyond the first are ignored", async () => {
    const two = (a: Delta, b: Delta, finish: string | null = null) => ({
      ...base,
      choices: [
        { index: 0, delta: a, finish_reason: finish },
        { index: 1, delta: b, finish_reason: finish },
      ],
    });
    const r = await parse(sse(two({ content: "first" }, { content: "second" }), two({}, {}, "stop")));
    expect(r.text).toBe("first");
  });

  it("tool names padded with whitespace are passed on as sent: the run loop trims them (test/runtime/rules-that-hold.test.ts)", async () => {
    const r = await parse(
      sse(chunk(call({ index: 0, id: "w", function: { name: " weather\n", arguments: "{}" } })), chunk({}, "tool_calls")),
    );
    expect(r.toolCalls[0]!.name).toBe(" weather\n");
  });
});
