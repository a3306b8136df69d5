/**
 * What a 1 MB image costs a turn, through `wrangler dev` (R2 local) against the fake provider,
 * side by side with the same turn without it, sides alternating (ABBA): bytes the conversation's
 * Durable Object writes (its turn's count, and its SQLite file's growth: the image is expected to
 * be a reference row there, its bytes in R2), the workerd CPU of the request, and the time to the
 * first text delta (the image is read from R2 and sent to the provider as a data URL first).
 *
 *   npm run bench:files [-- --turns 20]
 */
import { readdirSync, statSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { parseSse, startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { turnCpuMs } from "./workerd-processes.ts";

const IMAGE_BYTES = 1024 * 1024;

/** A PNG's signature and a megabyte after it: the Worker takes it by its signature. */
function image(): string {
  const bytes = Buffer.alloc(IMAGE_BYTES, 7);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return `data:image/png;base64,${bytes.toString("base64")}`;
}

/** Bytes of the Durable Objects' SQLite files under the persisted state. */
function objectBytes(dir: string): number {
  let total = 0;
  // A write-ahead log may go between the listing and the read.
  for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" }))
    if (/\/do\/.*\.sqlite(-wal)?$/.test(`/${entry}`)) total += statSync(join(dir, entry), { throwIfNoEntry: false })?.size ?? 0;
  return total;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function fileRows(turns = 20): Promise<string[]> {
  const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-files-"));
  const fake = await startFakeOpenAI();
  const dev = await startWranglerDev({
    persistTo,
    vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "100000", TITLE_MODEL: "off" },
  });
  const dataUrl = image();
  const sides = { plain: [] as Turn[], image: [] as Turn[] };
  interface Turn {
    ttftMs: number;
    cpuMs: number;
    turnBytes: number;
    fileBytes: number;
  }
  try {
    const scenario = `bench${Date.now()}`;
    await fetch(`${fake.url}/__scenarios`, {
      method: "POST",
      body: JSON.stringify({ id: scenario, answers: Array.from({ length: turns * 2 + 4 }, () => ({ text: "Thanks, I see it." })) }),
    });
    const turn = async (side: keyof typeof sides, n: number): Promise<Turn> => {
      const id = `bench-files-${side}-${n}`;
      const body = { message: `a photo [${scenario}]`, ...(side === "image" ? { files: [{ url: dataUrl, name: "box.png" }] } : {}) };
      const before = objectBytes(persistTo);
      let ttftMs = 0;
      const cpuMs = await turnCpuMs(dev, async () => {
        const start = performance.now();
        const res = await fetch(`${dev.url}/v1/conversations/${id}/messages`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        let text = "";
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
          text += decoder.decode(read.value, { stream: true });
          if (!ttftMs && text.includes("event: text-delta")) ttftMs = performance.now() - start;
        }
        if (parseSse(text).at(-1)?.type !== "done") throw new Error(`a ${side} turn ended with ${text.slice(-300)}`);
      });
      const view = (await (await fetch(`${dev.url}/v1/conversations/${id}`)).json()) as {
        lastTurnStorage: { bytesWritten: number };
      };
      return { ttftMs, cpuMs, turnBytes: view.lastTurnStorage.bytesWritten, fileBytes: objectBytes(persistTo) - before };
    };
    // One of each first, unmeasured: the first request of each kind loads what it needs.
    await turn("plain", -1);
    await turn("image", -1);
    for (let n = 0; n < turns; n++) {
      const order: Array<keyof typeof sides> = n % 2 === 0 ? ["plain", "image"] : ["image", "plain"];
      for (const side of order) sides[side].push(await turn(side, n));
    }
  } finally {
    await dev.stop();
    await fake.close();
    rmSync(persistTo, { recursive: true, force: true });
  }
  const row = (name: string, measured: Turn[]) =>
    `| ${name} | ${median(measured.map((t) => t.turnBytes))} | ${median(measured.map((t) => t.fileBytes))} | ${median(measured.map((t) => t.cpuMs)).toFixed(1)} | ${median(measured.map((t) => t.ttftMs)).toFixed(1)} |`;
  const ratio = (key: keyof Turn) => median(sides.image.map((t) => t[key])) / median(sides.plain.map((t) => t[key]));
  return [
    `A turn's first message, with and without a 1 MB PNG (a data URL in the JSON body), ${turns} of each, sides alternating; medians.`,
    "",
    "| turn | bytes the turn writes (DO) | SQLite files' growth, bytes | workerd CPU, ms | first text delta, ms |",
    "|---|---|---|---|---|",
    row("text only", sides.plain),
    row("with a 1 MB image", sides.image),
    "",
    `With the image: ${ratio("turnBytes").toFixed(2)}× the bytes the turn writes, ${ratio("cpuMs").toFixed(2)}× the CPU, ${ratio("ttftMs").toFixed(2)}× the time to the first text delta.`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf("--turns");
  console.log((await fileRows(at > 0 ? Number(process.argv[at + 1]) : 20)).join("\n"));
}
