/**
 * Where the first turn after a restart spends its time (issue 67's cold start), against the next
 * turn: this project's side of the scale bench (bench/peers/ours) on a conversation of 200
 * messages, workerd restarted, then a turn profiled by workerd's inspector, then a warm one.
 *
 *   node bench/cold-profile.ts [--rounds 3]      (npm run bench:cold-profile; SHOW=40 PROFILE_TOP=40 lists more functions)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { oursPost, oursTurn } from "./peer-clients.ts";
import { script } from "./peer.ts";
import { type CpuProfile, profile } from "./profile.ts";

const OURS_CONFIG = new URL("./peers/ours/wrangler.toml", import.meta.url).pathname;
const at = process.argv.indexOf("--rounds");
const ROUNDS = at < 0 ? 3 : Number(process.argv[at + 1]);
const STORED_TURNS = 100;

process.env.X_LOCAL_OBSERVABILITY = "false";
process.env.X_LOCAL_EXPLORER = "false";

const fake = await startFakeOpenAI();
const scratch = mkdtempSync(join(tmpdir(), "bench-cold-"));
const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "1000000" };
const start = () => startWranglerDev({ persistTo: scratch, vars, config: OURS_CONFIG });
/** Sends a message and resolves at the first text delta (`ms` from the send), the rest of the stream read behind it. */
async function firstToken(url: string, conversation: string, text: string): Promise<{ ms: number; rest: Promise<void> }> {
  const start = performance.now();
  const res = await oursPost(url, conversation, text);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!seen.includes("event: text-delta")) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the turn ended with no text: ${seen}`);
    seen += value;
  }
  const ms = performance.now() - start;
  const rest = (async () => {
    while (!(await reader.read()).done);
  })();
  return { ms, rest };
}

const summary = (what: string, ms: number, cpu: CpuProfile) =>
  [
    `${what}: first token ${ms.toFixed(0)} ms; sampled ${cpu.groups.reduce((sum, g) => sum + g.ms, 0).toFixed(1)} ms, unsampled gaps ${cpu.lateMs.toFixed(1)} ms`,
    ...cpu.callers.slice(0, 14).map((g) => `  ${g.name.padEnd(40)} ${g.ms.toFixed(1).padStart(6)} ms`),
    "  functions (self):",
    ...cpu.functions
      .slice(0, Number(process.env.SHOW ?? 12))
      .map((f) => `  ${f.name.slice(0, 90).padEnd(90)} ${f.ms.toFixed(1).padStart(6)} ms`),
  ].join("\n");
try {
  await script(
    fake,
    "scncoldprof",
    Array.from({ length: STORED_TURNS + 2 * ROUNDS + 2 }, (_, i) => ({ text: `Answer number ${i}: all good.` })),
  );
  let dev = await start();
  for (let i = 0; i < STORED_TURNS; i++) await oursTurn(dev.url, "cold", i === 0 ? "hello [scncoldprof]" : `message ${i}`);
  await dev.stop();
  for (let round = 0; round < ROUNDS; round++) {
    dev = await start();
    for (const kind of ["cold", "warm"]) {
      let turn = { ms: 0, rest: Promise.resolve() };
      // Profiled to the first token only: what comes after it (the turn's end, its log lines) is not the wait.
      const cpu = await profile(dev, async () => void (turn = await firstToken(dev.url, "cold", `${kind} ${round}`)));
      await turn.rest;
      console.log(summary(`round ${round + 1}, ${kind}`, turn.ms, cpu));
    }
    await dev.stop();
  }
} finally {
  await fake.close();
  rmSync(scratch, { recursive: true, force: true, maxRetries: 10, retryDelay: 500 });
}
