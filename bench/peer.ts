/**
 * This project against Cloudflare's AIChatAgent (bench/peers/cloudflare-agents), side by side in
 * one run: each under its own `wrangler dev`, the same fake OpenAI-compatible provider streaming
 * the same chunks at the same pace, the same job (one agent, `lookup_order`, several steps). The
 * sides alternate turn by turn where a measure allows it. Each figure is also a ratio, this
 * project / the peer (below 1: this project spends less).
 *
 *   node bench/peer.ts [--quick] [--only cpu,load]   (npm run bench runs it; --quick finishes in under three minutes;
 *                                                    --only: latency, cpu, load, storage, bundle)
 *
 * The peer's dependencies are installed here, into its own folder, the first time.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { type CpuProfile, profile, profileLines } from "./profile.ts";
import { type SplitCpu, splitCpuMs, workerdRssMiB } from "./workerd-processes.ts";
import { median, p95, p99 } from "./loop-overhead.ts";
import { deliveryDelays, OursSocket, oursLastTurnStorage, oursTurn, PeerChat, type TurnTiming } from "./peer-clients.ts";

export const PEER_DIR = new URL("./peers/cloudflare-agents/", import.meta.url).pathname;
const OURS_CONFIG = new URL("./peers/ours/wrangler.toml", import.meta.url).pathname;

interface Sizes {
  latency: { runs: number; tokens: number; paceMs: number };
  cpuTurns: number;
  concurrency: { conversations: number; turns: number };
  storage: { early: number; late: number; restartTurns: number; memoryAt: number };
}

const FULL: Sizes = {
  latency: { runs: 15, tokens: 200, paceMs: 5 },
  cpuTurns: 30,
  concurrency: { conversations: 50, turns: 4 },
  storage: { early: 10, late: 500, restartTurns: 1000, memoryAt: 500 },
};
const QUICK: Sizes = {
  latency: { runs: 5, tokens: 100, paceMs: 3 },
  cpuTurns: 10,
  concurrency: { conversations: 10, turns: 4 },
  storage: { early: 10, late: 60, restartTurns: 100, memoryAt: 60 },
};

type Row = [measure: string, ours: number, peer: number, unit: string, why: string];

/** Where a long run is, on stderr (the table goes to stdout). */
const progress = (what: string) => console.error(`bench peer: ${what}…`);

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
/** The percentage of values below a bound. */
const share = (values: number[], below: number) => (100 * values.filter((v) => v < below).length) / values.length;

export function installPeer(): void {
  if (existsSync(join(PEER_DIR, "node_modules/@cloudflare/ai-chat"))) return;
  console.error("bench: installing the peer's dependencies (bench/peers/cloudflare-agents)…");
  execFileSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: PEER_DIR, stdio: "inherit" });
}

export async function script(fake: FakeOpenAI, id: string, answers: unknown[]): Promise<void> {
  const res = await fetch(`${fake.url}/__scenarios`, { method: "POST", body: JSON.stringify({ id, answers }) });
  if (!res.ok) throw new Error(`the fake provider refused a script: ${res.status}`);
}

/** When the fake provider sent each piece of text of the scenario's last answer: [text length so far, epoch ms]. */
async function lastSent(fake: FakeOpenAI, id: string): Promise<Array<[number, number]>> {
  const { requests } = (await (await fetch(`${fake.url}/__scenarios/${id}`)).json()) as {
    requests: Array<{ textSent: Array<[number, number]> }>;
  };
  return requests.at(-1)!.textSent;
}

/** A turn, and the delivery delay of each of its pieces of text (its arrival less the provider's send). */
async function delivered(fake: FakeOpenAI, id: string, turn: Promise<TurnTiming>, into: number[]): Promise<TurnTiming> {
  const timing = await turn;
  into.push(...deliveryDelays(await lastSent(fake, id), timing.arrivals ?? []));
  return timing;
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `t${String(i).padStart(3, "0")}`).join("");
const toolTurn = [
  { toolCalls: [{ name: "lookup_order", arguments: JSON.stringify({ orderId: "A1001" }) }] },
  { text: "Order A1001 shipped; it was charged twice." },
];

