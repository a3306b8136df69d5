import { describe, expect, it } from "vitest";
import { Agent, Network, newConversation, type RunEvent, runTurn } from "../../src/runtime/index.ts";
import { findHistoryProblem } from "../../src/runtime/messages.ts";
import { echo } from "../support/networks.ts";
import { providerModel } from "../support/model-step.ts";
import { MemoryStore } from "../support/scripted-model.ts";
import { scenario, type SentRequest } from "../support/scenario.ts";

type ResponsesRequest = SentRequest & {
  api: string;
  input: Array<Record<string, unknown>>;
  store?: boolean;
  reasoning?: { effort: string };
  temperature?: number;
  max_output_tokens?: number;
  parallel_tool_calls?: boolean;
  tools?: Array<Record<string, unknown>>;
};

/** A Responses stream with an encrypted reasoning item before a function call, as reasoning models send. */
function reasoningThenCall(name: string, callId: string, args: string): string {
  let n = 0;
  const frame = (type: string, fields: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: n++ })}\n\n`;
  const reasoning = { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "gAAAAB-opaque" };
  const fc = { id: "fc_1", type: "function_call", call_id: callId, name, arguments: "" };
  return [
    frame("response.created", { response: { id: "resp_1", status: "in_progress", output: [] } }),
    frame("response.output_item.added", { output_index: 0, item: reasoning }),
    frame("response.output_item.done", { output_index: 0, item: reasoning }),
    frame("response.output_item.added", { output_index: 1, item: fc }),
    frame("response.function_call_arguments.delta", { item_id: "fc_1", output_index: 1, delta: args }),
    frame("response.function_call_arguments.done", { item_id: "fc_1", output_index: 1, arguments: args }),
    frame("response.output_item.done", { output_index: 1, item: { ...fc, arguments: args } }),
    frame("response.completed", { response: { id: "resp_1", status: "completed", usage: { input_tokens: 10, output_tokens: 20 } } }),
  ].join("");
}

async function play(network: Network, message: string, defaults = {}) {
  const store = new MemoryStore(network.entry.name);
  const events: RunEvent[] = [];
  for await (const event of runTurn({
    conversationId: "r",
    network,
    model: providerModel({ defaults }),
    store,
    conversation: newConversation(network.entry.name),
    input: { kind: "message", text: message },
  })) {
    events.push(event);
  }
  expect(findHistoryProblem(store.history)).toBeNull();
  return { events, store };
}

describe("the Responses API", () => {
  it("sends instructions as the leading developer input, keeps call_id pairing, and stores nothing server-side", async () => {
    const s = await scenario([
      {
        text: "Checking both.",
        toolCalls: [
          { id: "call_a", name: "echo", arguments: '{"text":"one"}' },
          { id: "call_b", name: "echo", arguments: '{"text":"two"}' },
        ],
      },
      { text: "Both done." },
    ]);
    const solo = new Agent({
      name: "solo",
      instructions: "You are solo.",
      tools: [echo],
      modelSettings: { api: "responses", temperature: 0.2, maxOutputTokens: 300, parallelToolCalls: true },
    });
    const { events } = await play(new Network(solo, { defaultModel: "gpt-5" }), s.tag("run both"));
    expect(events.filter((e) => e.type === "tool-result").map((e) => e.type === "tool-result" && e.result)).toEqual([
      { echoed: "one" },
      { echoed: "two" },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "done", text: "Both done." });

    const [first, second] = (await s.sent()).requests as ResponsesRequest[];
    expect(first).toMatchObject({
      api: "responses",
      store: false,
      stream: true,
      temperature: 0.2,
      max_output_tokens: 300,
      parallel_tool_calls: true,
    });
    expect(first!.input[0]).toEqual({ role: "developer", content: "You are solo." });
    expect(first!.tools![0]).toMatchObject({ type: "function", name: "echo", parameters: { type: "object" } });
    expect(second!.input.slice(1)).toEqual([
      { role: "user", content: s.tag("run both") },
      { role: "assistant", content: "Checking both." },
      { type: "function_call", call_id: "call_a", name: "echo", arguments: '{"text":"one"}' },
      { type: "function_call", call_id: "call_b", name: "echo", arguments: '{"text":"two"}' },
      { type: "function_call_output", call_id: "call_a", output: '{"echoed":"one"}' },
      { type: "function_call_output", call_id: "call_b", output: '{"echoed":"two"}' },
    ]);
  });

  it("hands off between a reasoning model on Responses and a chat model, dropping reasoning items consistently", async () => {
    const s = await scenario([
      { raw: reasoningThenCall("transfer_to_writer", "call_t", '{"reason":"prose"}') },
      { toolCalls: [{ id: "call_back", name: "transfer_to_thinker", arguments: "{}" }] },
      { raw: reasoningThenCall("echo", "call_e", '{"text":"hm"}') },
      { text: "Thought it through." },
    ]);
    const thinker = new Agent({
      name: "thinker",
      instructions: "Think.",
      model: "o-reasoner",
      tools: [echo],
      modelSettings: { api: "responses", reasoningEffort: "low" },
    });
    const writer = new Agent({ name: "writer", instructions: "Write.", model: "gpt-chat", modelSettings: { api: "chat" } });
    thinker.addHandoff(writer);
    writer.addHandoff(thinker);
    const { events } = await play(new Network(thinker, { transferScope: "declared" }), s.tag("go"));
    expect(events.filter((e) => e.type === "handoff").map((e) => e.type === "handoff" && `${e.from}→${e.to}`)).toEqual([
      "thinker→writer",
      "writer→thinker",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "done", agent: "thinker", text: "Thought it through." });

    const requests = (await s.sent()).requests as ResponsesRequest[];
    expect(requests.map((r) => r.api)).toEqual(["responses", "chat", "responses", "responses"]);
    expect(requests[0]).toMatchObject({ model: "o-reasoner", reasoning: { effort: "low" } });
    expect(requests[1]).toMatchObject({ model: "gpt-chat" });
    expect(requests[1]).not.toHaveProperty("reasoning_effort");
    expect(requests[1]!.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool"]);
    for (const request of requests.slice(2)) {
      expect(JSON.stringify(request.input)).not.toContain("reasoning");
      const calls = request.input.filter((i) => i.type === "function_call").map((i) => i.call_id);
      const outputs = request.input.filter((i) => i.type === "function_call_output").map((i) => i.call_id);
      expect(outputs).toEqual(calls);
    }
  });

  it("takes model options from the environment, with an agent's own settings winning", async () => {
    const s = await scenario([{ text: "a" }, { text: "b" }]);
    const plain = new Agent({ name: "plain", instructions: "x", tools: [echo] });
    await play(new Network(plain, { defaultModel: "env-model" }), s.tag("one"), {
      temperature: 0.7,
      maxOutputTokens: 50,
      parallelToolCalls: false,
      reasoningEffort: "high",
    });
    const tuned = new Agent({ name: "tuned", instructions: "x", tools: [echo], modelSettings: { temperature: 0, maxOutputTokens: 9 } });
    await play(new Network(tuned, { defaultModel: "env-model" }), s.tag("two"), { temperature: 0.7, maxOutputTokens: 50 });
    const [envOnly, agentWins] = (await s.sent()).requests as Array<
      ResponsesRequest & { max_completion_tokens?: number; reasoning_effort?: string }
    >;
    expect(envOnly).toMatchObject({
      api: "chat",
      model: "env-model",
      temperature: 0.7,
      max_completion_tokens: 50,
      parallel_tool_calls: false,
      reasoning_effort: "high",
    });
    expect(agentWins).toMatchObject({ temperature: 0, max_completion_tokens: 9 });
  });
});
