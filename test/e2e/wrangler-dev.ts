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

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (address && typeof address !== "string" ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

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
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${url}${options.ready ?? "/v1/agents"}`);
      if (options.ready ? res.status < 500 : res.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      process.kill(-child.pid!, "SIGKILL");
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
        child.once("exit", () => resolve());
        // The whole process group: npx, wrangler and workerd.
        process.kill(-child.pid!, signal);
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
