/**
 * What a deployment at scale costs, this project against Cloudflare's AIChatAgent side by side in
 * one run (issue 67): each side under its own `wrangler dev`, on one fake provider.
 *
 * 1. Cold start: a conversation holding 200 messages, then workerd restarted (a fresh isolate),
 *    then the first turn to its first token, and the next turn (warm). The sides restart and answer
 *    in turn, the side that goes first rotating round by round; a third side, the floor
 *    (bench/peers/cold-floor), does only what any turn must with no runtime in it. wrangler dev's
 *    readiness probe has evaluated the Worker's script by then, so this is the object's start (its
 *    constructor, its storage read) and the turn; what evaluating the script costs is measured by
 *    bench:isolate-start.
 * 2. Memory: `conversations` conversations each given `turns` turns of history (the peer's over a
 *    socket opened for the turn and closed after it, as its client talks; ours over SSE), then a
 *    socket on `sockets` of them (a tab left open), then 15 s idle (workerd evicts an object idle
 *    for 10 s, a hibernating one too): resident memory of the Worker's workerd at each, per
 *    conversation and per socket. Then, after a restart on the same storage, resident memory with 200
 *    of them woken at once (all in memory together, which a round over thousands never has), and
 *    the live heap (live-heap.ts: what a full collection leaves, less compiled code) with them woken
 *    again, with a socket more each, and after 15 s idle: what each object keeps, apart from the
 *    garbage resident memory also counts.
 *
 *   node bench/scale.ts [--quick] [--conversations 5000]       (npm run bench:scale)
 *   node bench/scale.ts --cold [--quick]                        the cold start alone (--memory: the memory alone)
 *   node bench/scale.ts --side ours [--conversations 100] [--turns 1] [--sockets 100]   one side's memory alone
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { type HeapFigures, liveHeap } from "./live-heap.ts";
import { median } from "./loop-overhead.ts";
import { OursSocket, oursTurn, PeerChat } from "./peer-clients.ts";
import { installPeer, PEER_DIR, script } from "./peer.ts";
import { workerRssMiB } from "./workerd-processes.ts";

const OURS_CONFIG = new URL("./peers/ours/wrangler.toml", import.meta.url).pathname;
const FLOOR_CONFIG = new URL("./peers/cold-floor/wrangler.toml", import.meta.url).pathname;

// wrangler dev's local trace store and explorer (workerd services a deployed Worker has not) would grow with every
// request in the measured process: off on both sides, so the memory is the Worker's own.
process.env.X_LOCAL_OBSERVABILITY = "false";
process.env.X_LOCAL_EXPLORER = "false";

interface Sizes {
  rounds: number;
  storedTurns: number;
  conversations: number;
  turns: number;
  sockets: number;
  parallel: number;
}
const FULL: Sizes = { rounds: 7, storedTurns: 100, conversations: 1000, turns: 20, sockets: 1000, parallel: 16 };
const QUICK: Sizes = { rounds: 3, storedTurns: 100, conversations: 100, turns: 20, sockets: 100, parallel: 16 };

const progress = (what: string) => console.error(`bench scale: ${what}…`);
type Side = "ours" | "peer";
/** The cold start has a third side: the floor (bench/peers/cold-floor), a turn with no runtime in it. */
type ColdSide = Side | "floor";

/** Scripts `count` short answers for the scenario `id`. */
const answers = (fake: FakeOpenAI, id: string, count: number) =>
  script(
    fake,
    id,
    Array.from({ length: count }, (_, i) => ({ text: `Answer number ${i}: all good.` })),
  );

class Sides {
  readonly dirs: Record<ColdSide, string>;
  devs: Partial<Record<ColdSide, WranglerDev>> = {};
  readonly vars: Record<string, string>;
  constructor(scratch: string, vars: Record<string, string>) {
    this.vars = vars;
    this.dirs = { ours: join(scratch, "ours"), peer: join(scratch, "peer"), floor: join(scratch, "floor") };
  }
  async start(side: ColdSide): Promise<WranglerDev> {
    const persistTo = this.dirs[side];
    const dev =
      side === "peer"
        ? await startWranglerDev({ persistTo, vars: this.vars, cwd: PEER_DIR, ready: "/" })
        : await startWranglerDev({ persistTo, vars: this.vars, config: side === "ours" ? OURS_CONFIG : FLOOR_CONFIG });
    this.devs[side] = dev;
    return dev;
  }
  async stop(side: ColdSide): Promise<void> {
    await this.devs[side]?.stop();
    delete this.devs[side];
  }
}

