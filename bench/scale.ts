/**
 * What a deployment at scale costs, this project against Cloudflare's AIChatAgent side by side in
 * one run (issue 67): each side under its own `wrangler dev`, on one fake provider.
 *
 * 1. Cold start: a conversation holding 200 messages, then workerd restarted (a fresh isolate),
 *    then the first turn to its first token. The sides restart and answer in turn, the side that
 *    goes first alternating round by round. wrangler dev's readiness probe has evaluated the
 *    Worker's script by then, so this is the object's start (its constructor, its storage read) and
 *    the turn; what evaluating the script costs grows with the bundle, measured by bench:bundle.
 * 2. Memory: `conversations` conversations each given `turns` turns of history and kept live (the
 *    peer's over a socket each, as its client talks; ours over SSE), then one more socket on
 *    `sockets` of them (a second tab); resident memory of the Worker's workerd before and after
 *    each, divided per conversation and per socket.
 *
 *   node bench/scale.ts [--quick]       (npm run bench:scale)
 *   node bench/scale.ts --side ours [--conversations 100] [--turns 1]   one side's memory alone, to look into it
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { type FakeOpenAI, startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { median } from "./loop-overhead.ts";
import { OursSocket, oursTurn, PeerChat } from "./peer-clients.ts";
import { installPeer, PEER_DIR, script } from "./peer.ts";
import { workerRssMiB } from "./workerd-processes.ts";

const OURS_CONFIG = new URL("./peers/ours/wrangler.toml", import.meta.url).pathname;

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

/** Scripts `count` short answers for the scenario `id`. */
const answers = (fake: FakeOpenAI, id: string, count: number) =>
  script(
    fake,
    id,
    Array.from({ length: count }, (_, i) => ({ text: `Answer number ${i}: all good.` })),
  );

class Sides {
  readonly dirs: Record<Side, string>;
  devs: Partial<Record<Side, WranglerDev>> = {};
  readonly vars: Record<string, string>;
  constructor(scratch: string, vars: Record<string, string>) {
    this.vars = vars;
    this.dirs = { ours: join(scratch, "ours"), peer: join(scratch, "peer") };
  }
  async start(side: Side): Promise<WranglerDev> {
    const dev =
      side === "ours"
        ? await startWranglerDev({ persistTo: this.dirs.ours, vars: this.vars, config: OURS_CONFIG })
        : await startWranglerDev({ persistTo: this.dirs.peer, vars: this.vars, cwd: PEER_DIR, ready: "/" });
    this.devs[side] = dev;
    return dev;
  }
  async stop(side: Side): Promise<void> {
    await this.devs[side]?.stop();
    delete this.devs[side];
  }
}

/** One turn of a side's conversation, to its end; the peer's chat stays open (a socket, as useAgentChat keeps one). */
async function turn(side: Side, url: string, chats: Map<string, PeerChat>, id: string, text: string): Promise<number> {
  if (side === "ours") return (await oursTurn(url, id, text)).firstMs;
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

/** 1. The first turn after a restart on a conversation of `storedTurns` turns (the peer's connect counted: its client must connect first). */
async function coldStart(fake: FakeOpenAI, sides: Sides, { rounds, storedTurns }: Sizes): Promise<Record<Side, number[]>> {
  const found: Record<Side, number[]> = { ours: [], peer: [] };
  for (const side of ["ours", "peer"] as const) {
    await answers(fake, `scncold${side}`, storedTurns + rounds + 2);
    const dev = await sides.start(side);
    const chats = new Map<string, PeerChat>();
    progress(`${side}: ${storedTurns} turns of history`);
    for (let i = 0; i < storedTurns; i++) await turn(side, dev.url, chats, "cold", i === 0 ? `hello [scncold${side}]` : `message ${i}`);
    for (const chat of chats.values()) chat.close();
    await sides.stop(side);
  }
  for (let round = 0; round < rounds; round++) {
    const order: Side[] = round % 2 === 0 ? ["ours", "peer"] : ["peer", "ours"];
    for (const side of order) {
      progress(`cold start round ${round + 1}: ${side}`);
      const dev = await sides.start(side);
      const chats = new Map<string, PeerChat>();
      found[side].push(await turn(side, dev.url, chats, "cold", `after restart ${round}`));
      for (const chat of chats.values()) chat.close();
      await sides.stop(side);
    }
  }
  return found;
}

interface Memory {
  base: number;
  conversations: number;
  sockets: number;
}

/** 2. Resident memory with `conversations` live conversations of `turns` turns, then with `sockets` sockets more. */
async function memory(fake: FakeOpenAI, sides: Sides, side: Side, sizes: Sizes): Promise<Memory> {
  const { conversations, turns, sockets, parallel } = sizes;
  await answers(fake, `scnmem${side}`, conversations * turns + 10);
  const dev = await sides.start(side);
  const chats = new Map<string, PeerChat>();
  const held: Array<{ close(): void }> = [];
  try {
    const base = workerRssMiB(dev);
    const ids = Array.from({ length: conversations }, (_, i) => `mem${i}`);
    for (let t = 0; t < turns; t++) {
      progress(`${side}: turn ${t + 1} of ${turns} in ${conversations} conversations`);
      await inParallel(ids, parallel, (id) => turn(side, dev.url, chats, id, t === 0 ? `hello [scnmem${side}]` : `message ${t}`));
    }
    const withConversations = workerRssMiB(dev);
    progress(`${side}: ${sockets} sockets`);
    // One more socket on each of `sockets` live conversations: a second tab (the peer's chats hold a socket each already).
    await inParallel(ids.slice(0, sockets), parallel, async (id) => {
      held.push(side === "ours" ? await OursSocket.open(dev.url, id) : await PeerChat.open(dev.url, id));
    });
    const withSockets = workerRssMiB(dev);
    return {
      base,
      conversations: (withConversations - base) / conversations,
      sockets: (withSockets - withConversations) / sockets,
    };
  } finally {
    for (const chat of chats.values()) chat.close();
    for (const socket of held) socket.close();
    await sides.stop(side);
  }
}

const ms = (values: number[]) => `${median(values).toFixed(0)} ms`;
const ratio = (ours: number, peer: number) => `${(ours / peer).toFixed(2)}×`;

/** The value after a flag, as a number, else `fallback`. */
function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  return at < 0 ? fallback : Number(process.argv[at + 1]);
}