/** 1. Time to first token over reading the provider directly, and the gaps between tokens, on a warm conversation. */
async function latencyRows(
  fake: FakeOpenAI,
  ours: WranglerDev,
  peer: WranglerDev,
  { runs, tokens, paceMs }: Sizes["latency"],
): Promise<Row[]> {
  const text = words(tokens);
  const answer = { text, delayMs: paceMs };
  await script(
    fake,
    "scnpeerlatours",
    Array.from({ length: 2 * runs + 2 }, () => answer),
  );
  await script(
    fake,
    "scnpeerlatpeer",
    Array.from({ length: runs + 1 }, () => answer),
  );
  const chat = await PeerChat.open(peer.url, "latency");
  // Warm-up: each side's first turn starts its Durable Object.
  await oursTurn(ours.url, "latency", "hello [scnpeerlatours]");
  await chat.turn("hello [scnpeerlatpeer]");
  // A conversation of its own: a socket open on the SSE turns' conversation would be sent their events too.
  await oursTurn(ours.url, "latency-socket", "hello [scnpeerlatours]");
  const socket = await OursSocket.open(ours.url, "latency-socket");
  const direct: number[] = [];
  const sides = { ours: [] as TurnTiming[], socket: [] as TurnTiming[], peer: [] as TurnTiming[] };
  const delays = { ours: [] as number[], socket: [] as number[], peer: [] as number[] };
  for (let run = 0; run < runs; run++) {
    progress(`latency run ${run + 1} of ${runs}`);
    const id = `scnpeerdirect${run}`;
    await script(fake, id, [answer]);
    const start = performance.now();
    const res = await fetch(`${fake.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: id }] }),
    });
    if (!res.ok) throw new Error(`the fake provider answered ${res.status}: ${await res.text()}`);
    const reader = res.body!.getReader();
    await reader.read();
    direct.push(performance.now() - start);
    while (!(await reader.read()).done);
    sides.ours.push(await delivered(fake, "scnpeerlatours", oursTurn(ours.url, "latency", `message ${run}`), delays.ours));
    sides.socket.push(await delivered(fake, "scnpeerlatours", socket.turn(`socket message ${run}`), delays.socket));
    sides.peer.push(await delivered(fake, "scnpeerlatpeer", chat.turn(`message ${run}`), delays.peer));
  }
  chat.close();
  socket.close();
  const base = median(direct);
  const gaps = (side: TurnTiming[]) => side.flatMap((t) => t.gaps);
  return [
    [
      "time to first token added over the provider, median",
      median(sides.ours.map((t) => t.firstMs)) - base,
      median(sides.peer.map((t) => t.firstMs)) - base,
      "ms",
      "the peer rebuilds model messages from its whole stored UI history (convertToModelMessages) and reconciles the client's copy before calling the model; this project appends one user row and sends its cached history",
    ],
    [
      "gap between tokens, median",
      median(gaps(sides.ours)),
      median(gaps(sides.peer)),
      "ms",
      "both follow the provider's pace; this project's deltas take one more hop (Durable Object → Worker over an RPC stream → client) where the peer's WebSocket ends in the Durable Object",
    ],
    [
      "gap between tokens, p95",
      p95(gaps(sides.ours)),
      p95(gaps(sides.peer)),
      "ms",
      "no per-chunk storage writes on the streaming path (events are stored with each step's commit)",
    ],
    [
      "over this project's WebSocket: time to first token added over the provider, median",
      median(sides.socket.map((t) => t.firstMs)) - base,
      median(sides.peer.map((t) => t.firstMs)) - base,
      "ms",
      "both sides over a WebSocket that ends in the Durable Object: a message frame starts the turn with no request through the Worker",
    ],
    [
      "over this project's WebSocket: gap between tokens, median",
      median(gaps(sides.socket)),
      median(gaps(sides.peer)),
      "ms",
      "the socket's frames leave the Durable Object directly, as the peer's do: no Durable Object → Worker hop",
    ],
    ["over this project's WebSocket: gap between tokens, p95", p95(gaps(sides.socket)), p95(gaps(sides.peer)), "ms", "as above"],
    [
      "gap between tokens, mean (SSE)",
      mean(gaps(sides.ours)),
      mean(gaps(sides.peer)),
      "ms",
      `the provider's pace is ${paceMs} ms: a mean at the pace is a stream that kept up; a median below it is deltas that arrived bunched`,
    ],
    [
      "gaps under 1 ms: deltas that arrived bunched (SSE)",
      share(gaps(sides.ours), 1),
      share(gaps(sides.peer), 1),
      "%",
      "deltas that reached the client together though the provider sent them a pace apart",
    ],
    ["gaps under 1 ms (this project's WebSocket)", share(gaps(sides.socket), 1), share(gaps(sides.peer), 1), "%", "as above"],
    ...deliveryRows(delays),
  ];
}

