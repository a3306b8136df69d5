/**
 * What workerd charges an SSE turn before any of this project's code runs: the Worker's workerd's
 * CPU (from the OS, the dev proxy's left out) for a bare request, an RPC call to a Durable Object,
 * and `n` chunks streamed from the Worker itself, from an RPC method's ReadableStream (as this
 * project's turns stream) and from the object's own `fetch`, the kinds alternating.
 *
 *   npm run bench:floor -- [--requests 40]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { median } from "./loop-overhead.ts";
import { splitCpuMs } from "./workerd-processes.ts";

const at = process.argv.indexOf("--requests");
const REQUESTS = at < 0 ? 40 : Number(process.argv[at + 1]);
const KINDS = [
  ["a bare answer", "/bare"],
  ["an RPC call that answers a string", "/call"],
  ["1 chunk streamed by the Worker", "/local?n=1"],
  ["20 chunks streamed by the Worker", "/local?n=20"],
  ["1 chunk through an RPC method's ReadableStream", "/rpc?n=1"],
  ["20 chunks through an RPC method's ReadableStream", "/rpc?n=20"],
  ["20 chunks through the object's fetch", "/fetch?n=20"],
] as const;

const scratch = mkdtempSync(join(tmpdir(), "bench-floor-"));
const config = new URL("./peers/floor/wrangler.toml", import.meta.url).pathname;
const dev = await startWranglerDev({ persistTo: scratch, vars: {}, config });
try {
  const request = async (path: string) => (await fetch(`${dev.url}${path}`, { method: "POST", body: "hello" })).text();
  for (const [, path] of KINDS) for (let i = 0; i < 5; i++) await request(path);
  const cpu = new Map<string, number[]>(KINDS.map(([, path]) => [path, []]));
  for (let i = 0; i < REQUESTS; i++) for (const [, path] of KINDS) cpu.get(path)!.push((await splitCpuMs(dev, () => request(path))).worker);
  console.log(`\n| request (the Worker's workerd, median of ${REQUESTS}) | CPU |\n|---|---:|`);
  for (const [name, path] of KINDS) console.log(`| ${name} | ${median(cpu.get(path)!).toFixed(2)} ms |`);
} finally {
  await dev.stop();
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(0);
