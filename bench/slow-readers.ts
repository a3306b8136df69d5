/**
 * Clients that never read: 200 clients subscribe to a turn's stream and read nothing while it
 * streams 16 MiB (twice the per-reader lag bound), then 30
 * ask for the replay of that finished turn and read nothing. Figures: workerd's memory growth,
 * and how many admitted live readers the lag bound let go (their stream ends short, to be resumed
 * with Last-Event-ID) — the bound holds end to end only if the Worker pulls events from the
 * Durable Object as its own response is read. Through `wrangler dev` against the fake provider.
 *
 *   npm run bench:slow-readers [-- --direct] [-- --baseline <git ref>]
 *     --direct    requests go to the Worker's own workerd, past wrangler dev's proxy (which reads
 *                 responses whatever the client's pace): bench/workerd-processes.ts
 *     --baseline  also measures the Worker as it was at <ref> (a git worktree), first, in the same run
 *     LIVE_READERS=20 for a smaller run; TURN_MIB=6 for the turn of the first runs, below the bound
 */
import { mkdtempSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startFakeOpenAI, type FakeOpenAI } from "../test/node/fake-openai-server.ts";
import { startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { directUrl, workerdRssMiB } from "./workerd-processes.ts";
import { worktree } from "./worktree.ts";

const LIVE_READERS = Number(process.env.LIVE_READERS ?? 200);
const REPLAY_READERS = 30;
const TURN_BYTES = Number(process.env.TURN_MIB ?? 16) * 1024 * 1024;

/** Where the Worker runs: its address, and the resident memory of its workerd processes in MiB. */
interface Target {
  url: string;
  rssMiB(): number;
  stop(): Promise<void>;
}

/**
 * Under `wrangler dev` (in `cwd`, another checkout, when given): its workerd processes (the dev
 * proxy's and the Worker's), by process group; `direct`, requests go to the Worker's own workerd.
 */
async function underWranglerDev(vars: Record<string, string>, direct: boolean, cwd?: string): Promise<Target> {
  const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-slow-"));
  const dev = await startWranglerDev({ persistTo, vars, ...(cwd ? { cwd } : {}) });
  return {
    url: direct ? await directUrl(dev) : dev.url,
    rssMiB: () => workerdRssMiB(dev),
    stop: async () => {
      await dev.stop();
      rmSync(persistTo, { recursive: true, force: true });
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface NonReader {
  socket: Socket;
  status: number | null;
  /** What arrived once the socket reads again, to its end: its last bytes, and how many in all. */
  rest(): Promise<{ tail: string; bytes: number }>;
}

/** Sends a GET and reads nothing of the answer past its status line: the socket is paused. */
function nonReader(url: string, path: string): Promise<NonReader> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n`);
      socket.once("data", (chunk: Buffer) => {
        socket.pause();
        const rest = () =>
          new Promise<{ tail: string; bytes: number }>((done) => {
            // The tail says whether the stream ended with its terminal event; the count, how much was in the pipe.
            let tail = chunk.toString("latin1");
            let bytes = chunk.length;
            socket.on("data", (more: Buffer) => {
              tail = (tail + more.toString("latin1")).slice(-4096);
              bytes += more.length;
            });
            socket.once("close", () => done({ tail, bytes }));
            socket.resume();
          });
        resolve({ socket, status: Number(/^HTTP\/1\.1 (\d+)/.exec(chunk.toString("latin1"))?.[1] ?? 0) || null, rest });
      });
    });
    socket.on("error", reject);
  });
}

const tally = (statuses: Array<number | null>) => {
  const counts = new Map<string, number>();
  for (const status of statuses) counts.set(String(status), (counts.get(String(status)) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n}× ${status}`).join(", ");
};

/** One Worker's figures: the replays of a finished turn, then the subscribers to a live one. */
async function measure(fake: FakeOpenAI, dev: Target, label: string, id: string): Promise<string[]> {
  const text = "x".repeat(TURN_BYTES);
  const answer = { text, chunkChars: 6000, delayMs: 1 };
  await fetch(`${fake.url}/__scenarios`, { method: "POST", body: JSON.stringify({ id, answers: [answer, { ...answer, holdAfter: 2 }] }) });
  const send = (message: string) =>
    fetch(`${dev.url}/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message }),
    });
  await (await send(`stream a lot [${id}]`)).text();
  await sleep(1000);

  const beforeReplay = dev.rssMiB();
  const replays: NonReader[] = [];
  for (let i = 0; i < REPLAY_READERS; i++) replays.push(await nonReader(dev.url, `/v1/conversations/${id}/events?after=0`));
  await sleep(2000);
  const replay = dev.rssMiB() - beforeReplay;
  for (const r of replays) r.socket.destroy();
  await sleep(2000);

  const base = dev.rssMiB();
  const turn = await send("and again");
  const live: NonReader[] = [];
  for (let i = 0; i < LIVE_READERS; i++) live.push(await nonReader(dev.url, `/v1/conversations/${id}/events`));
  await fetch(`${fake.url}/__scenarios/${id}/release`, { method: "POST" });
  await turn.text();
  await sleep(1000);
  const grown = dev.rssMiB() - base;
  const admitted = live.filter((r) => r.status === 200);
  const ends = await Promise.all(admitted.map((r) => r.rest()));
  const cut = ends.filter(({ tail }) => !/event: (done|error)/.test(tail));
  const got = cut.map((end) => end.bytes).sort((a, b) => a - b);
  const inPipe = got.length ? `${(got[Math.floor(got.length / 2)]! / 2 ** 20).toFixed(1)} MiB` : "–";
  for (const r of live) r.socket.destroy();
  const mib = (TURN_BYTES / 2 ** 20).toFixed(0);
  return [
    `| ${label} | ${LIVE_READERS} subscribers to a live turn streaming ${mib} MiB | ${tally(live.map((r) => r.status))} | ${grown.toFixed(1)} MiB | ${cut.length} of ${admitted.length} | ${inPipe} |`,
    `| ${label} | ${REPLAY_READERS} replays of that finished turn | ${tally(replays.map((r) => r.status))} | ${replay.toFixed(1)} MiB | | |`,
  ];
}

export async function slowReaderRows(options: { direct?: boolean; baseline?: string } = {}): Promise<string[]> {
  const fake = await startFakeOpenAI();
  const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "1000" };
  const rows = [
    `Requests ${options.direct ? "to the Worker's own workerd (past wrangler dev's proxy)" : "through wrangler dev"}.`,
    "",
    "| Worker | clients that never read | answers | workerd RSS growth | streams the lag bound let go | what a reader let go had received, median |",
    "|---|---|---:|---:|---:|---:|",
  ];
  try {
    if (options.baseline) {
      const tree = worktree(options.baseline);
      try {
        const before = await underWranglerDev(vars, options.direct ?? false, tree.dir);
        try {
          rows.push(...(await measure(fake, before, `at ${options.baseline}`, "benchslowbaseline")));
        } finally {
          await before.stop();
        }
      } finally {
        tree.remove();
      }
    }
    const dev = await underWranglerDev(vars, options.direct ?? false);
    try {
      rows.push(...(await measure(fake, dev, "this checkout", "benchslow")));
    } finally {
      await dev.stop();
    }
  } finally {
    await fake.close();
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { direct: { type: "boolean" }, baseline: { type: "string" } } });
  console.log(
    (await slowReaderRows({ direct: values.direct ?? false, ...(values.baseline ? { baseline: values.baseline } : {}) })).join("\n"),
  );
  process.exit(0);
}
