/**
 * Concurrency: 50 conversations at once through `wrangler dev`, each sending turns back to back
 * against a fake provider that streams at a fixed pace. Turns per second, and turn latency with
 * the provider's own pace subtracted.
 */
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { chat, startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { median } from "./loop-overhead.ts";

const CONVERSATIONS = 50;
const TURNS_EACH = 4;
const TOKENS = 20;
const PACE_MS = 5;

export async function concurrencyRows(persistTo: string): Promise<string[]> {
  const fake = await startFakeOpenAI();
  const dev = await startWranglerDev({ persistTo, vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench" } });
  const text = "word ".repeat(TOKENS).slice(0, TOKENS * 4);
  // The provider's own time for one answer: its paced chunks, measured directly.
  const paceId = "scnpace";
  await fetch(`${fake.url}/__scenarios`, {
    method: "POST",
    body: JSON.stringify({ id: paceId, answers: Array.from({ length: 5 }, () => ({ text, delayMs: PACE_MS })) }),
  });
  const paces: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    await (
      await fetch(`${fake.url}/v1/chat/completions`, {
        method: "POST",
        body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: paceId }] }),
      })
    ).text();
    paces.push(performance.now() - start);
  }
  const pace = median(paces);
  const latencies: number[] = [];
  let failed = 0;
  let elapsed = 0;
  try {
    for (let c = 0; c < CONVERSATIONS; c++) {
      await fetch(`${fake.url}/__scenarios`, {
        method: "POST",
        body: JSON.stringify({ id: `scnconc${c}x`, answers: Array.from({ length: TURNS_EACH + 1 }, () => ({ text, delayMs: PACE_MS })) }),
      });
    }
    // One warm-up turn per conversation starts each Durable Object; then all run at once.
    await Promise.all(Array.from({ length: CONVERSATIONS }, (_, c) => chat(dev.url, `conc-${c}`, `warm up [scnconc${c}x]`)));
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, c) => {
        for (let t = 0; t < TURNS_EACH; t++) {
          const turnStart = performance.now();
          const events = await chat(dev.url, `conc-${c}`, `turn ${t}`);
          if (events.at(-1)?.type === "done") latencies.push(performance.now() - turnStart);
          else failed++;
        }
      }),
    );
    elapsed = performance.now() - start;
  } finally {
    await dev.stop();
    await fake.close();
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  return [
    `Concurrency: ${CONVERSATIONS} conversations at once × ${TURNS_EACH} turns each through wrangler dev; the provider streams ${TOKENS} chunks ${PACE_MS} ms apart (${ms(pace)} per answer, measured directly)`,
    "",
    "| turns | failed | turns per second | p50 turn latency − provider pace | p95 turn latency − provider pace |",
    "|---:|---:|---:|---:|---:|",
    `| ${latencies.length} | ${failed} | ${((latencies.length / elapsed) * 1000).toFixed(1)} | ${ms(at(0.5) - pace)} | ${ms(at(0.95) - pace)} |`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const dir = mkdtempSync(join(tmpdir(), "handoff-bench-concurrency-"));
  try {
    console.log((await concurrencyRows(dir)).join("\n"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
