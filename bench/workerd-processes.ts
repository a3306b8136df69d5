/**
 * The workerd processes of a `wrangler dev` (its process group): their memory and CPU time from
 * the operating system (Linux: `ps` and every thread's `schedstat`), and the address of the
 * Worker's own workerd. wrangler dev runs two: its proxy, on the dev port, which forwards each
 * request to the second, where the Worker runs. The proxy reads the Worker's response whatever the
 * client's pace, so a bench about slow clients talks to the Worker's workerd directly, whose socket
 * carries the client's backpressure to the Worker as Cloudflare's edge does.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import type { WranglerDev } from "../test/e2e/wrangler-dev.ts";

/** `ps` lines of the workerd processes under the dev: pid, then the columns asked for. */
function workerdLines(dev: WranglerDev, column: "pid" | "rss"): string[] {
  return execFileSync("ps", ["-o", `${column}=,comm=`, "-g", String(dev.pid)], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes("workerd"))
    .map((line) => line.trim().split(/\s+/)[0]!);
}

/** Resident memory of the dev's workerd processes, in MiB. */
export function workerdRssMiB(dev: WranglerDev): number {
  return workerdLines(dev, "rss").reduce((sum, kib) => sum + Number(kib), 0) / 1024;
}

/** Resident memory of the workerd the Worker runs in (not wrangler's proxy), in MiB. */
export function workerRssMiB(dev: WranglerDev): number {
  const status = readFileSync(`/proc/${workerdRoles(dev).worker}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** CPU time so far, in milliseconds, of every thread of the dev's workerd processes. */
export function workerdCpuMs(dev: WranglerDev): number {
  return workerdLines(dev, "pid").reduce((ms, pid) => ms + processCpuMs(pid), 0);
}

/** CPU time so far, in milliseconds, of every thread of one process. */
export function processCpuMs(pid: string): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // A thread that ended between the listing and the read.
    }
  }
  return ns / 1e6;
}

/** The dev's two workerd processes: its proxy (on the dev port) and the one the Worker runs in. */
export function workerdRoles(dev: WranglerDev): { proxy: string; worker: string } {
  const listening = execFileSync("ss", ["-ltnp"], { encoding: "utf8" }).split("\n");
  const devPort = new URL(dev.url).port;
  const pids = workerdLines(dev, "pid");
  const proxy = pids.find((pid) => listening.some((line) => line.includes(`pid=${pid},`) && line.includes(`127.0.0.1:${devPort} `)));
  const worker = pids.find((pid) => pid !== proxy);
  if (!proxy || !worker) throw new Error(`cannot tell this wrangler dev's proxy from its Worker among workerd ${pids.join(", ")}`);
  return { proxy, worker };
}

/** CPU, in milliseconds, of the dev's proxy workerd and of the one the Worker runs in. */
export interface SplitCpu {
  proxy: number;
  worker: number;
}

/** What one request costs each of the dev's two workerd processes, in milliseconds, as `turnCpuMs` counts it. */
export async function splitCpuMs(dev: WranglerDev, work: () => Promise<unknown>): Promise<SplitCpu> {
  const { proxy, worker } = workerdRoles(dev);
  const [forProxy, forWorker] = await spentCpuMs(() => [processCpuMs(proxy), processCpuMs(worker)], work);
  return { proxy: forProxy!, worker: forWorker! };
}

/** CPU `work` costs each counter `read` gives, settled after it, less what each spends idle over the same wait. */
async function spentCpuMs(read: () => number[], work: () => Promise<unknown>): Promise<number[]> {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 150));
  const idleStart = read();
  await settle();
  const idle = read().map((ms, i) => ms - idleStart[i]!);
  const before = read();
  await work();
  await settle();
  return read().map((ms, i) => ms - before[i]! - idle[i]!);
}

/**
 * What one turn costs the dev's workerd in CPU, milliseconds: with the work it leaves for after
 * its response (waitUntil) settled, less what workerd spends idle over the same wait.
 */
export async function turnCpuMs(dev: WranglerDev, turn: () => Promise<unknown>): Promise<number> {
  const [spent] = await spentCpuMs(() => [workerdCpuMs(dev)], turn);
  return spent!;
}

/** The Worker's own workerd: the one that answers /v1/agents on a port other than the dev proxy's. */
export async function directUrl(dev: WranglerDev): Promise<string> {
  const listening = execFileSync("ss", ["-ltnp"], { encoding: "utf8" }).split("\n");
  const devPort = new URL(dev.url).port;
  for (const pid of workerdLines(dev, "pid")) {
    const ports = listening.filter((line) => line.includes(`pid=${pid},`)).map((line) => /127\.0\.0\.1:(\d+)/.exec(line)?.[1]);
    if (ports.includes(devPort)) continue;
    for (const port of ports) {
      const url = `http://127.0.0.1:${port}`;
      const res = await fetch(`${url}/v1/agents`).catch(() => null);
      await res?.body?.cancel();
      if (res?.ok) return url;
    }
  }
  throw new Error("no workerd of this wrangler dev answers /v1/agents besides its proxy");
}
