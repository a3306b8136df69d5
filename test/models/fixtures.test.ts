import { describe, expect, inject, it } from "vitest";
import { providerModel, step } from "../support/model-step.ts";
import { scenario } from "../support/scenario.ts";

interface Expected {
  api: "chat.completions" | "responses";
  content?: string | null;
  text?: string | null;
  finish_reason?: string;
  tool_calls: Array<{ id: string; call_id?: string; name: string; arguments: string }>;
  usage: { prompt_tokens?: number; completion_tokens?: number; input_tokens?: number; output_tokens?: number };
}

const fixtures = Object.entries(inject("providerFixtures")) as Array<[string, { sse: string; expected: Expected }]>;

describe("recorded provider streams through the real openai client and this runtime's parsers", () => {
  it("has the fixtures", () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(8);
  });

  it.each(fixtures)("%s", async (_name, { sse, expected }) => {
    const s = await scenario([{ raw: sse }]);
    const api = expected.api === "responses" ? "responses" : "chat";
    const result = await step(providerModel(), s.tag("go"), { settings: { api } });
    expect(result.error).toBeUndefined();
    expect(result.text).toBe(expected.content ?? expected.text ?? "");
    expect(result.toolCalls).toEqual(expected.tool_calls.map((c) => ({ id: c.call_id ?? c.id, name: c.name, arguments: c.arguments })));
    expect(result.finish).toMatchObject({
      finishReason: expected.finish_reason ?? (expected.tool_calls.length ? "tool_calls" : "stop"),
      usage: {
        inputTokens: expected.usage.prompt_tokens ?? expected.usage.input_tokens,
        outputTokens: expected.usage.completion_tokens ?? expected.usage.output_tokens,
      },
    });
  });
});