/** One turn of a side's conversation, to its end; the peer's chat stays open (a socket, as useAgentChat keeps one). */
async function turn(side: ColdSide, url: string, chats: Map<string, PeerChat>, id: string, text: string): Promise<number> {
  if (side !== "peer") return (await oursTurn(url, id, text)).firstMs;
  let chat = chats.get(id);
  if (!chat) chats.set(id, (chat = await PeerChat.open(url, id)));
  return (await chat.turn(text)).firstMs;
}

/** Runs `work` over `items`, `parallel` at a time. */
async function inParallel<T>(items: T[], parallel: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

/** The first turn after a restart and the next one (warm), ms to the first token, a round each. */
type Cold = Record<ColdSide, { cold: number[]; warm: number[] }>;
const COLD_SIDES: ColdSide[] = ["ours", "peer", "floor"];

/**
 * 1. The first turn after a restart on a conversation of `storedTurns` turns (the peer's connect counted: its client
 * must connect first), then the next turn: the same work with the isolate, the object and its code warm. What the
 * restart costs is the difference. The floor's turn, which has no runtime in it, is what workerd charges any turn.
 */
async function coldStart(fake: FakeOpenAI, sides: Sides, { rounds, storedTurns }: Sizes): Promise<Cold> {
  const found = Object.fromEntries(COLD_SIDES.map((side) => [side, { cold: [], warm: [] }])) as unknown as Cold;
  for (const side of COLD_SIDES) {
    await answers(fake, `scncold${side}`, storedTurns + 2 * rounds + 2);
    const dev = await sides.start(side);
    const chats = new Map<string, PeerChat>();
    progress(`${side}: ${storedTurns} turns of history`);
    for (let i = 0; i < storedTurns; i++) await turn(side, dev.url, chats, "cold", i === 0 ? `hello [scncold${side}]` : `message ${i}`);
    for (const chat of chats.values()) chat.close();
    await sides.stop(side);
  }
  for (let round = 0; round < rounds; round++) {
    // Each side goes first, second and third in turn.
    const order = COLD_SIDES.map((_, i) => COLD_SIDES[(i + round) % COLD_SIDES.length]!);
    for (const side of order) {
      progress(`cold start round ${round + 1}: ${side}`);
      const dev = await sides.start(side);
      const chats = new Map<string, PeerChat>();
      found[side].cold.push(await turn(side, dev.url, chats, "cold", `after restart ${round}`));
      found[side].warm.push(await turn(side, dev.url, chats, "cold", `and again ${round}`));
      for (const chat of chats.values()) chat.close();
      await sides.stop(side);
    }
  }
  return found;
}

/** The cold start's rows: the first turn after a restart, the next one, what the restart added, and each over the floor's. */
function coldRows(cold: Cold, stored: number): string[][] {
  const penalty = (side: ColdSide) => cold[side].cold.map((ms, i) => ms - cold[side].warm[i]!);
  const overFloor = (side: Side) => cold[side].cold.map((ms, i) => ms - cold.floor.cold[i]!);
  const row = (what: string, ours: number[], peer: number[]) => [what, ms(ours), ms(peer), ratio(median(ours), median(peer))];
  return [
    row(`first turn after a restart, ${stored} messages stored, to the first token (median)`, cold.ours.cold, cold.peer.cold),
    row("the next turn, warm, to the first token (median)", cold.ours.warm, cold.peer.warm),
    row("what the restart added (first less next, median of rounds)", penalty("ours"), penalty("peer")),
    row(
      `the first turn over the floor's (a turn with no runtime: cold ${ms(cold.floor.cold)}, warm ${ms(cold.floor.warm)}, the restart added ${ms(penalty("floor"))})`,
      overFloor("ours"),
      overFloor("peer"),
    ),
  ];
}

/** Resident memory of the Worker's workerd, MiB (base) and KiB per conversation or socket. */
interface Memory {
  base: number;
  conversations: number;
  sockets: number;
  /** Per conversation, with its sockets still open, once the objects have been idle past workerd's eviction. */
  hibernated: number;
}

/**
 * The live heap (after a full collection), on `sample` conversations: MiB with none in memory (all, and data less
 * compiled code), and KiB of data per conversation or socket.
 */
interface Heap {
  sample: number;
  /** Resident memory per conversation with the sample all in memory at once (KiB), read before any heap snapshot. */
  residentLive: number;
  base: HeapFigures;
  conversations: number;
  sockets: number;
  hibernated: number;
}

/** workerd evicts a Durable Object idle for 10 s (one whose sockets are hibernatable too): waited past it. */
const IDLE_PAST_EVICTION_MS = 15_000;
/** Conversations woken for the live heap: few enough to wake within workerd's 10 s before an object is evicted. */
const HEAP_SAMPLE = 200;

const perItemKiB = (after: number, before: number, count: number) => ((after - before) * 1024) / count;

/**
 * What a side holds open: sockets (a tab left open on a conversation). A turn holds no connection after it on either
 * side: the peer's chat connects for its turn (as a page opened for it would) and closes after, as ours holds nothing
 * after its SSE answer, so a conversation's figures hold no socket and sockets are measured apart.
 */
class Held {
  readonly sockets: Array<{ close(): void }> = [];
  /** One turn of conversation `id`, to its end. */
  async turn(side: Side, url: string, id: string, text: string): Promise<number> {
    if (side === "ours") return (await oursTurn(url, id, text)).firstMs;
    const chat = await PeerChat.open(url, id);
    try {
      return (await chat.turn(text)).firstMs;
    } finally {
      chat.close();
    }
  }
  /** One more socket on each conversation: a tab left open. */
  async open(side: Side, url: string, ids: string[], parallel: number): Promise<void> {
    await inParallel(ids, parallel, async (id) => {
      this.sockets.push(side === "ours" ? await OursSocket.open(url, id) : await PeerChat.open(url, id));
    });
  }
  close(): void {
    for (const socket of this.sockets) socket.close();
  }
}

const idle = () => new Promise((resolve) => setTimeout(resolve, IDLE_PAST_EVICTION_MS));

/**
 * 2. Resident memory with `conversations` conversations given `turns` turns, then with `sockets` sockets more, then
 * once the objects have been idle past eviction; then, on the same storage after a restart, the live heap.
 */
async function memory(fake: FakeOpenAI, sides: Sides, side: Side, sizes: Sizes): Promise<{ rss: Memory; heap: Heap }> {
  const { conversations, turns, sockets, parallel } = sizes;
  await answers(fake, `scnmem${side}`, conversations * turns + 2 * HEAP_SAMPLE + 10);
  const ids = Array.from({ length: conversations }, (_, i) => `mem${i}`);
  const dev = await sides.start(side);
  const held = new Held();
  try {
    const base = workerRssMiB(dev);
    for (let t = 0; t < turns; t++) {
      progress(`${side}: turn ${t + 1} of ${turns} in ${conversations} conversations`);
      await inParallel(ids, parallel, (id) => held.turn(side, dev.url, id, t === 0 ? `hello [scnmem${side}]` : `message ${t}`));
    }
    const withConversations = workerRssMiB(dev);
    progress(`${side}: ${sockets} sockets`);
    await held.open(side, dev.url, ids.slice(0, sockets), parallel);
    const withSockets = workerRssMiB(dev);
    progress(`${side}: idle past eviction`);
    await idle();
    const rss = {
      base,
      conversations: perItemKiB(withConversations, base, conversations),
      sockets: perItemKiB(withSockets, withConversations, sockets),
      hibernated: perItemKiB(workerRssMiB(dev), base, conversations),
    };
    held.close();
    // The last conversation warms the heap up; the sample is from the others.
    const heap = await heapOf(sides, side, ids.at(-1)!, ids.slice(0, Math.min(HEAP_SAMPLE, conversations - 1)), parallel);
    return { rss, heap };
  } finally {
    held.close();
    await sides.stop(side);
  }
}

/**
 * The live heap after a restart on the stored conversations: once `warmId` has been woken and evicted (the code it ran
 * compiled), then with `ids` woken by a turn each, with a socket more each, and idle past eviction.
 */
async function heapOf(sides: Sides, side: Side, warmId: string, ids: string[], parallel: number): Promise<Heap> {
  await sides.stop(side);
  const dev = await sides.start(side);
  const heap = await liveHeap(dev);
  const held = new Held();
  try {
    progress(`${side}: live heap, warming up`);
    // Code compiled on first use stays in the heap for good: one conversation's turn and socket first, then evicted.
    const warm = new Held();
    await warm.turn(side, dev.url, warmId, "one more");
    await warm.open(side, dev.url, [warmId], 1);
    warm.close();
    await idle();
    // Resident memory first: a snapshot's own allocations stay resident, and later objects would reuse them unseen.
    progress(`${side}: resident, ${ids.length} conversations woken at once`);
    const rssBase = workerRssMiB(dev);
    await inParallel(ids, parallel, (id) => held.turn(side, dev.url, id, "one more"));
    const residentLive = perItemKiB(workerRssMiB(dev), rssBase, ids.length);
    await idle();
    const base = await heap.measure();
    progress(`${side}: live heap, ${ids.length} conversations woken`);
    await inParallel(ids, parallel, (id) => held.turn(side, dev.url, id, "and one more"));
    const withConversations = await heap.measure();
    await held.open(side, dev.url, ids, parallel);
    const withSockets = await heap.measure();
    await idle();
    const idled = await heap.measure();
    return {
      sample: ids.length,
      residentLive,
      base,
      conversations: perItemKiB(withConversations.data, base.data, ids.length),
      sockets: perItemKiB(withSockets.data, withConversations.data, ids.length),
      hibernated: perItemKiB(idled.data, base.data, ids.length),
    };
  } finally {
    heap.close();
    held.close();
  }
}

const rounds = (values: number[]) => values.map((v) => v.toFixed(0)).join(" ");
const ms = (values: number[]) => `${median(values).toFixed(0)} ms`;
const ratio = (ours: number, peer: number) => `${(ours / peer).toFixed(2)}×`;
const kib = (value: number) => `${value.toFixed(1)} KiB`;
const mib = (value: number) => `${value.toFixed(1)} MiB`;

/** The value after a flag, as a number, else `fallback`. */
function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}