/** One side's memory alone, with the sizes the flags give. */
async function oneSide(side: Side): Promise<void> {
  const sizes = { ...QUICK, conversations: flag("--conversations", QUICK.conversations), turns: flag("--turns", QUICK.turns) };
  sizes.sockets = Math.min(sizes.sockets, sizes.conversations);
  const fake = await startFakeOpenAI();
  const scratch = mkdtempSync(join(tmpdir(), "bench-scale-"));
  try {
    const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "1000000" };
    const found = await memory(fake, new Sides(scratch, vars), side, sizes);
    console.log(
      `${side}: ${sizes.conversations} conversations × ${sizes.turns} turns: base ${found.base.toFixed(1)} MiB, ` +
        `${(found.conversations * 1024).toFixed(1)} KiB a conversation, ${(found.sockets * 1024).toFixed(1)} KiB a socket`,
    );
  } finally {
    await fake.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const quick = process.argv.includes("--quick");
  const sizes = quick ? QUICK : FULL;
  installPeer();
  const fake = await startFakeOpenAI();
  const scratch = mkdtempSync(join(tmpdir(), "bench-scale-"));
  const sides = new Sides(scratch, { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "1000000" });
  try {
    const cold = await coldStart(fake, sides, sizes);
    const mem: Partial<Record<Side, Memory>> = {};
    // The side measured first alternates between runs of the bench (by the minute it starts), as one run cannot hold both at once.
    const order: Side[] = new Date().getMinutes() % 2 === 0 ? ["ours", "peer"] : ["peer", "ours"];
    for (const side of order) mem[side] = await memory(fake, new Sides(join(scratch, `mem-${side}`), sides.vars), side, sizes);
    const { ours, peer } = mem as Record<Side, Memory>;
    console.log(
      [
        `Scale, this project against AIChatAgent (${quick ? "quick" : "full"}: ${sizes.rounds} restarts a side, ${sizes.storedTurns * 2} messages stored; ${sizes.conversations} conversations × ${sizes.turns} turns, ${sizes.sockets} sockets; memory measured ${order.join(" then ")})`,
        "",
        "| measure | this project | AIChatAgent | this / peer |",
        "|---|---:|---:|---:|",
        `| first turn after a restart, ${sizes.storedTurns * 2} messages stored, to the first token (median) | ${ms(cold.ours)} | ${ms(cold.peer)} | ${ratio(median(cold.ours), median(cold.peer))} |`,
        `| workerd resident memory before any conversation | ${ours.base.toFixed(1)} MiB | ${peer.base.toFixed(1)} MiB | ${ratio(ours.base, peer.base)} |`,
        `| memory per live conversation of ${sizes.turns} turns | ${(ours.conversations * 1024).toFixed(1)} KiB | ${(peer.conversations * 1024).toFixed(1)} KiB | ${ratio(ours.conversations, peer.conversations)} |`,
        `| memory per open socket | ${(ours.sockets * 1024).toFixed(1)} KiB | ${(peer.sockets * 1024).toFixed(1)} KiB | ${ratio(ours.sockets, peer.sockets)} |`,
        "",
        `cold start, each round (ms): ours ${cold.ours.map((v) => v.toFixed(0)).join(" ")}; peer ${cold.peer.map((v) => v.toFixed(0)).join(" ")}`,
      ].join("\n"),
    );
  } finally {
    await fake.close();
    rmSync(scratch, { recursive: true, force: true });
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
