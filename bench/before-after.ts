/**
 * Rows written and CPU per turn, this tree against another commit, side by side in one run: each
 * side's Worker under its own `wrangler dev` with the offline demo model, turns alternating
 * between the sides, in a cycle of five kinds (a transfer and a tool call, a transfer and a
 * calculator call, plain text, a delegating turn — billing asks its fraud check as a tool — and a
 * turn that waits for an approval, declined so that it waits each time, with its resumed leg).
 * Rows and bytes are what the Durable Object reports for the turn (`lastTurnStorage`, both legs of
 * one that waited); CPU is every thread of each side's workerd from the OS (schedstat), less what
 * it spends idle over the same wait.
 *
 * With `--profile <kind>` (1–5), each side's workerd is then profiled over turns of that kind
 * alone, and the functions with the most self time are printed side by side.
 *
 *   npm run bench:before-after [-- --baseline <git ref>] [-- --turns 30] [-- --profile 4]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chat, parseSse, startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { median, p95 } from "./loop-overhead.ts";
import { type CpuProfile, profile, profileLines } from "./profile.ts";
import { turnCpuMs } from "./workerd-processes.ts";
import { worktree } from "./worktree.ts";

const KINDS = [
  "Where is order A1002?",
  "What is 12 * 7?",
  "hello",
  "Is the charge on order A1001 suspicious? I do not recognize it.",
  "I was charged twice for order A1001, please refund it.",
] as const;
/** The commit before issue 34's changes. */
const DEFAULT_BASELINE = "8ad8251";

interface Side {
  label: string;
  dev: WranglerDev;
  rows: Map<string, number[]>;
  bytes: Map<string, number[]>;
  cpu: Map<string, number[]>;
}

/** A turn, and the leg after its decision when it waits (the refund, declined: the next turn of its kind waits again). */
async function turnAndDecision(url: string, message: string): Promise<Awaited<ReturnType<typeof chat>>> {
  const events = await chat(url, "bench-before-after", message);
  const done = events.at(-1);
  if (done?.type !== "done" || done.status !== "awaiting_approval") return events;
  const pending = events.flatMap((e) => (e.type === "approval-required" ? [String(e.toolCallId)] : []));
  const decided = await fetch(`${url}/v1/conversations/bench-before-after/decisions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ decisions: pending.map((toolCallId) => ({ toolCallId, approved: false, reason: "bench" })) }),
  });
  return parseSse(await decided.text());
}

async function turn(side: Side, message: string): Promise<void> {
  let events: Awaited<ReturnType<typeof chat>> = [];
  const cpu = await turnCpuMs(side.dev, async () => (events = await turnAndDecision(side.dev.url, message)));
  side.cpu.set(message, [...(side.cpu.get(message) ?? []), cpu]);
  if (events.at(-1)?.type !== "done") throw new Error(`${side.label}: a turn ended with ${JSON.stringify(events.at(-1))}`);
  const view = (await (await fetch(`${side.dev.url}/v1/conversations/bench-before-after`)).json()) as {
    lastTurnStorage: { rowsWritten: number; bytesWritten: number };
  };
  side.rows.set(message, [...(side.rows.get(message) ?? []), view.lastTurnStorage.rowsWritten]);
  side.bytes.set(message, [...(side.bytes.get(message) ?? []), view.lastTurnStorage.bytesWritten]);
}

export async function beforeAfterRows(baseline = DEFAULT_BASELINE, turns = 30, profiled?: number): Promise<string[]> {
  const tree = worktree(baseline);
  const dirs = [mkdtempSync(join(tmpdir(), "handoff-bench-ba-")), mkdtempSync(join(tmpdir(), "handoff-bench-ba-"))];
  const vars = { TURNS_PER_MINUTE: "100000" };
  const sides: Side[] = [];
  const profiles: CpuProfile[] = [];
  try {
    for (const [label, cwd, persistTo] of [
      [`at ${baseline}`, tree.dir, dirs[0]!],
      ["this tree", process.cwd(), dirs[1]!],
    ] as const)
      sides.push({ label, dev: await startWranglerDev({ persistTo, vars, cwd }), rows: new Map(), bytes: new Map(), cpu: new Map() });
    // Warm both (the first turn loads the Worker's modules), then alternate turn by turn.
    for (const side of sides) await chat(side.dev.url, "bench-before-after", KINDS[0]);
    // Which side goes first alternates with each cycle of kinds (ABBA): a turn right after the other side's pays for
    // what that one left running (its trace, its GC, a warm cache lost), so one fixed order biases the second side.
    for (let t = 0; t < turns; t++) {
      const order = Math.floor(t / KINDS.length) % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order) await turn(side, KINDS[t % KINDS.length]!);
    }
    if (profiled !== undefined) for (const side of sides) profiles.push(await profileKind(side, KINDS[profiled - 1]!, turns));
  } finally {
    for (const side of sides) await side.dev.stop();
    tree.remove();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  const [before, after] = sides as [Side, Side];
  const ratio = (a: number, b: number) => (a === 0 ? "–" : `${(b / a).toFixed(2)}×`);
  const all = (side: Side) => [...side.cpu.values()].flat();
  return [
    `Rows and CPU per turn, ${before.label} against this tree, one run, turns alternating (${turns} per side, ${turns / KINDS.length} of each kind; the side that goes first alternates each cycle; medians)`,
    "",
    `| measure | ${before.label} | this tree | ratio |`,
    "|---|---:|---:|---:|",
    ...KINDS.flatMap((kind) => {
      const [r0, r1] = [median(before.rows.get(kind)!), median(after.rows.get(kind)!)];
      const [b0, b1] = [median(before.bytes.get(kind)!), median(after.bytes.get(kind)!)];
      const [c0, c1] = [median(before.cpu.get(kind)!), median(after.cpu.get(kind)!)];
      return [
        `| rows written, "${kind}" | ${r0} | ${r1} | ${ratio(r0, r1)} |`,
        `| bytes written, "${kind}" | ${b0} | ${b1} | ${ratio(b0, b1)} |`,
        `| CPU (workerd, from the OS), "${kind}" | ${c0.toFixed(1)} ms | ${c1.toFixed(1)} ms | ${ratio(c0, c1)} |`,
      ];
    }),
    `| CPU per turn, every kind, median | ${median(all(before)).toFixed(1)} ms | ${median(all(after)).toFixed(1)} ms | ${ratio(median(all(before)), median(all(after)))} |`,
    `| CPU per turn, every kind, p95 | ${p95(all(before)).toFixed(1)} ms | ${p95(all(after)).toFixed(1)} ms | ${ratio(p95(all(before)), p95(all(after)))} |`,
    ...profiles.flatMap((cpu, i) => ["", `### ${sides[i]!.label}, "${KINDS[profiled! - 1]}"`, ...profileLines(cpu, turns)]),
  ];
}

/** The side's workerd profiled over `turns` turns of one kind. */
function profileKind(side: Side, kind: string, turns: number): Promise<CpuProfile> {
  return profile(side.dev, async () => {
    for (let t = 0; t < turns; t++) await turnAndDecision(side.dev.url, kind);
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { baseline: { type: "string" }, turns: { type: "string" }, profile: { type: "string" } } });
  const profiled = values.profile === undefined ? undefined : Number(values.profile);
  console.log((await beforeAfterRows(values.baseline ?? DEFAULT_BASELINE, Number(values.turns) || 30, profiled)).join("\n"));
}