/** The sizes of a quick or full run, with `--conversations`, `--turns` and `--sockets` overriding theirs (sockets: at most one a conversation). */
function sizesFromFlags(base: Sizes): Sizes {
  const conversations = flag("--conversations", base.conversations);
  const sockets = Math.min(flag("--sockets", base.sockets), conversations);
  return { ...base, conversations, turns: flag("--turns", base.turns), sockets };
}

/** The memory table's rows: one per measure, each side's figure and the ratio. */
function memoryRows(sides: Partial<Record<Side, { rss: Memory; heap: Heap }>>, sizes: Sizes): string[][] {
  const { ours, peer } = sides;
  const row = (what: string, read: (found: { rss: Memory; heap: Heap }) => number, unit: (value: number) => string) => {
    const [a, b] = [ours && read(ours), peer && read(peer)];
    return [what, a === undefined ? "" : unit(a), b === undefined ? "" : unit(b), a !== undefined && b !== undefined ? ratio(a, b) : ""];
  };
  const sample = (ours ?? peer)!.heap.sample;
  return [
    row("workerd resident memory before any conversation", (f) => f.rss.base, mib),
    row(`resident memory per conversation of ${sizes.turns} turns, just after its turns`, (f) => f.rss.conversations, kib),
    row("resident memory per open socket", (f) => f.rss.sockets, kib),
    row("resident memory per conversation, its sockets open, after 15 s idle (hibernation)", (f) => f.rss.hibernated, kib),
    row(`resident memory per live conversation (${sample} woken at once after a restart)`, (f) => f.heap.residentLive, kib),
    row("live heap with no conversation in memory (after a full collection)", (f) => f.heap.base.total, mib),
    row("… of which data (less compiled code)", (f) => f.heap.base.data, mib),
    row(`live data per conversation just after a turn (${sample} woken after a restart)`, (f) => f.heap.conversations, kib),
    row("live data per open socket", (f) => f.heap.sockets, kib),
    row("live data per conversation, its sockets open, after 15 s idle (hibernation)", (f) => f.heap.hibernated, kib),
  ];
}