/** Delivery delay per token: arrival at the client less the fake provider's send, over SSE and the socket against the peer. */
function deliveryRows(delays: Record<"ours" | "socket" | "peer", number[]>): Row[] {
  const why =
    "each piece of text's arrival at the client less when the fake provider wrote it (one clock: the bench process runs both); the gap between tokens cannot tell a stream that kept pace from one delivered late or bunched";
  return [
    ["delivery delay per token, p50 (SSE)", median(delays.ours), median(delays.peer), "ms", why],
    ["delivery delay per token, p95 (SSE)", p95(delays.ours), p95(delays.peer), "ms", "as above"],
    ["delivery delay per token, p99 (SSE)", p99(delays.ours), p99(delays.peer), "ms", "as above"],
    ["delivery delay per token, p50 (this project's WebSocket)", median(delays.socket), median(delays.peer), "ms", "as above"],
    ["delivery delay per token, p95 (this project's WebSocket)", p95(delays.socket), p95(delays.peer), "ms", "as above"],
    ["delivery delay per token, p99 (this project's WebSocket)", p99(delays.socket), p99(delays.peer), "ms", "as above"],
  ];
}

/** 2. Many conversations at once, each a few turns of a tool call and an answer: throughput and turn latency. */
async function concurrencyRows(
  fake: FakeOpenAI,
  ours: WranglerDev,
  peer: WranglerDev,
  { conversations, turns }: Sizes["concurrency"],
): Promise<Row[]> {
  const answers = Array.from({ length: turns }, () => toolTurn).flat();
  const run = async (side: "ours" | "peer") => {
    const latencies: number[] = [];
    const start = performance.now();
    await Promise.all(
      Array.from({ length: conversations }, async (_, c) => {
        const tag = `scnpeerconc${side}${c}`;
        await script(fake, tag, answers);
        const chat = side === "peer" ? await PeerChat.open(peer.url, `conc-${c}`) : null;
        for (let t = 0; t < turns; t++) {
          const text = t === 0 ? `where is A1001? [${tag}]` : `and now? ${t}`;
          const timing = chat ? await chat.turn(text) : await oursTurn(ours.url, `conc-${c}`, text);
          latencies.push(timing.totalMs);
        }
        chat?.close();
      }),
    );
    return { seconds: (performance.now() - start) / 1000, latencies };
  };
  const o = await run("ours");
  const p = await run("peer");
  const total = conversations * turns;
  return [
    [
      `throughput, ${conversations} conversations × ${turns} turns at once (higher is better)`,
      total / o.seconds,
      total / p.seconds,
      "turns/s",
      "less work per turn: fewer rows written, no re-serialization of the whole message list per request",
    ],
    [
      "turn latency at that load, p50",
      median(o.latencies),
      median(p.latencies),
      "ms",
      "as above: CPU per turn is what a shared workerd queues on",
    ],
    ["turn latency at that load, p95", p95(o.latencies), p95(p.latencies), "ms", "as above"],
  ];
}

/**
 * 6. CPU per turn of each side's workerd (Worker and Durable Object: one process each), from the
 * operating system, turns alternating; then a profile of this project's turns from workerd's inspector.
 */
