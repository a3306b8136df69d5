/**
 * Where a `wrangler dev`'s JavaScript time goes, from workerd's inspector (the Chrome DevTools
 * Protocol's sampling profiler): samples attributed to the bundle's modules and grouped by this
 * project's folders and by package.
 */
import type { WranglerDev } from "../test/e2e/wrangler-dev.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; scriptId: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Node's WebSocket (undici's) takes a non-standard init with headers, which the DOM's typing does not know. */
const NodeWebSocket = WebSocket as unknown as new (url: string, init: { headers: Record<string, string> }) => WebSocket;

/** A minimal CDP client over the inspector's WebSocket. */
async function inspector(dev: WranglerDev) {
  const targets = (await (await fetch(`http://127.0.0.1:${dev.inspectorPort}/json`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
  // wrangler's inspector proxy accepts a local Origin only (Node's WebSocket sends none unless told: undici's `headers`).
  const socket = new NodeWebSocket(targets[0]!.webSocketDebuggerUrl, { headers: { origin: "http://127.0.0.1" } });
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve);
    socket.addEventListener("error", reject);
  });
  let next = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (message.id === undefined) return;
    waiting.get(message.id)?.(message.error ? { error: message.error.message } : message.result);
    waiting.delete(message.id);
  });
  const send = <T>(method: string, params: object = {}): Promise<T> =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve as (result: unknown) => void);
      socket.send(JSON.stringify({ id, method, params }));
    });
  return { send, close: () => socket.close() };
}

/** Which part of the bundle a line is in, from the `// path` comments esbuild writes at each module's start. */
function moduleLines(source: string): Array<{ line: number; module: string }> {
  const starts: Array<{ line: number; module: string }> = [];
  source.split("\n").forEach((text, line) => {
    // The path is relative to where wrangler ran, and node_modules may be reached through a link: keep from `node_modules/` or `src/`.
    const match = /^\/\/ (\S+\.(?:[mc]?[jt]s|json))$/.exec(text);
    const path = match?.[1];
    if (path) starts.push({ line, module: path.slice(Math.max(0, path.search(/(node_modules|src|bench)\//))) });
  });
  return starts;
}

/** A module's path grouped as a reader wants it: this project's folders, and packages by name. */
function group(module: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(module);
  if (pkg) return `package ${pkg[1]}`;
  const folder = /^src\/([^/]+)\//.exec(module);
  return folder ? `src/${folder[1]}/` : module;
}

export interface CpuProfile {
  /** Sampled time by part of the bundle (and V8's own: garbage collection, program), largest first. */
  groups: Array<{ name: string; ms: number; share: number }>;
  /** The functions with the most self time. */
  functions: Array<{ name: string; ms: number; share: number }>;
}

/** Profiles the dev's workerd while `work` runs, and attributes the samples to modules and functions. */
export async function profile(dev: WranglerDev, work: () => Promise<void>): Promise<CpuProfile> {
  const cdp = await inspector(dev);
  try {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
    await cdp.send("Profiler.start");
    await work();
    const { profile: result } = await cdp.send<{ profile: Profile }>("Profiler.stop");
    await cdp.send("Debugger.enable");
    const sources = new Map<string, Array<{ line: number; module: string }>>();
    for (const id of new Set(result.nodes.map((n) => n.callFrame.scriptId)))
      if (id !== "0") {
        const script = await cdp.send<{ scriptSource?: string }>("Debugger.getScriptSource", { scriptId: id });
        sources.set(id, moduleLines(script.scriptSource ?? ""));
      }
    return attribute(result, sources);
  } finally {
    cdp.close();
  }
}

function attribute(result: Profile, sources: Map<string, Array<{ line: number; module: string }>>): CpuProfile {
  const byId = new Map(result.nodes.map((n) => [n.id, n]));
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  result.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    const ms = (result.timeDeltas[i] ?? 0) / 1000;
    const { functionName, scriptId, lineNumber } = node.callFrame;
    if (functionName === "(idle)") return;
    const module = sources.get(scriptId)?.findLast((m) => m.line <= lineNumber)?.module;
    const where = module ? group(module) : functionName.startsWith("(") ? functionName : "(workerd built-ins)";
    total += ms;
    groups.set(where, (groups.get(where) ?? 0) + ms);
    const name = `${functionName || "(anonymous)"}${module ? ` ${module}` : ""}`;
    functions.set(name, (functions.get(name) ?? 0) + ms);
  });
  const ranked = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).map(([name, ms]) => ({ name, ms, share: ms / total }));
  return { groups: ranked(groups), functions: ranked(functions).slice(0, 12) };
}
