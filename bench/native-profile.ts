/**
 * Where the Worker's workerd spends a turn natively, which workerd's inspector cannot see (its
 * profile leaves ~20 ms a turn to no frame): Linux `perf record` of the Worker's workerd process
 * (its binary keeps its symbols) over socket turns of bench/peers/ours, each sample put in the first
 * part its stack names from the leaf up; wrangler dev's trace collector (its tail Worker, fed every
 * span: each SQL statement, fetch and log line) is told apart wherever it is on the stack.
 *
 *   npm run bench:native -- [--turns 40]      (needs perf: Debian's linux-perf)
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { OursSocket, oursTurn } from "./peer-clients.ts";
import { startToolTurnDev } from "./tool-turn-dev.ts";
import { workerdRoles } from "./workerd-processes.ts";
import { partOf, stacks } from "./perf-parts.ts";

const at = process.argv.indexOf("--turns");
const TURNS = at < 0 ? 40 : Number(process.argv[at + 1]);

const { dev, scratch, stop } = await startToolTurnDev({ name: "native", scenario: "scnnat", answers: TURNS + 12 });
const data = join(scratch, "perf.data");
try {
  await oursTurn(dev.url, "native", "where is A1001? [scnnat]");
  const socket = await OursSocket.open(dev.url, "native");
  for (let t = 0; t < 10; t++) await socket.turn(`warm ${t}`);
  const perf = spawn("perf", ["record", "-F", "4999", "-g", "-o", data, "-p", workerdRoles(dev).worker], { stdio: "ignore" });
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (let t = 0; t < TURNS; t++) await socket.turn(`and A1001 now? ${t}`);
  perf.kill("SIGINT");
  await new Promise((resolve) => perf.on("exit", resolve));
  socket.close();
  const counts = new Map<string, number>();
  const all = stacks(data);
  for (const stack of all) counts.set(partOf(stack), (counts.get(partOf(stack)) ?? 0) + 1);
  console.log(`The Worker's workerd over ${TURNS} socket turns (${all.length} samples at 4999 Hz):\n\n| part | share |\n|---|---:|`);
  for (const [name, n] of [...counts].sort((a, b) => b[1] - a[1])) console.log(`| ${name} | ${((100 * n) / all.length).toFixed(1)}% |`);
} finally {
  await stop();
}
