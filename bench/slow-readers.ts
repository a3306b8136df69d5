/**
 * Clients that never read: how much workerd's memory grows when 200 clients subscribe to a turn's
 * stream and read nothing while it streams ~6 MB, and when 30 clients ask for the replay of that
 * finished turn and read nothing. Measured through `wrangler dev` against the fake provider.
 *
 *   npm run bench:slow-readers        (LIVE_READERS=20 for a smaller run; -- --direct: to the Worker's
 *                                     own workerd, past wrangler dev's proxy, bench/direct-workerd.ts)
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { directUrl } from "./direct-workerd.ts";

const LIVE_READERS = Number(process.env.LIVE_READERS ?? 200);
const REPLAY_READERS = 30;
const TURN_BYTES = 6 * 1024 * 1024;

/** Where the Worker runs: its address, and the resident memory of its workerd processes in MiB. */
interface Target {
  url: string;
  rssMiB(): number;
  stop(): Promise<void>;
}

/**
 * Under `wrangler dev`: its workerd processes (the dev proxy's and the Worker's), by process group;
 * `direct`, its Worker's own workerd is sent the requests, with the dev proxy out of the way.
 */
async function underWranglerDev(persistTo: string, vars: Record<string, string>, direct: boolean): Promise<Target> {
  const dev = await startWranglerDev({ persistTo, vars });
  const rssMiB = () =>
    execFileSync("ps", ["-o", "rss=,comm=", "-g", String(dev.pid)], { encoding: "utf8" })
      .split("\n")
      .filter((line) => line.includes("workerd"))
      .reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[0]), 0) / 1024;
  return { url: direct ? await directUrl(dev) : dev.url, rssMiB, stop: () => dev.stop() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends a GET and never reads the answer: the socket is paused from the start. */
function nonReader(url: string, path: string): Promise<{ socket: Socket; status: number | null }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\n\r\n`);
      // Read only the status line, then stop reading for good.
      socket.once("data", (chunk: Buffer) => {
        socket.pause();
        resolve({ socket, status: Number(/^HTTP\/1\.1 (\d+)/.exec(chunk.toString("latin1"))?.[1] ?? 0) || null });
      });
    });
    socket.on("error", reject);
  });
}

export async function slowReaderRows(direct = false): Promise<string[]> {
  const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-slow-"));
  const fake = await startFakeOpenAI();
  const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "1000" };
  const dev = await underWranglerDev(persistTo, vars, direct);
  const workerdRssMiB = () => dev.rssMiB();
  const sockets: Socket[] = [];
  try {
    const id = "benchslow";
    const text = "x".repeat(TURN_BYTES);
    const answer = { text, chunkChars: 6000, delayMs: 1 };
    await fetch(`${fake.url}/__scenarios`, {
      method: "POST",
      body: JSON.stringify({ id, answers: [answer, { ...answer, holdAfter: 2 }] }),
    });
    const send = (message: string) =>
      fetch(`${dev.url}/v1/conversations/${id}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message }),
      });
    await (await send(`stream a lot [${id}]`)).text();
    await sleep(1000);

    const beforeReplay = workerdRssMiB();
    const replayStatuses = new Map<string, number>();
    for (let i = 0; i < REPLAY_READERS; i++) {
      const { socket, status } = await nonReader(dev.url, `/v1/conversations/${id}/events?after=0`);
      sockets.push(socket);
      replayStatuses.set(String(status), (replayStatuses.get(String(status)) ?? 0) + 1);
    }
    await sleep(2000);
    const replay = workerdRssMiB();
    for (const socket of sockets.splice(0)) socket.destroy();
    await sleep(2000);

    const base = workerdRssMiB();
    const turn = await send("and again");
    const statuses = new Map<string, number>();
    for (let i = 0; i < LIVE_READERS; i++) {
      const { socket, status } = await nonReader(dev.url, `/v1/conversations/${id}/events`);
      sockets.push(socket);
      statuses.set(String(status), (statuses.get(String(status)) ?? 0) + 1);
    }
    await fetch(`${fake.url}/__scenarios/${id}/release`, { method: "POST" });
    await turn.text();
    await sleep(1000);
    const live = workerdRssMiB();
    const fmt = (m: Map<string, number>) => [...m].map(([s, n]) => `${n}× ${s}`).join(", ");
    return [
      "| clients that never read | answers | workerd RSS growth |",
      "|---|---:|---:|",
      `| ${LIVE_READERS} subscribers to a live turn streaming ${(TURN_BYTES / 2 ** 20).toFixed(0)} MiB | ${fmt(statuses)} | ${(live - base).toFixed(1)} MiB |`,
      `| ${REPLAY_READERS} replays of that finished turn | ${fmt(replayStatuses)} | ${(replay - beforeReplay).toFixed(1)} MiB |`,
    ];
  } finally {
    for (const socket of sockets) socket.destroy();
    await dev.stop();
    await fake.close();
    rmSync(persistTo, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log((await slowReaderRows(process.argv.includes("--direct"))).join("\n"));
  process.exit(0);
}
