/**
 * Streaming latency through the Worker: a fake OpenAI-compatible server streams 200 tokens at a
 * fixed pace; the same stream is read directly from the fake server and through `wrangler dev`'s
 * chat endpoint, alternating, and the first byte, the last byte and the gaps between tokens are
 * compared side by side.
 */
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { median } from "./loop-overhead.ts";

const TOKENS = 200;
const PACE_MS = 5;

interface Timing {
  firstMs: number;
  lastMs: number;
  gaps: number[];
}

/** Reads a response body, timing the first and last token-bearing chunk and the gaps between them. */
async function time(start: number, response: Response, isToken: (text: string) => boolean): Promise<Timing> {
  const stamps: number[] = [];
  const decoder = new TextDecoder();
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    const text = decoder.decode(bytes, { stream: true });
    const tokens = text.split("\n\n").filter(isToken).length;
    for (let i = 0; i < tokens; i++) stamps.push(performance.now() - start);
  }
  const gaps = stamps.slice(1).map((t, i) => t - stamps[i]!);
  return { firstMs: stamps[0] ?? Number.NaN, lastMs: stamps.at(-1) ?? Number.NaN, gaps };
}

export async function streamLatencyRows(persistTo: string, runs = 8): Promise<string[]> {
  const fake = await startFakeOpenAI();
  const dev = await startWranglerDev({ persistTo, vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench" } });
  // Four characters a token: the fake server sends four characters a chunk, so one chunk is one token.
  const text = Array.from({ length: TOKENS }, (_, i) => `t${String(i).padStart(3, "0")}`).join("");
  const direct: Timing[] = [];
  const worker: Timing[] = [];
  // wrangler dev's own cost for a request that does nothing: the floor under every figure through it.
  const floor: number[] = [];
  try {
    for (let i = 0; i < 21; i++) {
      const start = performance.now();
      await (await fetch(`${dev.url}/v1/agents`)).text();
      if (i > 0) floor.push(performance.now() - start);
    }
    // One conversation answered from one script; the direct reads each get a script of their own.
    const workerScript = "scnlatencyworker";
    await fetch(`${fake.url}/__scenarios`, {
      method: "POST",
      body: JSON.stringify({ id: workerScript, answers: Array.from({ length: runs }, () => ({ text, delayMs: PACE_MS })) }),
    });
    for (let run = 0; run < runs; run++) {
      const id = `scnlatencydirect${run}`;
      await fetch(`${fake.url}/__scenarios`, { method: "POST", body: JSON.stringify({ id, answers: [{ text, delayMs: PACE_MS }] }) });
      let start = performance.now();
      const straight = await fetch(`${fake.url}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: id }] }),
      });
      direct.push(await time(start, straight, (frame) => frame.includes('"content":"t')));
      start = performance.now();
      const message = run === 0 ? `hello [${workerScript}]` : `message ${run}`;
      const through = await fetch(`${dev.url}/v1/conversations/latency/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message }),
      });
      worker.push(await time(start, through, (frame) => frame.includes("event: text-delta")));
    }
  } finally {
    await dev.stop();
    await fake.close();
  }
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  const spread = (values: number[]) => `${ms(median(values))} (${ms(Math.min(...values))}–${ms(Math.max(...values))})`;
  const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)]!;
  const gapsOf = (timings: Timing[]) => timings.flatMap((t) => t.gaps);
  const warm = (timings: Timing[]) => timings.slice(1); // the first run pays the Durable Object's cold start
  return [
    `Streaming latency: ${TOKENS} tokens at ${PACE_MS} ms each, ${runs} runs per path, alternating (one conversation: the first run, which starts its Durable Object, is left out; medians, min–max)`,
    "",
    "| | read directly from the fake server | through wrangler dev's chat endpoint | added |",
    "|---|---:|---:|---:|",
    `| time to first token | ${spread(warm(direct).map((t) => t.firstMs))} | ${spread(warm(worker).map((t) => t.firstMs))} | ${ms(median(warm(worker).map((t) => t.firstMs)) - median(warm(direct).map((t) => t.firstMs)))} (target < 5 ms) |`,
    `| time to last token | ${spread(warm(direct).map((t) => t.lastMs))} | ${spread(warm(worker).map((t) => t.lastMs))} | ${ms(median(warm(worker).map((t) => t.lastMs)) - median(warm(direct).map((t) => t.lastMs)))} |`,
    `| gap between tokens, median / p95 | ${ms(median(gapsOf(warm(direct))))} / ${ms(p95(gapsOf(warm(direct))))} | ${ms(median(gapsOf(warm(worker))))} / ${ms(p95(gapsOf(warm(worker))))} | ${ms(median(gapsOf(warm(worker))) - median(gapsOf(warm(direct))))} (target: none) |`,
    `| token events seen (of ${TOKENS}) | ${median(direct.map((t) => t.gaps.length + 1))} | ${median(worker.map((t) => t.gaps.length + 1))} | |`,
    `| a request that does nothing (GET /v1/agents) | | ${spread(floor)} | wrangler dev's own floor |`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "handoff-bench-latency-"));
  try {
    console.log((await streamLatencyRows(dir)).join("\n"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
