/**
 * Where a `wrangler dev`'s JavaScript time goes, from workerd's inspector (the Chrome DevTools
 * Protocol's sampling profiler): samples attributed to the bundle's modules and grouped by this
 * project's folders and by package.
 */
import type { WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { inspector } from "./inspector.ts";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; scriptId: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The sampling interval asked for, in microseconds. */
const SAMPLE_US = 100;

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
  /**
   * The same, with time in a built-in (a RegExp's `exec`, `JSON.parse`, a stream's read) given to
   * the part of the bundle that called it: the nearest frame on the stack with a module.
   */
  callers: Array<{ name: string; ms: number; share: number }>;
  /** The functions with the most self time. */
  functions: Array<{ name: string; ms: number; share: number }>;
  /** Built-ins with the most self time, each with the module that called it. */
  builtins: Array<{ name: string; ms: number; share: number }>;
  /** Time between samples beyond two intervals (workerd's native work, or a late sampler), given to no frame. */
  lateMs: number;
}

/** Profiles the dev's workerd while `work` runs, and attributes the samples to modules and functions. */
export async function profile(dev: WranglerDev, work: () => Promise<void>): Promise<CpuProfile> {
  const cdp = await inspector(dev);
  try {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: SAMPLE_US });
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
  const parent = new Map<number, number>();
  for (const node of result.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const moduleOf = (node: ProfileNode) =>
    sources.get(node.callFrame.scriptId)?.findLast((m) => m.line <= node.callFrame.lineNumber)?.module;
  /** The nearest frame at or above `id` that lies in a module of the bundle. */
  const callerModule = (id: number): string | undefined => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const module = moduleOf(byId.get(at)!);
      if (module) return module;
    }
    return undefined;
  };
  const tally = () => new Map<string, number>();
  const [groups, callers, functions, builtins] = [tally(), tally(), tally(), tally()];
  const add = (map: Map<string, number>, key: string, ms: number) => map.set(key, (map.get(key) ?? 0) + ms);
  let total = 0;
  let late = 0;
  result.samples.forEach((id, i) => {
    const node = byId.get(id)!;
    // A sample stands for the time since the previous one. After a stretch with no sample (the
    // thread in workerd's own C++ — I/O, streams, SQLite — or the sampler late on a busy machine)
    // the next sample carries the whole gap, which is not its frame's: count at most two intervals.
    const delta = result.timeDeltas[i] ?? 0;
    const ms = Math.min(delta, 2 * SAMPLE_US) / 1000;
    const { functionName } = node.callFrame;
    if (functionName === "(idle)") return;
    if (delta > 2 * SAMPLE_US) late += (delta - 2 * SAMPLE_US) / 1000;
    const module = moduleOf(node);
    const own = module ? group(module) : functionName.startsWith("(") ? functionName : "(workerd built-ins)";
    total += ms;
    add(groups, own, ms);
    add(functions, `${functionName || "(anonymous)"}${module ? ` ${module}` : ""}`, ms);
    const caller = module ?? (functionName.startsWith("(") ? undefined : callerModule(id));
    add(callers, caller ? group(caller) : own, ms);
    if (!module && !functionName.startsWith("(")) add(builtins, `${functionName || "(anonymous)"} ← ${caller ?? "?"}`, ms);
  });
  const ranked = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]).map(([name, ms]) => ({ name, ms, share: ms / total }));
  return {
    groups: ranked(groups),
    callers: ranked(callers),
    functions: ranked(functions).slice(0, Number(process.env.PROFILE_TOP ?? 12)),
    builtins: ranked(builtins).slice(0, Number(process.env.PROFILE_TOP ?? 12)),
    lateMs: late,
  };
}

/** Where this project's CPU goes in those turns, as lines under the table. */
export function profileLines(cpu: CpuProfile, turns: number): string[] {
  const line = ({ name, ms, share }: { name: string; ms: number; share: number }) =>
    `| ${name} | ${(ms / turns).toFixed(2)} ms | ${(share * 100).toFixed(1)}% |`;
  const table = (header: string, rows: Array<{ name: string; ms: number; share: number }>) => [
    "",
    `| ${header} | per turn | share |`,
    "|---|---:|---:|",
    ...rows.map(line),
  ];
  return [
    "",
    `Where this project's CPU goes (workerd's inspector, sampling every ${SAMPLE_US} µs over ${turns} turns of the same job; per turn; idle left out; a sample counts for at most two intervals, and ${(cpu.lateMs / turns).toFixed(2)} ms per turn of gaps with no sample, workerd's native work mostly, is given to no frame):`,
    ...table("part", cpu.groups.slice(0, 12)),
    ...table("function (self time)", cpu.functions.slice(0, 10)),
    "",
    "The same samples with a built-in's time (a RegExp's exec, JSON, streams, timers) given to the module that called it:",
    ...table("part, built-ins it called included", cpu.callers.slice(0, 12)),
    ...table("built-in (self time) ← the module that called it", cpu.builtins.slice(0, 10)),
  ];
}
