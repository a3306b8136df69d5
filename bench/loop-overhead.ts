/**
 * Loop overhead: this runtime's run loop against the OpenAI Agents SDK's Runner, in Node, on the
 * same scenario: a three-agent network (triage, billing, shipping), a zero-latency scripted model,
 * turns of one transfer and two tool calls. Each side runs in its own process, alternating, with a
 * young generation large enough that no scavenge runs during the measured turns, so the heap's
 * growth is the bytes allocated.
 *
 *   node bench/loop-overhead.ts [--turns 1000] [--rounds 3]
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface Sample {
  side: "runtime" | "sdk";
  cpuUsPerTurn: number;
  bytesPerTurn: number;
  /** Batches left out of the allocation figure because a GC ran in them. */
  gcDuringRun: number;
}

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};

/** Runs one side in a fresh process and returns its figures. */
export function measure(side: Sample["side"], turns: number): Sample {
  const child = spawnSync(
    process.execPath,
    [
      "--expose-gc",
      "--max-semi-space-size=64",
      "--disable-warning=ExperimentalWarning",
      fileURLToPath(new URL("./loop-sides.ts", import.meta.url)),
      side,
      String(turns),
    ],
    {
      encoding: "utf8",
    },
  );
  if (child.status !== 0) throw new Error(`${side} failed:\n${child.stderr}`);
  return JSON.parse(child.stdout.trim().split("\n").at(-1)!) as Sample;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export function p95(values: number[]): number {
  return percentile(values, 0.95);
}

export function p99(values: number[]): number {
  return percentile(values, 0.99);
}

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
}

export function loopOverheadRows(turns: number, rounds: number): string[] {
  const samples: Sample[] = [];
  for (let round = 0; round < rounds; round++) samples.push(measure("runtime", turns), measure("sdk", turns));
  const of = (side: Sample["side"]) => samples.filter((s) => s.side === side);
  const row = (label: string, pick: (s: Sample) => number, unit: string, digits: number) => {
    const ours = of("runtime").map(pick);
    const sdk = of("sdk").map(pick);
    const fmt = (v: number[]) =>
      `${median(v).toFixed(digits)} ${unit} (${Math.min(...v).toFixed(digits)}–${Math.max(...v).toFixed(digits)})`;
    return `| ${label} | ${fmt(ours)} | ${fmt(sdk)} | ${(median(ours) / median(sdk)).toFixed(2)} | ≤ 0.50 |`;
  };
  return [
    `Loop overhead, ${turns} turns × ${rounds} rounds per side (one transfer and two tool calls per turn; zero-latency scripted model; Node ${process.version}). Allocation: median over batches of 25 turns in which no GC ran.`,
    "",
    "| per turn | this runtime | @openai/agents Runner | ratio | target |",
    "|---|---:|---:|---:|---:|",
    row("CPU time", (s) => s.cpuUsPerTurn, "µs", 1),
    row("allocated", (s) => s.bytesPerTurn / 1024, "KiB", 1),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(loopOverheadRows(arg("--turns", 1000), arg("--rounds", 3)).join("\n"));
}
