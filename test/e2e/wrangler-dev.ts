/** Starts the real `wrangler dev` with the project's wrangler.toml, for end-to-end tests. */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { checkEvent } from "../support/event-schema.ts";

export interface WranglerDev {
  url: string;
  /** The process group's id: wrangler and the workerd it runs (for memory figures). */
  pid: number;
  /** Where workerd's inspector (Chrome DevTools Protocol) listens: for profiles. */
  inspectorPort: number;
  /** Output so far, for failure messages. */
  log(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Ports handed out by this process: the OS may give a port again once its probe closes. */
const handedOut = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => {
        const address = server.address();
        server.close(() => (address && typeof address !== "string" ? resolve(address.port) : reject(new Error("no port"))));
      });
    });
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

/**
 * Every process group still running. The test runner must be able to exit whatever a test did
 * (a `before` that failed half-way leaves no handle to stop): the children are unref'd, and
 * whatever is left is killed as this process exits.
 */
const running = new Set<number>();
process.once("exit", () => {
  for (const pid of running) killGroup(pid, "SIGKILL");
});

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

type StartOptions = Parameters<typeof startWranglerDev>[0];

/**
 * `config`: another wrangler.toml than the project's (a test Worker's; several run in one `wrangler
 * dev`, the first served, the others reached through its service bindings); `cwd`: run another
 * project's own wrangler from its folder (the bench's peer), ready once `ready` answers at all;
 * `command`: how to start it there (`npm run dev --`, as a README says); `npmStartVars: false`:
 * none of `npm start`'s variables (ALLOW_ANONYMOUS, DEV_SIGN_IN), only the project's own and `vars`.
 */
export async function startWranglerDev(options: {
  persistTo: string;
  vars?: Record<string, string>;
  port?: number;
  config?: string | string[];
  cwd?: string;
  ready?: string;
  command?: string[];
  npmStartVars?: boolean;
}): Promise<WranglerDev> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      // Another process took a probed port between the probe and wrangler's bind: probe again.
      const taken = error instanceof Error && error.message.includes("Address already in use");
      if (!taken || options.port !== undefined || attempt === 3) throw error;
    }
  }
}

async function startOnce(options: StartOptions): Promise<WranglerDev> {
  const port = options.port ?? (await freePort());
  const inspectorPort = await freePort();
  const npmStart = options.npmStartVars === false ? {} : { ALLOW_ANONYMOUS: "true", DEV_SIGN_IN: "true" };
  const vars = Object.entries({ ...npmStart, ...options.vars }).flatMap(([key, value]) => ["--var", `${key}:${value}`]);
  const [command, ...commandArgs] = options.command ?? ["npx", "wrangler", "dev"];
  const child: ChildProcess = spawn(
    command!,
    [
      ...commandArgs,
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      options.persistTo,
      "--show-interactive-dev-session=false",
      ...[options.config ?? []].flat().flatMap((config) => ["--config", config]),
      ...vars,
    ],
    {
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
      ...(options.cwd ? { cwd: options.cwd } : {}),
    },
  );
  running.add(child.pid!);
  child.once("exit", () => running.delete(child.pid!));
  child.unref();
  for (const stream of [child.stdout, child.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      killGroup(child.pid!, "SIGKILL");
      throw new Error(`wrangler dev exited with ${child.exitCode}:\n${output}`);
    }
    try {
      const res = await fetch(`${url}${options.ready ?? "/v1/agents"}`);
      if (options.ready ? res.status < 500 : res.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      killGroup(child.pid!, "SIGKILL");
      throw new Error(`wrangler dev did not start within 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    url,
    pid: child.pid!,
    inspectorPort,
    log: () => output,
    stop: (signal = "SIGTERM") =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        // Held again while it stops: an unref'd child's exit would not keep this process waiting for it.
        child.ref();
        child.once("exit", () => resolve());
        // The whole process group: npx, wrangler and workerd.
        killGroup(child.pid!, signal);
      }),
  };
}

export interface SseEvent {
  id: number;
  type: string;
  [key: string]: unknown;
}

export async function chat(
  url: string,
  conversationId: string,
  message: string,
  headers: Record<string, string> = {},
): Promise<SseEvent[]> {
  const res = await fetch(`${url}/v1/conversations/${conversationId}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ message }),
  });
  if (res.status !== 200) throw new Error(`POST messages answered ${res.status}: ${await res.text()}`);
  return parseSse(await res.text());
}

/** Splits frames at blank lines and fields at "\n" only (never a regular expression's ".", which stops at U+2028). */
export function parseSse(text: string): SseEvent[] {
  return text
    .split("\n\n")
    .filter((frame) => frame.includes("data:"))
    .map((frame) => {
      const lines = frame.split("\n");
      const id = Number(lines.find((line) => line.startsWith("id: "))?.slice(4));
      const data = JSON.parse(lines.find((line) => line.startsWith("data: "))!.slice(6)) as { type: string };
      checkEvent(data);
      return { id, ...data };
    });
}