async function cpuRows(
  fake: FakeOpenAI,
  ours: WranglerDev,
  peer: WranglerDev,
  turns: number,
): Promise<{ rows: Row[]; profile: CpuProfile }> {
  const answers = Array.from({ length: 3 * turns + 2 }, () => toolTurn).flat();
  await script(fake, "scnpeercpuours", answers);
  await script(fake, "scnpeercpusocket", answers);
  await script(fake, "scnpeercpupeer", answers);
  const chat = await PeerChat.open(peer.url, "cpu");
  await oursTurn(ours.url, "cpu", "where is A1001? [scnpeercpuours]");
  await chat.turn("where is A1001? [scnpeercpupeer]");
  const sides = { ours: [] as SplitCpu[], socket: [] as SplitCpu[], peer: [] as SplitCpu[] };
  // A conversation of its own: a socket open on the SSE turns' conversation would be sent their events too.
  await oursTurn(ours.url, "cpu-socket", "where is A1001? [scnpeercpusocket]");
  const socket = await OursSocket.open(ours.url, "cpu-socket");
  for (let t = 0; t < turns; t++) {
    sides.ours.push(await splitCpuMs(ours, () => oursTurn(ours.url, "cpu", `and A1001 now? ${t}`)));
    sides.socket.push(await splitCpuMs(ours, () => socket.turn(`and over the socket? ${t}`)));
    sides.peer.push(await splitCpuMs(peer, () => chat.turn(`and A1001 now? ${t}`)));
  }
  socket.close();
  const profiled = await profile(ours, async () => {
    for (let t = 0; t < turns; t++) await oursTurn(ours.url, "cpu", `profiled ${t}`);
  });
  chat.close();
  return { rows: cpuTable(sides), profile: profiled };
}

/** The CPU rows, median and p95: each side whole (both of its workerd processes) and without the dev proxy's. */
function cpuTable(sides: { ours: SplitCpu[]; socket: SplitCpu[]; peer: SplitCpu[] }): Row[] {
  const whole = (side: SplitCpu[]) => side.map((cpu) => cpu.proxy + cpu.worker);
  const worker = (side: SplitCpu[]) => side.map((cpu) => cpu.worker);
  const both = (measure: string, ours: number[], peer: number[], why: string): Row[] => [
    [`${measure}, median`, median(ours), median(peer), "ms", why],
    [`${measure}, p95`, p95(ours), p95(peer), "ms", "as above"],
  ];
  return [
    ...both(
      "CPU per turn (workerd, from the OS)",
      whole(sides.ours),
      whole(sides.peer),
      "the whole of each workerd (Worker, Durable Object, the runtime's own threads) for a turn of a tool call and an answer; schedstat nanoseconds of every thread, less what it spends idle over the same wait",
    ),
    ...both(
      "over this project's WebSocket: CPU per turn",
      whole(sides.socket),
      whole(sides.peer),
      "both sides over a WebSocket that ends in the Durable Object: no Worker invocation, no response through the dev proxy",
    ),
    ...both(
      "CPU per turn without the dev proxy (the Worker's workerd only)",
      worker(sides.ours),
      worker(sides.peer),
      "the same turns, less what wrangler dev's proxy workerd spent on them: what a deploy, which has no dev proxy, would run",
    ),
    ...both("over this project's WebSocket: CPU per turn without the dev proxy", worker(sides.socket), worker(sides.peer), "as above"),
  ];
}

