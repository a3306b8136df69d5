/**
 * The address of a `wrangler dev`'s Worker with the dev proxy out of the way. wrangler dev runs two
 * workerd processes: its proxy, on the dev port, which forwards each request to the second, where
 * the Worker runs. The proxy reads the Worker's response whatever the client's pace, so a bench
 * about slow clients talks to the Worker's own workerd, whose socket carries the client's
 * backpressure to the Worker as Cloudflare's edge does.
 */
import { execFileSync } from "node:child_process";
import type { WranglerDev } from "../test/e2e/wrangler-dev.ts";

export async function directUrl(dev: WranglerDev): Promise<string> {
  const pids = execFileSync("ps", ["-o", "pid=,comm=", "-g", String(dev.pid)], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.includes("workerd"))
    .map((line) => line.trim().split(/\s+/)[0]!);
  const listening = execFileSync("ss", ["-ltnp"], { encoding: "utf8" }).split("\n");
  const devPort = new URL(dev.url).port;
  for (const pid of pids) {
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
