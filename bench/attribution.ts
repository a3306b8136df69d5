/**
 * What the profile's entries cost when timed directly (Node, this machine), to tell a real cost
 * from a misattributed one: the Worker's Hono app matching a turn's route (the app as
 * `createApp` builds it, every route registered), zod parsing a turn's body, and the `openai`
 * client's work for one streamed call (headers, body encoding, its log details, the stream
 * decoder) over a `fetch` that answers at once from memory, set beside the same bytes read
 * with a plain `fetch` and a line split. `npm run bench:attribution`
 */
import { register } from "node:module";
import OpenAI from "openai";
import { chatChunks } from "../test/node/fake-openai-server.ts";

// The app imports `cloudflare:workers` (the Durable Object classes); Node has no such module, and matching needs none of it.
register(
  `data:text/javascript,${encodeURIComponent(
    'export async function resolve(s, c, next) { return s.startsWith("cloudflare:") ? { url: "data:text/javascript,export class DurableObject {}", shortCircuit: true } : next(s, c); }',
  )}`,
);
const { createApp } = await import("../src/http/app.ts");
const { MessageBody } = await import("../src/http/schemas.ts");
const { Agent, Network } = await import("../src/runtime/index.ts");

/** Microseconds per call of `work`, after a warm-up, as the median of five rounds. */
function perCall(n: number, work: (i: number) => unknown): number {
  const rounds: number[] = [];
  for (let r = 0; r < 6; r++) {
    const start = performance.now();
    for (let i = 0; i < n; i++) work(i);
    if (r > 0) rounds.push(((performance.now() - start) / n) * 1000);
  }
  return rounds.sort((a, b) => a - b)[2]!;
}

async function perCallAsync(n: number, work: () => Promise<unknown>): Promise<number> {
  const rounds: number[] = [];
  for (let r = 0; r < 6; r++) {
    const start = performance.now();
    for (let i = 0; i < n; i++) await work();
    if (r > 0) rounds.push(((performance.now() - start) / n) * 1000);
  }
  return rounds.sort((a, b) => a - b)[2]!;
}

const app = createApp(() => new Network(new Agent({ name: "a", instructions: "x" }), { defaultModel: "m" }));
const router = (app as unknown as { router: { match(method: string, path: string): unknown } }).router;
const built = performance.now();
router.match("POST", "/v1/conversations/warm/messages");
const buildMs = performance.now() - built;
const matchUs = perCall(100_000, (i) => router.match("POST", `/v1/conversations/c${i}/messages`));

const body = { message: "Where is my order A1001? It was charged twice." };
const zodUs = perCall(100_000, () => MessageBody.parse(body));

// One streamed answer of the bench's job, as the fake provider sends it.
const frames = `${chatChunks({ text: "Order A1001 shipped; it was charged twice." }, "m")
  .map((c) => `data: ${JSON.stringify(c)}\n\n`)
  .join("")}data: [DONE]\n\n`;
const answer = () => new Response(frames, { headers: { "content-type": "text/event-stream" } });
const client = new OpenAI({ apiKey: "sk-bench", baseURL: "https://provider.invalid/v1", maxRetries: 0, fetch: async () => answer() });
const messages = Array.from({ length: 40 }, (_, i) => ({
  role: i % 2 ? ("assistant" as const) : ("user" as const),
  content: `message ${i} `.repeat(8),
}));
const viaClient = await perCallAsync(2_000, async () => {
  const stream = await client.chat.completions.create({ model: "m", stream: true, messages });
  for await (const _ of stream);
});
const viaFetch = await perCallAsync(2_000, async () => {
  const res = await (async (_url: string, init: RequestInit) => (JSON.parse(String(init.body)), answer()))(
    "https://provider.invalid/v1/chat/completions",
    {
      method: "POST",
      headers: { authorization: "Bearer sk-bench", "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream: true, messages }),
    },
  );
  for (const line of (await res.text()).split("\n")) if (line.startsWith("data: {")) JSON.parse(line.slice(6));
});

const row = (what: string, us: number, note: string) => console.log(`| ${what} | ${us.toFixed(2)} µs | ${note} |`);
console.log(`Direct timings (Node ${process.version}, this machine; medians of five rounds)\n`);
console.log("| what | per call | note |\n|---|---:|---|");
row("Hono: the app's first match (builds the RegExpRouter matcher, once per isolate)", buildMs * 1000, `${app.routes.length} routes`);
row("Hono: matching POST /v1/conversations/:id/messages", matchUs, "every request after the first");
row("zod: MessageBody.parse of a turn's body", zodUs, "once per turn at the boundary");
row("openai: one streamed call (40 messages sent, one short answer)", viaClient, "the client's whole work but the network");
row("the same bytes with a plain fetch, JSON.stringify and a line split", viaFetch, "what no client can avoid");
row("the openai client's own share of a call", viaClient - viaFetch, "headers, options, log details, the stream decoder");
process.exit(0);
