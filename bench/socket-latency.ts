/**
 * The conversation's WebSocket against its SSE route, side by side through `wrangler dev`: a fake
 * OpenAI-compatible server streams 200 tokens at 5 ms each; turns alternate between a POST that
 * reads the SSE stream and a message frame on an open socket, and the time to first token and the
 * gaps between tokens are compared (medians; the first turn of each, which starts the object, is
 * left out).
 *
 *   npm run bench:socket [-- --runs 10]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { chat, startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { median } from "./loop-overhead.ts";
import { OursSocket, oursTurn, type TurnTiming } from "./peer-clients.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "10" } } });
const RUNS = Number(values.runs);
const TOKENS = 200;
const PACE_MS = 5;

const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-socket-"));
const fake = await startFakeOpenAI();
const dev = await startWranglerDev({
  persistTo,
  vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "100000" },
});
try {
  const text = Array.from({ length: TOKENS }, (_, i) => `t${String(i).padStart(3, "0")}`).join("");
  const script = "scnsocketbench";
  await fetch(`${fake.url}/__scenarios`, {
    method: "POST",
    body: JSON.stringify({ id: script, answers: Array.from({ length: RUNS * 2 + 1 }, () => ({ text, delayMs: PACE_MS })) }),
  });
  // The conversation exists, and the script's id is in its history, before the socket opens (after its last event).
  await chat(dev.url, "socket-bench", `hello [${script}]`);
  const socket = await OursSocket.open(dev.url, "socket-bench");
  const sse: TurnTiming[] = [];
  const ws: TurnTiming[] = [];
  for (let run = 0; run < RUNS; run++) {
    sse.push(await oursTurn(dev.url, "socket-bench", `message ${run}`));
    ws.push(await socket.turn(`socket message ${run}`));
  }
  socket.close();
  const ms = (v: number) => `${v.toFixed(2)} ms`;
  const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)]!;
  const warm = (timings: TurnTiming[]) => timings.slice(1);
  const gaps = (timings: TurnTiming[]) => warm(timings).flatMap((t) => t.gaps);
  const first = (timings: TurnTiming[]) => median(warm(timings).map((t) => t.firstMs));
  console.log(
    `The conversation's WebSocket against its SSE route: ${TOKENS} tokens at ${PACE_MS} ms, ${RUNS} turns each, alternating (medians)`,
  );
  console.log("\n| | SSE (POST …/messages) | WebSocket (a message frame) | socket / SSE |\n|---|---:|---:|---:|");
  console.log(`| time to first token | ${ms(first(sse))} | ${ms(first(ws))} | ${(first(ws) / first(sse)).toFixed(2)}× |`);
  console.log(
    `| gap between tokens, median | ${ms(median(gaps(sse)))} | ${ms(median(gaps(ws)))} | ${(median(gaps(ws)) / median(gaps(sse))).toFixed(2)}× |`,
  );
  console.log(
    `| gap between tokens, p95 | ${ms(p95(gaps(sse)))} | ${ms(p95(gaps(ws)))} | ${(p95(gaps(ws)) / p95(gaps(sse))).toFixed(2)}× |`,
  );
  console.log(
    `| token events seen (of ${TOKENS}) | ${median(sse.map((t) => t.gaps.length + 1))} | ${median(ws.map((t) => t.gaps.length + 1))} | |`,
  );
} finally {
  await dev.stop();
  await fake.close();
  rmSync(persistTo, { recursive: true, force: true });
}