const table = (rows: string[][]) => rows.map((cells) => `| ${cells.join(" | ")} |`);

/** Removes the run's storage; a workerd still closing thousands of databases may hold a folder a while, which leaves it. */
function removeScratch(scratch: string): void {
  try {
    rmSync(scratch, { recursive: true, force: true, maxRetries: 10, retryDelay: 500 });
  } catch (error) {
    console.error(`bench scale: ${scratch} is left behind (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** One side's memory alone, with the sizes the flags give. */
async function oneSide(side: Side): Promise<void> {
  const sizes = sizesFromFlags(QUICK);
  const fake = await startFakeOpenAI();
  const scratch = mkdtempSync(join(tmpdir(), "bench-scale-"));
  try {
    const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "1000000" };
    const found = await memory(fake, new Sides(scratch, vars), side, sizes);
    console.log(`${side}: ${sizes.conversations} conversations × ${sizes.turns} turns, ${sizes.sockets} sockets`);
    console.log(table(memoryRows({ [side]: found }, sizes)).join("\n"));
  } finally {
    await fake.close();
    removeScratch(scratch);
  }
}

async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const coldOnly = process.argv.includes("--cold");
  const memoryOnly = process.argv.includes("--memory");
  const sizes = sizesFromFlags(quick ? QUICK : FULL);
  installPeer();
  const fake = await startFakeOpenAI();
  const scratch = mkdtempSync(join(tmpdir(), "bench-scale-"));
  const sides = new Sides(scratch, { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "1000000" });
  try {
    const cold = memoryOnly ? undefined : await coldStart(fake, sides, sizes);
    const mem: Partial<Record<Side, { rss: Memory; heap: Heap }>> = {};
    // The side measured first alternates between runs of the bench (by the minute it starts), as one run cannot hold both at once.
    const order: Side[] = new Date().getMinutes() % 2 === 0 ? ["ours", "peer"] : ["peer", "ours"];
    if (!coldOnly)
      for (const side of order) mem[side] = await memory(fake, new Sides(join(scratch, `mem-${side}`), sides.vars), side, sizes);
    console.log(
      [
        `Scale, this project against AIChatAgent (${quick ? "quick" : "full"}: ${sizes.rounds} restarts a side, ${sizes.storedTurns * 2} messages stored; ${coldOnly ? "no memory measured" : `${sizes.conversations} conversations × ${sizes.turns} turns, ${sizes.sockets} sockets; memory measured ${order.join(" then ")}`})`,
        "",
        "| measure | this project | AIChatAgent | this / peer |",
        "|---|---:|---:|---:|",
        ...(cold ? table(coldRows(cold, sizes.storedTurns * 2)) : []),
        ...(coldOnly ? [] : table(memoryRows(mem, sizes))),
        "",
        ...(["cold", "warm"] as const).flatMap((kind) =>
          cold ? [`${kind} turns, each round (ms): ${COLD_SIDES.map((side) => `${side} ${rounds(cold[side][kind])}`).join("; ")}`] : [],
        ),
      ].join("\n"),
    );
  } finally {
    await fake.close();
    removeScratch(scratch);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const side = process.argv[process.argv.indexOf("--side") + 1];
  if (process.argv.includes("--side")) {
    if (side !== "ours" && side !== "peer") throw new Error(`--side takes ours or peer, not ${side}`);
    installPeer();
    await oneSide(side);
  } else await main();
  process.exit(0);
}
