/**
 * A2A's streaming turn against this project's own SSE turn, side by side through `wrangler dev`
 * (Node compatibility off): a fake OpenAI-compatible server streams 100 tokens at 5 ms each; turns
 * alternate between POST …/messages (SSE of run events) and A2A SendStreamingMessage in the same
 * kind of conversation (SSE of JSON-RPC responses, the text as artifact chunks). Compared: time to
 * the first token, the turn's length, and workerd's CPU per turn (medians and p95; the first turn of
 * each, which starts its object, left out).
 *
 *   npm run bench:a2a [-- --runs 12]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { chat, startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { median, p95 } from "./loop-overhead.ts";
import { oursTurn, type TurnTiming } from "./peer-clients.ts";
import { turnCpuMs } from "./workerd-processes.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "12" } } });
const RUNS = Number(values.runs);
const TOKENS = 100;
const PACE_MS = 5;

/** One A2A streaming turn in `contextId`: when the first artifact chunk (a token) arrived, and when the stream ended. */
async function a2aTurn(url: string, contextId: string, text: string): Promise<TurnTiming> {
  const start = performance.now();
  const res = await fetch(`${url}/v1/a2a`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendStreamingMessage",
      params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", contextId, parts: [{ text }] } },
    }),
  });
  if (!res.ok || !res.body) throw new Error(`a2a: POST answered ${res.status}: ${await res.text()}`);
  const stamps: number[] = [];
  const decoder = new TextDecoder();
  let tail = "";
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
    const now = performance.now();
    const frames = (tail + decoder.decode(bytes, { stream: true })).split("\n\n");
    tail = frames.pop() ?? "";
    for (const frame of frames) {
      if (frame.includes('"artifactUpdate"')) stamps.push(now);
      if (frame.includes('"error"') || frame.includes("TASK_STATE_FAILED")) throw new Error(`a2a: the turn failed: ${frame}`);
    }
  }
  const end = performance.now();
  return { firstMs: (stamps[0] ?? end) - start, totalMs: end - start, gaps: stamps.slice(1).map((t, i) => t - stamps[i]!) };
}

const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-a2a-"));
const fake = await startFakeOpenAI();
const dev = await startWranglerDev({
  persistTo,
  vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "100000" },
});
try {
  const text = Array.from({ length: TOKENS }, (_, i) => `t${String(i).padStart(3, "0")}`).join("");
  const script = "scna2abench";
  await fetch(`${fake.url}/__scenarios`, {
    method: "POST",
    body: JSON.stringify({ id: script, answers: Array.from({ length: RUNS * 2 + 2 }, () => ({ text, delayMs: PACE_MS })) }),
  });
  // Both conversations exist, with the script's id in their history, before the timed turns.
  await chat(dev.url, "a2a-bench-sse", `hello [${script}]`);
  await chat(dev.url, "a2a-bench-a2a", `hello [${script}]`);
  const sse: TurnTiming[] = [];
  const a2a: TurnTiming[] = [];
  const cpu = { sse: [] as number[], a2a: [] as number[] };
  for (let run = 0; run < RUNS; run++) {
    cpu.sse.push(await turnCpuMs(dev, async () => sse.push(await oursTurn(dev.url, "a2a-bench-sse", `message ${run}`))));
    cpu.a2a.push(await turnCpuMs(dev, async () => a2a.push(await a2aTurn(dev.url, "a2a-bench-a2a", `message ${run}`))));
  }
  const ms = (v: number) => `${v.toFixed(1)} ms`;
  const warm = <T>(list: T[]) => list.slice(1);
  const row = (name: string, a: number[], b: number[]) =>
    `| ${name} | ${ms(median(a))} / ${ms(p95(a))} | ${ms(median(b))} / ${ms(p95(b))} | ${(median(b) / median(a)).toFixed(2)}× |`;
  console.log(`A2A SendStreamingMessage against POST …/messages: ${TOKENS} tokens at ${PACE_MS} ms, ${RUNS} turns each, alternating`);
  console.log("\n| median / p95 | SSE (run events) | A2A (JSON-RPC stream) | A2A / SSE (medians) |\n|---|---:|---:|---:|");
  console.log(
    row(
      "time to first token",
      warm(sse).map((t) => t.firstMs),
      warm(a2a).map((t) => t.firstMs),
    ),
  );
  console.log(
    row(
      "whole turn",
      warm(sse).map((t) => t.totalMs),
      warm(a2a).map((t) => t.totalMs),
    ),
  );
  console.log(row("workerd CPU per turn", warm(cpu.sse), warm(cpu.a2a)));
  console.log(
    `| token events seen (of ${TOKENS}) | ${median(sse.map((t) => t.gaps.length + 1))} | ${median(a2a.map((t) => t.gaps.length + 1))} | |`,
  );
} finally {
  await dev.stop();
  await fake.close();
  rmSync(persistTo, { recursive: true, force: true });
}
