/**
 * One event stream out of the conversation (issue 56), side by side in one run against another
 * commit: CPU per turn over SSE, over the AI SDK's stream and over the socket on each side (turns
 * alternating between the sides), an AG-UI turn against an SSE turn on this tree (CPU and time to
 * first token), and the minified Worker's gzip size on each side. Each side runs under its own
 * `wrangler dev` with the offline demo model (its words 2 ms apart, so a turn streams); CPU is
 * every thread of the side's workerd from the OS, less what it spends idle over the same wait.
 *
 *   npm run bench:event-stream [-- --baseline <git ref>] [-- --turns 20]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { chat, startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { median } from "./loop-overhead.ts";
import { OursSocket } from "./peer-clients.ts";
import { turnCpuMs } from "./workerd-processes.ts";
import { worktree } from "./worktree.ts";

const MESSAGE = "Where is order A1002?";
/** The commit before issues 55 and 56. */
const DEFAULT_BASELINE = "66a2999";

type Path = "sse" | "ui" | "socket" | "ag-ui";

interface Side {
  label: string;
  dev: WranglerDev;
  socket: OursSocket;
  cpu: Map<Path, number[]>;
  firstToken: Map<Path, number[]>;
}

/** Reads a response to its end; the time its first text arrived (a text delta in whichever format). */
async function readTimed(res: Response, start: number, isText: (frame: string) => boolean): Promise<number> {
  if (!res.ok || !res.body) throw new Error(`answered ${res.status}: ${await res.text()}`);
  let first = Number.NaN;
  const decoder = new TextDecoder();
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
    if (Number.isNaN(first) && isText(decoder.decode(bytes, { stream: true }))) first = performance.now() - start;
  }
  return first;
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** One turn over `path`; its time to first text. */
async function turnOver(side: Side, path: Path, n: number): Promise<number> {
  const url = side.dev.url;
  const start = performance.now();
  if (path === "sse")
    return readTimed(await post(`${url}/v1/conversations/bench-sse/messages`, { message: MESSAGE }), start, (t) =>
      t.includes("text-delta"),
    );
  if (path === "ui") {
    const body = { messages: [{ id: `u${n}`, role: "user", parts: [{ type: "text", text: MESSAGE }] }] };
    return readTimed(await post(`${url}/v1/conversations/bench-ui/chat`, body), start, (t) => t.includes('"text-delta"'));
  }
  if (path === "ag-ui") {
    const body = { threadId: "bench-ag-ui", runId: `r${n}`, messages: [{ id: `u${n}`, role: "user", content: MESSAGE }] };
    return readTimed(await post(`${url}/v1/ag-ui`, body), start, (t) => t.includes("TEXT_MESSAGE_CONTENT"));
  }
  return (await side.socket.turn(MESSAGE)).firstMs;
}

async function measure(side: Side, path: Path, n: number): Promise<void> {
  let first = 0;
  const cpu = await turnCpuMs(side.dev, async () => (first = await turnOver(side, path, n)));
  side.cpu.set(path, [...(side.cpu.get(path) ?? []), cpu]);
  side.firstToken.set(path, [...(side.firstToken.get(path) ?? []), first]);
}

/** The Worker as `npm run deploy` ships it (minified), gzipped, in KiB. */
function bundleKiB(cwd: string): number {
  const outdir = mkdtempSync(join(tmpdir(), "handoff-bundle-"));
  try {
    const run = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--minify", "--outdir", outdir], {
      cwd,
      encoding: "utf8",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    });
    if (run.status !== 0) throw new Error(`wrangler deploy --dry-run failed in ${cwd}:\n${run.stderr}`);
    return gzipSync(readFileSync(join(outdir, "index.js"))).length / 1024;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