/** 3–5. One long conversation each: rows and bytes a turn writes early and late, memory, and the first request after a restart. */
async function storageRows(
  fake: FakeOpenAI,
  dirs: { ours: string; peer: string },
  vars: Record<string, string>,
  sizes: Sizes["storage"],
): Promise<Row[]> {
  const { early, late, restartTurns, memoryAt } = sizes;
  let ours = await startWranglerDev({ persistTo: dirs.ours, vars, config: OURS_CONFIG });
  let peer = await startWranglerDev({ persistTo: dirs.peer, vars, cwd: PEER_DIR, ready: "/" });
  const answers = Array.from({ length: restartTurns + 1 }, (_, i) => ({ text: `Answer number ${i}: all good.` }));
  await script(fake, "scnpeerlongours", answers);
  await script(fake, "scnpeerlongpeer", answers);
  const rows: Row[] = [];
  let memory: [number, number] = [0, 0];
  try {
    const chat = await PeerChat.open(peer.url, "long");
    for (let turn = 1; turn <= restartTurns; turn++) {
      if (turn % 100 === 0) progress(`turn ${turn} of ${restartTurns}`);
      const text = turn === 1 ? "hello [scnpeerlong%s]" : `message ${turn}`;
      const before = turn === early || turn === late ? await chat.written() : null;
      await oursTurn(ours.url, "long", text.replace("%s", "ours"));
      await chat.turn(text.replace("%s", "peer"));
      if (before) {
        const mine = await oursLastTurnStorage(ours.url, "long");
        const theirs = await chat.written();
        rows.push([
          `rows written by turn ${turn}`,
          mine.rows,
          theirs.rows - before.rows,
          "rows",
          "one row per new message, one per step's events, the turn row and the trace row; the peer also writes stream chunks and their metadata for resumption",
        ]);
        rows.push([
          `bytes written by turn ${turn}`,
          mine.bytes,
          theirs.bytes - before.bytes,
          "bytes",
          "events packed one row per step instead of one per chunk",
        ]);
      }
      if (turn === memoryAt) memory = [workerdRssMiB(ours), workerdRssMiB(peer)];
    }
    chat.close();
    rows.push([
      `workerd memory after ${memoryAt} turns (RSS, all of workerd)`,
      memory[0],
      memory[1],
      "MiB",
      "a smaller bundle to hold, and the history kept once as parsed messages (the peer keeps UI messages and rebuilds model messages per turn)",
    ]);
    const messages = [(await oursLastTurnStorage(ours.url, "long")).messages, chat.messages.length];
    await ours.stop();
    await peer.stop();
    ours = await startWranglerDev({ persistTo: dirs.ours, vars, config: OURS_CONFIG });
    peer = await startWranglerDev({ persistTo: dirs.peer, vars, cwd: PEER_DIR, ready: "/" });
    // The peer's client connects first (it receives the stored messages), then sends: both count.
    const first = await oursTurn(ours.url, "long", "after the restart");
    const connecting = performance.now();
    const again = await PeerChat.open(peer.url, "long");
    const connectMs = performance.now() - connecting;
    const theirs = await again.turn("after the restart");
    again.close();
    rows.push([
      `first turn after a restart, ${messages[0]} / ${messages[1]} messages stored (to the first token)`,
      first.firstMs,
      connectMs + theirs.firstMs,
      "ms",
      "one SELECT of the messages on start; the peer's client first receives the whole history over the socket and sends it back with the message",
    ]);
  } finally {
    await ours.stop();
    await peer.stop();
  }
  return rows;
}

