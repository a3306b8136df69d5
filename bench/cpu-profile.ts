/**
 * Where a turn's CPU goes, alone: this project's side of the peer bench (bench/peers/ours, one
 * agent and `lookup_order`) under `wrangler dev` on the fake provider, a turn of a tool call and an
 * answer repeated, with CPU per turn from the OS (every workerd thread, less its idle) and a
 * profile from workerd's inspector. The tables bench:peer prints under its own, without the peer.
 * Beside it, the same Worker with CLIENT_LIMIT=off (bench/peers/ours/without-limiter.toml), socket
 * turns alternating between the two: what the per-client limiter costs a turn under wrangler dev,
 * whose stand-in for the rate-limiting binding is a Durable Object with a SQLite database of its own.
 *
 *   npm run bench:cpu -- [--turns 30] [--config path/to/wrangler.toml]
 */
import { join } from "node:path";
import { startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { median, p95 } from "./loop-overhead.ts";
import { OursSocket, oursTurn } from "./peer-clients.ts";
import { profile, profileLines } from "./profile.ts";
import { startToolTurnDev } from "./tool-turn-dev.ts";
import { splitCpuMs, turnCpuMs } from "./workerd-processes.ts";

const arg = (name: string) => {
  const at = process.argv.indexOf(`--${name}`);
  return at < 0 ? undefined : process.argv[at + 1];
};
const TURNS = Number(arg("turns") ?? 30);
const CONFIG = arg("config") ?? new URL("./peers/ours/wrangler.toml", import.meta.url).pathname;

type Split = { proxy: number; worker: number };

const { dev, vars, scratch, stop } = await startToolTurnDev({ name: "cpu", scenario: "scncpu", answers: 7 * TURNS + 20, config: CONFIG });
try {
  for (let t = 0; t < 3; t++) await oursTurn(dev.url, "cpu", t === 0 ? "where is A1001? [scncpu]" : `warm ${t}`);
  const cpu: number[] = [];
  const socketCpu: number[] = [];
  // A conversation of its own: a socket open on the SSE turns' conversation would be sent their events too.
  await oursTurn(dev.url, "cpu-socket", "where is A1001? [scncpu]");
  const socket = await OursSocket.open(dev.url, "cpu-socket");
  // Alternating: a turn over the chat endpoint (SSE), then one over the conversation's WebSocket.
  for (let t = 0; t < TURNS; t++) {
    cpu.push(await turnCpuMs(dev, () => oursTurn(dev.url, "cpu", `and A1001 now? ${t}`)));
    socketCpu.push(await turnCpuMs(dev, () => socket.turn(`and over the socket? ${t}`)));
  }
  // The same three kinds of request split by process: what the dev proxy takes, and the Worker's workerd.
  const split = { sse: [] as Split[], socket: [] as Split[], bare: [] as Split[] };
  for (let t = 0; t < TURNS; t++) {
    split.sse.push(await splitCpuMs(dev, () => oursTurn(dev.url, "cpu", `split ${t}`)));
    split.socket.push(await splitCpuMs(dev, () => socket.turn(`split over the socket ${t}`)));
    split.bare.push(await splitCpuMs(dev, () => fetch(`${dev.url}/v1/agents`).then((res) => res.text())));
  }
  socket.close();
  const limiter = await limiterCost(vars, scratch);
  const profiled = await profile(dev, async () => {
    for (let t = 0; t < TURNS; t++) await oursTurn(dev.url, "cpu", `profiled ${t}`);
  });
  const figures = (values: number[]) => `median ${median(values).toFixed(1)} ms, p95 ${p95(values).toFixed(1)} ms`;
  console.log(
    `CPU per turn (workerd, from the OS), ${TURNS} turns each, alternating: SSE ${figures(cpu)}; WebSocket ${figures(socketCpu)}`,
  );
  const cell = (rows: Split[], pick: (s: Split) => number) => `${median(rows.map(pick)).toFixed(1)} ms`;
  console.log("\n| request (medians) | dev proxy's workerd | the Worker's workerd | both |\n|---|---:|---:|---:|");
  for (const [name, rows] of [
    ["a turn over SSE (POST …/messages)", split.sse],
    ["a turn over the conversation's WebSocket", split.socket],
    ["a bare Worker request (GET /v1/agents: no Durable Object, no model)", split.bare],
  ] as const)
    console.log(`| ${name} | ${cell(rows, (s) => s.proxy)} | ${cell(rows, (s) => s.worker)} | ${cell(rows, (s) => s.proxy + s.worker)} |`);
  console.log(
    `\nThe per-client limiter under wrangler dev, socket turns alternating, median CPU of the Worker's workerd: with it ${limiter.with.toFixed(1)} ms, with CLIENT_LIMIT=off ${limiter.without.toFixed(1)} ms (${(limiter.with - limiter.without).toFixed(2)} ms a turn)`,
  );
  console.log(profileLines(profiled, TURNS).join("\n"));
} finally {
  await stop();
}
process.exit(0);

/** The Worker with and without the per-client limiter, each its own wrangler dev, socket turns alternating: medians of the Worker's workerd. */
async function limiterCost(vars: Record<string, string>, scratch: string): Promise<{ with: number; without: number }> {
  const unlimitedConfig = new URL("./peers/ours/without-limiter.toml", import.meta.url).pathname;
  const unlimited = await startWranglerDev({ persistTo: join(scratch, "unlimited"), vars, config: unlimitedConfig });
  const limited = await startWranglerDev({ persistTo: join(scratch, "limited"), vars, config: CONFIG });
  try {
    const sides = [
      { dev: limited, cpu: [] as number[] },
      { dev: unlimited, cpu: [] as number[] },
    ];
    const sockets: OursSocket[] = [];
    for (const side of sides) {
      await oursTurn(side.dev.url, "limiter", "where is A1001? [scncpu]");
      sockets.push(await OursSocket.open(side.dev.url, "limiter"));
    }
    for (let t = 0; t < TURNS + 3; t++)
      for (const [i, side] of sides.entries()) {
        const { worker } = await splitCpuMs(side.dev, () => sockets[i]!.turn(`limited or not? ${t}`));
        // The first turns of each warm its Worker up.
        if (t >= 3) side.cpu.push(worker);
      }
    for (const socket of sockets) socket.close();
    return { with: median(sides[0]!.cpu), without: median(sides[1]!.cpu) };
  } finally {
    await limited.stop();
    await unlimited.stop();
  }
}