async function openSide(label: string, cwd: string, persistTo: string): Promise<Side> {
  const dev = await startWranglerDev({ persistTo, cwd, vars: { TURNS_PER_MINUTE: "100000", DEMO_DELAY_MS: "2" } });
  // Each path's conversation exists, and its Durable Object has started, before anything is measured.
  for (const id of ["bench-sse", "bench-ui", "bench-socket"]) await chat(dev.url, id, MESSAGE);
  return { label, dev, socket: await OursSocket.open(dev.url, "bench-socket"), cpu: new Map(), firstToken: new Map() };
}

export async function eventStreamRows(baseline = DEFAULT_BASELINE, turns = 20): Promise<string[]> {
  const tree = worktree(baseline);
  const dirs = [mkdtempSync(join(tmpdir(), "handoff-bench-es-")), mkdtempSync(join(tmpdir(), "handoff-bench-es-"))];
  const sides: Side[] = [];
  let sizes: [number, number] = [0, 0];
  try {
    sides.push(await openSide(`at ${baseline}`, tree.dir, dirs[0]!), await openSide("this tree", process.cwd(), dirs[1]!));
    const [, ours] = sides as [Side, Side];
    await turnOver(ours, "ag-ui", -1);
    for (let t = 0; t < turns; t++) {
      for (const path of ["sse", "ui", "socket"] as const) for (const side of sides) await measure(side, path, t);
      await measure(ours, "ag-ui", t);
    }
    sizes = [bundleKiB(tree.dir), bundleKiB(process.cwd())];
  } finally {
    for (const side of sides) {
      side.socket.close();
      await side.dev.stop();
    }
    tree.remove();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  return report(sides as [Side, Side], sizes, turns);
}

function report([before, after]: [Side, Side], sizes: [number, number], turns: number): string[] {
  const ms = (values: number[] | undefined) => median(values ?? []);
  const ratio = (a: number, b: number) => `${(b / a).toFixed(2)}×`;
  const row = (what: string, path: Path) => {
    const [a, b] = [ms(before.cpu.get(path)), ms(after.cpu.get(path))];
    return `| ${what} | ${a.toFixed(1)} ms | ${b.toFixed(1)} ms | ${ratio(a, b)} |`;
  };
  const [sseCpu, aguiCpu] = [ms(after.cpu.get("sse")), ms(after.cpu.get("ag-ui"))];
  const [sseFirst, aguiFirst] = [ms(after.firstToken.get("sse")), ms(after.firstToken.get("ag-ui"))];
  return [
    `CPU per turn ("${MESSAGE}": a transfer and a tool call, the demo model's words 2 ms apart), ${before.label} against this tree, one run, turns alternating (${turns} per path and side; medians)`,
    "",
    `| path | ${before.label} | this tree | ratio |`,
    "|---|---:|---:|---:|",
    row("SSE (POST …/messages)", "sse"),
    row("AI SDK stream (POST …/chat)", "ui"),
    row("WebSocket (a message frame)", "socket"),
    "",
    "An AG-UI turn against an SSE turn, this tree, the same run (medians)",
    "",
    "| | SSE | AG-UI (POST /v1/ag-ui) | AG-UI / SSE |",
    "|---|---:|---:|---:|",
    `| CPU per turn | ${sseCpu.toFixed(1)} ms | ${aguiCpu.toFixed(1)} ms | ${ratio(sseCpu, aguiCpu)} (target ≤ 1.1×) |`,
    `| time to first token | ${sseFirst.toFixed(1)} ms | ${aguiFirst.toFixed(1)} ms | ${ratio(sseFirst, aguiFirst)} (target ≤ 1.1×) |`,
    "",
    `Bundle, minified and gzipped: ${sizes[0].toFixed(1)} KiB at ${before.label.slice(3)}, ${sizes[1].toFixed(1)} KiB in this tree (+${(sizes[1] - sizes[0]).toFixed(1)} KiB)`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { baseline: { type: "string" }, turns: { type: "string", default: "20" } } });
  console.log((await eventStreamRows(values.baseline, Number(values.turns))).join("\n"));
}