/** 7. The bundle each side deploys, from `wrangler deploy --dry-run`, gzip, as built and minified. */
function bundleRows(): Row[] {
  const size = (cwd: string, config: string | null, minify: boolean) => {
    const out = mkdtempSync(join(tmpdir(), "bench-bundle-"));
    try {
      const args = [
        "wrangler",
        "deploy",
        "--dry-run",
        "--outdir",
        out,
        ...(config ? ["--config", config] : []),
        ...(minify ? ["--minify"] : []),
      ];
      const run = spawnSync("npx", args, { cwd, encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
      if (run.status !== 0) throw new Error(`wrangler deploy --dry-run failed in ${cwd}:\n${run.stderr}`);
      const written = readdirSync(out).find((file) => file.endsWith(".js"))!;
      return gzipSync(readFileSync(join(out, written))).length / 1024;
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  };
  const why = "no nodejs_compat polyfills and no agents framework (scheduling, MCP, email, codemode) around the chat";
  return [
    ["bundle, gzip", size(process.cwd(), OURS_CONFIG, false), size(PEER_DIR, null, false), "KiB", why],
    ["bundle, gzip, minified", size(process.cwd(), OURS_CONFIG, true), size(PEER_DIR, null, true), "KiB", why],
  ];
}

/** What the table does not say: how each side was built and driven, and what a narrower `openai` import can do. */
const NOTES = [
  "The peer (bench/peers/cloudflare-agents) is the documented AIChatAgent starter with three changes, all instrumentation: its SQL cursors' rowsWritten summed (and the bytes bound to writing statements), a GET …/stats answer, and the OpenAI-compatible provider pointed at the fake server in place of Workers AI. This project's side (bench/peers/ours) is the same job built with createHandoffWorker. Between tokens both sides follow the provider's pace (the mean gap is the pace): the SSE route's deltas cross one more hop (Durable Object → Worker) than the peer's, which this project's WebSocket, ending in the Durable Object as the peer's does, does not; the rows of gaps under 1 ms count the deltas that reached the client bunched together though the provider sent them a pace apart.",
  "",
  "The `openai` package and a narrower import: the adapters use `chat.completions.create` and `responses.create` (streaming), the client's retries with Retry-After, its typed errors and its stream decoder. Every entry of the package (`openai`, `openai/client`) builds the same `OpenAI` class, whose constructor instantiates all 25 resource groups, so no import of the same package drops the ones not used: they are ~147 KiB of the ~412 KiB `openai` takes in the minified bundle. What brings the size down is minification (`npm run deploy` uses `--minify`): ~172 KiB gzip for this Worker before the MCP client, ~243 KiB with it (the official MCP client is ~76 KiB of that).",
];

function table(rows: Row[], sizes: Sizes): string[] {
  const figure = (value: number, unit: string) => `${value >= 100 ? value.toFixed(0) : value.toFixed(value >= 10 ? 1 : 2)} ${unit}`;
  return [
    `This project against Cloudflare's AIChatAgent (@cloudflare/ai-chat, agents, ai), each under its own wrangler dev on one fake provider; the sides alternate turn by turn (measures 1, 3–5) or run one after the other (2). This project is driven over its HTTP chat endpoint (Server-Sent Events), the peer over its WebSocket chat protocol with the whole UI message list per turn, as useAgentChat sends it. ${sizes === QUICK ? "Quick mode: smaller counts." : ""}`,
    "",
    "| measure | this project | AIChatAgent | this / peer | why |",
    "|---|---:|---:|---:|---|",
    ...rows.map(
      ([measure, ours, peer, unit, why]) =>
        `| ${measure} | ${figure(ours, unit)} | ${figure(peer, unit)} | ${peer === 0 ? "–" : `${(ours / peer).toFixed(2)}×`} | ${why} |`,
    ),
    "",
    ...NOTES,
  ];
}

/** The measures, by the name `--only` takes. */
const PARTS = ["latency", "cpu", "load", "storage", "bundle"] as const;
type Part = (typeof PARTS)[number];

export async function peerRows(quick: boolean, only: readonly Part[] = PARTS): Promise<string[]> {
  const sizes = quick ? QUICK : FULL;
  const runs = (part: Part) => only.includes(part);
  installPeer();
  const fake = await startFakeOpenAI();
  const scratch = mkdtempSync(join(tmpdir(), "bench-peer-"));
  const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "1000000" };
  const rows: Row[] = [];
  let after: string[] = [];
  try {
    const ours = await startWranglerDev({ persistTo: join(scratch, "ours"), vars, config: OURS_CONFIG });
    const peer = await startWranglerDev({ persistTo: join(scratch, "peer"), vars, cwd: PEER_DIR, ready: "/" });
    try {
      if (runs("latency")) {
        progress("latency");
        rows.push(...(await latencyRows(fake, ours, peer, sizes.latency)));
      }
      if (runs("cpu")) {
        progress("CPU per turn");
        const cpu = await cpuRows(fake, ours, peer, sizes.cpuTurns);
        rows.push(...cpu.rows);
        after = profileLines(cpu.profile, sizes.cpuTurns);
      }
      if (runs("load")) {
        progress("load");
        rows.push(...(await concurrencyRows(fake, ours, peer, sizes.concurrency)));
      }
    } finally {
      await ours.stop();
      await peer.stop();
    }
    if (runs("storage")) {
      progress("one long conversation each");
      rows.push(...(await storageRows(fake, { ours: join(scratch, "long-ours"), peer: join(scratch, "long-peer") }, vars, sizes.storage)));
    }
    if (runs("bundle")) {
      progress("bundles");
      rows.push(...bundleRows());
    }
  } finally {
    await fake.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  return [...table(rows, sizes), ...after];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf("--only");
  const only = at < 0 ? PARTS : (process.argv[at + 1] ?? "").split(",");
  const unknown = only.filter((part) => !(PARTS as readonly string[]).includes(part));
  if (unknown.length) throw new Error(`--only takes ${PARTS.join(", ")} (comma-separated), not ${unknown.join(", ")}`);
  console.log((await peerRows(process.argv.includes("--quick"), only as Part[])).join("\n"));
  process.exit(0);
}
