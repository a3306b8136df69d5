/**
 * The embedding router: the agents' examples embedded once through the real `openai` client against
 * the fake server's `/v1/embeddings` (OpenAI's wire format), or through a Workers AI binding; a
 * message routed to the nearest agent before any model call; an endpoint that fails leaves the
 * decision to the model.
 */
import { describe, expect, inject, it } from "vitest";
import OpenAI from "openai";
import { embeddingRouter, openAIEmbeddings, workersAiEmbeddings } from "../../src/models/index.ts";
import { Agent, Network, type RouterOptions, type RunEvent } from "../../src/runtime/index.ts";
import { MemoryStore, runScripted } from "../../src/testing/index.ts";

const examples = [
  { text: "I was charged twice for my order", label: "billing" },
  { text: "refund my payment please", label: "billing" },
  { text: "my card has not arrived", label: "cards" },
  { text: "I lost my card", label: "cards" },
];

function network(router: RouterOptions) {
  const billing = new Agent({ name: "billing", description: "Charges.", instructions: "You do billing." });
  const cards = new Agent({ name: "cards", description: "Cards.", instructions: "You do cards." });
  const triage = new Agent({ name: "triage", description: "Routes.", instructions: "You route.", handoffs: [billing, cards], router });
  return new Network(triage, { defaultModel: "m", transferScope: "declared" });
}

const routed = (events: RunEvent[]) => events.find((e): e is Extract<RunEvent, { type: "handoff" }> => e.type === "handoff");

/** Words hashed into 32 dimensions, as the Workers AI binding's fake answers. */
function bagOfWords(text: string): number[] {
  const v = new Array<number>(32).fill(0);
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) v[[...w].reduce((h, c) => (h * 31 + c.charCodeAt(0)) % 32, 7)]! += 1;
  return v;
}

describe("the embedding router", () => {
  it("routes through an OpenAI-compatible embeddings endpoint, the examples embedded once", async () => {
    const client = new OpenAI({ apiKey: "sk-test", baseURL: `${inject("fakeOpenAIUrl")}/v1`, maxRetries: 0 });
    const sent: string[][] = [];
    const embed = openAIEmbeddings(client, "text-embedding-3-small");
    const router = embeddingRouter({ embed: (texts) => (sent.push(texts), embed(texts)), examples, threshold: 0.5 });
    const store = new MemoryStore("triage");
    const first = await runScripted(network(router), "I was charged twice", [{ text: "Billing here." }], { store });
    expect(routed(first.events)).toMatchObject({ to: "billing", router: { name: "embedding" } });
    expect(first.model.requests.map((r) => r.agent)).toEqual(["billing"]);
    const second = await runScripted(network(router), "I lost my card yesterday", [{ text: "Cards here." }]);
    expect(routed(second.events)).toMatchObject({ to: "cards" });
    // The four examples once, then one message a turn.
    expect(sent).toEqual([examples.map((e) => e.text), ["I was charged twice"], ["I lost my card yesterday"]]);
  });

  it("routes through a Workers AI binding, and an endpoint that fails leaves the decision to the model", async () => {
    const asked: Array<{ model: string; text: string[] }> = [];
    const ai = {
      run: async (model: string, input: { text: string[] }) => (
        asked.push({ model, ...input }), { shape: [input.text.length, 32], data: input.text.map(bagOfWords) }
      ),
    };
    const turn = await runScripted(
      network(embeddingRouter({ embed: workersAiEmbeddings(ai), examples, threshold: 0.3 })),
      "refund my payment",
      [{ text: "Billing." }],
    );
    expect(routed(turn.events)).toMatchObject({ to: "billing" });
    expect(asked[0]!.model).toBe("@cf/baai/bge-small-en-v1.5");
    const broken = { run: async () => ({ shape: [0, 0], data: [] }) };
    const fallback = await runScripted(network(embeddingRouter({ embed: workersAiEmbeddings(broken), examples })), "refund my payment", [
      { text: "Triage answers." },
    ]);
    expect(routed(fallback.events)).toBeUndefined();
    expect(fallback.model.requests.map((r) => r.agent)).toEqual(["triage"]);
  });
});
