/**
 * The embedding router: the agents' examples embedded once (the first message a router sees waits
 * for them; every later one reuses them), each agent's centroid their normalized mean, and a
 * message routed to the nearest centroid by cosine. Its confidence is the margin between the two
 * most probable agents of a softmax over the cosines, comparable to the lexical router's. The
 * vectors come from any OpenAI-compatible `/v1/embeddings` through the `openai` package, or from
 * the Workers AI binding (`env.AI.run` with a `@cf/baai/bge-*` model).
 */
import type OpenAI from "openai";
import type { RouteRequest, RouterOptions } from "../runtime/ports/router-port.ts";

/** Vectors for texts, in their order. */
export type Embed = (texts: string[]) => Promise<number[][]>;

/** The `openai` client's embeddings (floats asked for, so no base64 is decoded). */
export function openAIEmbeddings(client: OpenAI, model: string): Embed {
  return async (texts) => {
    const response = await client.embeddings.create({ model, input: texts, encoding_format: "float" });
    return [...response.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
  };
}

/** What the Workers AI binding is asked of: `run(model, { text })` answering `{ data }`. */
export interface WorkersAiBinding {
  run(model: string, input: { text: string[] }): Promise<unknown>;
}

/** Workers AI's embeddings (`@cf/baai/bge-small-en-v1.5` by default). */
export function workersAiEmbeddings(ai: WorkersAiBinding, model = "@cf/baai/bge-small-en-v1.5"): Embed {
  return async (texts) => {
    const answer = (await ai.run(model, { text: texts })) as { data?: number[][] };
    if (!Array.isArray(answer.data) || answer.data.length !== texts.length)
      throw new TypeError(`Workers AI's ${model} answered no vector per text.`);
    return answer.data;
  };
}

/** How sharp the softmax over cosines is: cosines differ by tenths, probabilities should by more. */
const TEMPERATURE = 0.05;

/** An embedding router as an agent's or a network's `router` option. */
export function embeddingRouter(options: {
  embed: Embed;
  examples: ReadonlyArray<{ text: string; label: string }>;
  threshold?: number;
  name?: string;
}): RouterOptions {
  let centroids: Promise<Map<string, number[]>> | undefined;
  const load = () => {
    if (!centroids) {
      centroids = centroidsOf(options.embed, options.examples);
      // One that failed is computed again next time.
      centroids.catch(() => (centroids = undefined));
    }
    return centroids;
  };
  return {
    router: {
      route: async (request: RouteRequest) => nearest(await load(), (await options.embed([request.message]))[0]!, request.targets),
    },
    threshold: options.threshold ?? 0.9,
    name: options.name ?? "embedding",
  };
}

async function centroidsOf(embed: Embed, examples: ReadonlyArray<{ text: string; label: string }>): Promise<Map<string, number[]>> {
  if (examples.length === 0) throw new TypeError("An embedding router needs examples.");
  const vectors = await embed(examples.map((e) => e.text));
  const sums = new Map<string, number[]>();
  examples.forEach((e, i) => {
    const v = unit(vectors[i]!);
    const sum = sums.get(e.label) ?? new Array<number>(v.length).fill(0);
    sums.set(
      e.label,
      sum.map((x, j) => x + v[j]!),
    );
  });
  return new Map([...sums].map(([label, sum]) => [label, unit(sum)]));
}

/** The nearest of the targets' centroids; null when no target has examples. */
function nearest(centroids: Map<string, number[]>, vector: number[], targets: readonly string[]) {
  const v = unit(vector);
  const scored = targets.flatMap((t) => {
    const c = centroids.get(t);
    return c ? [{ agent: t, cosine: c.reduce((s, x, j) => s + x * v[j]!, 0) }] : [];
  });
  if (scored.length === 0) return null;
  const max = Math.max(...scored.map((s) => s.cosine));
  const weights = scored.map((s) => Math.exp((s.cosine - max) / TEMPERATURE));
  const total = weights.reduce((a, b) => a + b, 0);
  const ranked = scored.map((s, i) => ({ ...s, p: weights[i]! / total })).sort((a, b) => b.p - a.p);
  return { agent: ranked[0]!.agent, confidence: ranked[0]!.p - (ranked[1]?.p ?? 0) };
}

function unit(v: readonly number[]): number[] {
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}
