/**
 * A routed first answer, timed: the example bank network (examples/bank) answering a customer's
 * first message, once with its lexical router (examples/bank/router.json, the threshold the
 * example ships with) handing over before any model call, once through triage's model call as
 * without a router. The model is this project's `OpenAIModel` over the real `openai` client,
 * against the fake OpenAI-compatible provider set to a provider's pace: a first token after
 * `--first-token` ms (400) and a chunk every `--pace` ms (15). The queries are Banking77 test
 * queries the router is sure of (it routes them); the sides alternate query by query. Prints time
 * to the specialist's first token and to the turn's end, p50 and p95, and the tokens each turn
 * spent (≈ characters / 4 of every request sent to the provider and every answer it streamed).
 *
 *   npm run bench:routed -- [--queries 40] [--first-token 400] [--pace 15]
 */
import OpenAI from "openai";
import { readQueries } from "../examples/bank/csv.ts";
import bankNetwork from "../examples/bank/network.ts";
import routerModel from "../examples/bank/router.json" with { type: "json" };
import { OpenAIModel } from "../src/models/index.ts";
import { LexicalRouter } from "../src/router/lexical-router.ts";
import { lexicalRouter, withRouter } from "../src/router/index.ts";
import { type Network, newConversation, runTurn } from "../src/runtime/index.ts";
import { MemoryStore } from "../src/testing/index.ts";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { median, p95 } from "./loop-overhead.ts";

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
};
const QUERIES = arg("queries", 40);
const FIRST_TOKEN_MS = arg("first-token", 400);
const PACE_MS = arg("pace", 15);
const THRESHOLD = 0.9;

const fake = await startFakeOpenAI();
const model = new OpenAIModel(new OpenAI({ baseURL: `${fake.url}/v1`, apiKey: "sk-bench", maxRetries: 0 }));
const lexical = new LexicalRouter(routerModel as ConstructorParameters<typeof LexicalRouter>[0]);
const routed = withRouter(bankNetwork(), lexicalRouter(lexical, { threshold: THRESHOLD }));
const unrouted = bankNetwork();

/** A specialist's answer of about 60 tokens. */
const ANSWER = "I can see what happened on your account, and here is what we will do about it next. ".repeat(4);
const paced = { firstTokenMs: FIRST_TOKEN_MS, delayMs: PACE_MS };

interface Turn {
  firstMs: number;
  totalMs: number;
  tokens: number;
  modelCalls: number;
}

async function script(id: string, answers: unknown[]): Promise<void> {
  await fetch(`${fake.url}/__scenarios`, { method: "POST", body: JSON.stringify({ id, answers }) });
}

/**
 * Tokens a turn spent, estimated as a provider would bill them: characters / 4 of every request
 * the provider was sent (messages and tools) and of every answer it was scripted to stream.
 */
async function tokensOf(id: string, answers: Array<{ text?: string; toolCalls?: unknown[] }>): Promise<number> {
  const { requests } = (await (await fetch(`${fake.url}/__scenarios/${id}`)).json()) as {
    requests: Array<{ messages: unknown; tools?: unknown }>;
  };
  const sent = requests.reduce((n, r) => n + JSON.stringify([r.messages, r.tools ?? []]).length, 0);
  const streamed = answers.reduce((n, a) => n + (a.text?.length ?? 0) + (a.toolCalls ? JSON.stringify(a.toolCalls).length : 0), 0);
  return Math.round((sent + streamed) / 4);
}

async function turn(network: Network, text: string, id: string, answers: Array<{ text?: string; toolCalls?: unknown[] }>): Promise<Turn> {
  await script(id, answers);
  const started = performance.now();
  let firstMs = 0;
  let modelCalls = 0;
  for await (const event of runTurn({
    conversationId: id,
    network,
    model,
    store: new MemoryStore("triage"),
    conversation: newConversation("triage"),
    input: { kind: "message", text },
  })) {
    if (event.type === "text-delta" && !firstMs) firstMs = performance.now() - started;
    if (event.type === "error") throw new Error(`${id}: ${event.message}`);
    if (event.type === "done") modelCalls = event.usage?.modelCalls ?? 0;
  }
  const totalMs = performance.now() - started;
  return { firstMs, totalMs, tokens: await tokensOf(id, answers), modelCalls };
}

// The queries the router hands over itself: the rows this bench is about.
const queries = readQueries("examples/bank/test.csv")
  .map((q, i) => ({ text: `${q.text} [scnrouted${i}r]`, i }))
  .filter((q) => lexical.route(q.text).confidence >= THRESHOLD)
  .slice(0, QUERIES);
const sides = { routed: [] as Turn[], model: [] as Turn[] };
for (const [n, { text, i }] of queries.entries()) {
  const target = lexical.route(text).label;
  const answer = { text: ANSWER, ...paced };
  const transfer = {
    toolCalls: [{ name: `transfer_to_${target}`, arguments: JSON.stringify({ reason: "the customer asks about it" }) }],
    ...paced,
  };
  const r = await turn(routed, text, `scnrouted${i}r`, [answer]);
  const m = await turn(unrouted, text.replace(/r]$/, "m]"), `scnrouted${i}m`, [transfer, answer]);
  // Two warm-up turns a side, not counted.
  if (n < 2) continue;
  sides.routed.push(r);
  sides.model.push(m);
}
await fake.close();

const f = (v: number) => `${v.toFixed(0)} ms`;
const row = (name: string, pick: (t: Turn) => number, unit: (v: number) => string) => {
  const [r, m] = [sides.routed.map(pick), sides.model.map(pick)];
  console.log(
    `| ${name} | ${unit(median(r))} / ${unit(p95(r))} | ${unit(median(m))} / ${unit(p95(m))} | ${(median(r) / median(m)).toFixed(2)}× |`,
  );
};
console.log(
  `Banking77 first messages the router is sure of (confidence ≥ ${THRESHOLD}), ${sides.routed.length} a side, alternating; provider: first token after ${FIRST_TOKEN_MS} ms, a chunk every ${PACE_MS} ms (Node ${process.version})\n`,
);
console.log("| measure (p50 / p95) | routed by the router | through triage's model call | routed / model |\n|---|---|---|---|");
row("time to the specialist's first token", (t) => t.firstMs, f);
row("whole turn", (t) => t.totalMs, f);
row(
  "model calls in the turn",
  (t) => t.modelCalls,
  (v) => String(v),
);
row(
  "tokens in the turn (≈ chars / 4, in and out)",
  (t) => t.tokens,
  (v) => v.toFixed(0),
);
process.exit(0);
