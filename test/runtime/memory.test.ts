/**
 * The user's memory in the loop, with a host's port kept in a list: what a leg recalls (queried by the user's message)
 * reaches the instructions of the agents that read memory, a handoff's target among them, and never the history; a
 * delegated agent gets it only when it declares it; a tool writes it as far as its agent's declaration allows; a port
 * that fails is a warning, not a failed turn. And the read of a conversation for memories: its transcript and its answer.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import {
  Agent,
  extractMemories,
  type Memory,
  type MemoryPort,
  type Model,
  type ModelEvent,
  type ModelRequest,
  Network,
  type NewMemory,
  rememberTool,
  recallTool,
  type RunEvent,
  runTurn,
  tool,
  transcriptOf,
} from "../../src/runtime/index.ts";
import { parseExtraction } from "../../src/runtime/memory/extraction.ts";
import { MemoryStore as TestingStore } from "../../src/testing/index.ts";

/** A host's memory, in a list: recall gives what it holds, and remembers the query it was asked. */
class ListMemory implements MemoryPort {
  readonly queries: string[] = [];
  readonly kept: NewMemory[] = [];
  constructor(
    readonly held: Memory[] = [],
    readonly failing = false,
  ) {}
  async recall(query: string): Promise<Memory[]> {
    this.queries.push(query);
    if (this.failing) throw new Error("the memory object is unreachable");
    return this.held;
  }
  async remember(memory: NewMemory): Promise<Memory> {
    this.kept.push(memory);
    return { id: `m${this.kept.length}`, ...memory, createdAt: "2026-12-07T10:00:00.000Z" };
  }
}

const FRENCH: Memory = {
  id: "m-fr",
  text: "Prefers to be written to in French",
  type: "preference",
  key: "language",
  source: { conversation: "earlier" },
  createdAt: "2026-12-01T09:00:00.000Z",
};

class AgentModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(readonly scripts: Record<string, (request: ModelRequest) => ModelEvent[]>) {}
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    this.requests.push(request);
    const script = this.scripts[request.agent];
    if (!script) throw new Error(`no script for ${request.agent}`);
    for (const event of script(request)) yield event;
  }
  of(agent: string): ModelRequest[] {
    return this.requests.filter((r) => r.agent === agent);
  }
}

const say = (text: string): ModelEvent[] => [
  { type: "text-delta", delta: text },
  { type: "finish", finishReason: "stop" },
];
const call = (name: string, args: unknown): ModelEvent[] => [
  { type: "tool-call", call: { id: `call-${name}`, name, arguments: JSON.stringify(args) } },
  { type: "finish", finishReason: "tool_calls" },
];
const answered = (request: ModelRequest) => request.messages.at(-1)?.role === "tool";

async function run(network: Network, model: Model, memory?: MemoryPort, text = "My parcel never came") {
  const store = new TestingStore(network.entry.name);
  const events: RunEvent[] = [];
  for await (const event of runTurn({
    conversationId: "c1",
    network,
    model,
    store,
    conversation: store.conversation(),
    input: { kind: "message", text },
    ...(memory ? { memory } : {}),
  }))
    events.push(event);
  return { events, history: store.conversation().history };
}

describe("what a leg recalls", () => {
  it("is queried by the user's message, announced once, and given to the holder and a handoff's target, not the history", async () => {
    const shipping = new Agent({ name: "shipping", instructions: "You ship." });
    const triage = new Agent({ name: "triage", instructions: "You route.", handoffs: [shipping] });
    const model = new AgentModel({
      triage: () => call("transfer_to_shipping", { reason: "parcel" }),
      shipping: () => say("Looking for it."),
    });
    const memory = new ListMemory([FRENCH]);
    const { events, history } = await run(new Network(triage, { defaultModel: "m" }), model, memory);
    expect(memory.queries).toEqual(["My parcel never came"]);
    expect(events.filter((e) => e.type === "memory")).toEqual([
      {
        type: "memory",
        action: "recalled",
        agent: "triage",
        memories: [{ id: "m-fr", text: FRENCH.text, type: "preference", key: "language" }],
      },
    ]);
    for (const request of model.requests) {
      expect(request.instructions).toContain("What you remember of this user");
      expect(request.instructions).toContain("- (preference) Prefers to be written to in French");
    }
    expect(JSON.stringify(history)).not.toContain("French");
  });

  it("reaches no agent that declares `none`, and nothing is recalled when no agent reads memory", async () => {
    const quiet = new Agent({ name: "quiet", instructions: "You answer.", memory: "none" });
    const model = new AgentModel({ quiet: () => say("Hello.") });
    const memory = new ListMemory([FRENCH]);
    const { events } = await run(new Network(quiet, { defaultModel: "m" }), model, memory);
    expect(memory.queries).toEqual([]);
    expect(events.some((e) => e.type === "memory")).toBe(false);
    expect(model.requests[0]!.instructions).toBe("You answer.");
  });

  it("reaches a delegated agent only when it declares it", async () => {
    const plain = new Agent({ name: "plain", instructions: "You check." });
    const declared = new Agent({ name: "declared", instructions: "You check too.", memory: "read" });
    const desk = new Agent({
      name: "desk",
      instructions: "You ask others.",
      tools: [plain.asTool({ name: "ask_plain" }), declared.asTool({ name: "ask_declared" })],
    });
    const model = new AgentModel({
      desk: (r) =>
        answered(r)
          ? say("Both answered.")
          : [...call("ask_plain", { request: "check" }).slice(0, 1), ...call("ask_declared", { request: "check" })],
      plain: () => say("Plain checked."),
      declared: () => say("Declared checked."),
    });
    await run(new Network(desk, { defaultModel: "m" }), model, new ListMemory([FRENCH]));
    expect(model.of("desk")[0]!.instructions).toContain("Prefers to be written to in French");
    expect(model.of("plain")[0]!.instructions).toBe("You check.");
    expect(model.of("declared")[0]!.instructions).toContain("Prefers to be written to in French");
  });

  it("goes on without memory when the port fails: a warning, and the agent answers", async () => {
    const triage = new Agent({ name: "triage", instructions: "You route." });
    const { events } = await run(
      new Network(triage, { defaultModel: "m" }),
      new AgentModel({ triage: () => say("Hi.") }),
      new ListMemory([], true),
    );
    expect(events.find((e) => e.type === "warning")).toMatchObject({ code: "memory_unavailable" });
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
  });
});

describe("what a tool writes", () => {
  const keep = tool({
    name: "keep",
    description: "Keeps a preference.",
    parameters: z.object({}),
    execute: async (_args, ctx) => (await ctx.memory.remember("Prefers email", { type: "preference", key: "contact" })).id,
  });

  it("is kept with where it came from, and streamed as written", async () => {
    const triage = new Agent({ name: "triage", instructions: "You route.", tools: [keep] });
    const memory = new ListMemory();
    const model = new AgentModel({ triage: (r) => (answered(r) ? say("Kept.") : call("keep", {})) });
    const { events } = await run(new Network(triage, { defaultModel: "m" }), model, memory);
    expect(memory.kept).toEqual([
      { text: "Prefers email", type: "preference", key: "contact", source: { conversation: "c1", agent: "triage" } },
    ]);
    expect(events.find((e) => e.type === "memory")).toMatchObject({ action: "written", agent: "triage", memories: [{ id: "m1" }] });
  });

  it("is refused to an agent that only reads, and in a conversation with no memory: an error result the agent reads", async () => {
    for (const [memoryOf, words] of [
      [new ListMemory(), "does not write the user's memory"],
      [undefined, "no signed-in user"],
    ] as const) {
      const reader = new Agent({ name: "reader", instructions: "You read.", tools: [keep, rememberTool()], memory: "read" });
      const model = new AgentModel({ reader: (r) => (answered(r) ? say("Could not.") : call("keep", {})) });
      const { events } = await run(new Network(reader, { defaultModel: "m" }), model, memoryOf);
      const result = events.find((e) => e.type === "tool-result");
      expect(result).toMatchObject({ name: "keep", isError: true });
      expect(JSON.stringify(result)).toContain(words);
      expect(memoryOf?.kept ?? []).toEqual([]);
    }
  });
});

describe("the built-in tools", () => {
  it("recall searches the user's memory further, with the agent's query; remember keeps what the model gives", async () => {
    const triage = new Agent({ name: "triage", instructions: "You route.", tools: [recallTool(), rememberTool()] });
    const memory = new ListMemory([FRENCH]);
    const model = new AgentModel({
      triage: (r) => {
        const results = r.messages.filter((m) => m.role === "tool").length;
        if (results === 0) return call("recall", { query: "language" });
        if (results === 1) return call("remember", { text: "Moved to Lyon", key: "home address" });
        return say("Done.");
      },
    });
    const { events } = await run(new Network(triage, { defaultModel: "m" }), model, memory);
    const [recalled, remembered] = events.filter((e) => e.type === "tool-result");
    expect(memory.queries).toEqual(["My parcel never came", "language"]);
    expect((recalled as { result: unknown }).result).toEqual({
      memories: [{ text: FRENCH.text, type: "preference", since: FRENCH.createdAt }],
    });
    expect(memory.kept.at(-1)).toMatchObject({ text: "Moved to Lyon", type: "fact", key: "home address" });
    expect((remembered as { result: unknown }).result).toEqual({ remembered: "Moved to Lyon", id: "m1" });
    expect(events.find((e) => e.type === "tool-call" && e.name === "remember")).toMatchObject({ said: "Remembered: Moved to Lyon" });
  });
});

describe("reading a conversation for memories", () => {
  const history = [
    { role: "user" as const, content: "My order is A1001" },
    { role: "assistant" as const, agent: "triage", content: "Noted." },
    { role: "user" as const, content: "Write to me in French" },
  ];

  it("numbers what the user and the agents said from where the last read stopped, and keeps only what came from there", async () => {
    expect(transcriptOf(history, 1)).toBe("[1] Agent (triage): Noted.\n[2] User: Write to me in French");
    const model = new AgentModel({
      "memory-extraction": () =>
        say(
          '```json\n{"memories":[{"text":"Their order is A1001","type":"fact","key":"order","message":0},' +
            '{"text":"Prefers French","type":"preference","key":"language","message":2}]}\n```',
        ),
    });
    const base = { model: "m", settings: {}, signal: new AbortController().signal };
    const read = await extractMemories(model, base, history, 1, [FRENCH]);
    expect(read.memories).toEqual([{ text: "Prefers French", type: "preference", key: "language", message: 2 }]);
    expect(model.requests[0]!.messages[0]!.content).toContain("Known already:\n- [language] Prefers to be written to in French");
  });

  it("is refused when the model answers no JSON of the schema, and reads nothing past the end", async () => {
    expect(() => parseExtraction("I found nothing worth keeping.")).toThrow(/did not answer the JSON/);
    expect(parseExtraction('{"memories":[{"text":"A","type":"mood"}]}')).toEqual([{ text: "A", type: "fact" }]);
    const none = new AgentModel({});
    const base = { model: "m", settings: {}, signal: new AbortController().signal };
    expect(await extractMemories(none, base, history, 3, [])).toEqual({ memories: [], inputTokens: 0, outputTokens: 0 });
    expect(none.requests).toEqual([]);
  });
});
