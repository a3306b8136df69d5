/**
 * What a delegated step costs against a top-level one (issue 58), this tree, one `wrangler dev` with
 * the offline demo model (its words 2 ms apart). Billing holds two conversations; turns alternate:
 *
 * - plain: "Was order A1001 charged?": billing looks the order up and answers (2 top-level steps);
 * - delegating: "Is this charge on order A1001 fraud?": billing looks it up, asks the fraud checker
 *   as a tool (which looks it up and answers: 2 delegated steps), and answers (3 top-level steps).
 *
 * Per step: the plain turn's cost over its two steps, against what the delegating turn costs beyond
 * the plain one over the three steps it adds (one top-level step that calls the checker, and the
 * checker's two), the delegation's own events and rows included. CPU is every thread of
 * workerd from the OS (less idle), rows are what the object wrote (the view's `lastTurnStorage`).
 * Time to first token: to the delegated agent's first text (a `delegated` text delta) against a plain
 * turn's first text.
 *
 *   npm run bench:delegation [-- --turns 20]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chat, startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { median } from "./loop-overhead.ts";
import { turnCpuMs } from "./workerd-processes.ts";

const PLAIN = "Was order A1001 charged?";
const DELEGATING = "Is this charge on order A1001 fraud?";

interface Sample {
  cpu: number;
  rows: number;
  firstToken: number;
}

/** One turn: its CPU, the rows it wrote, and its time to the first text `isFirst` says is the one measured. */
async function turn(dev: WranglerDev, id: string, message: string, isFirst: (frame: string) => boolean): Promise<Sample> {
  let firstToken = Number.NaN;
  const cpu = await turnCpuMs(dev, async () => {
    const start = performance.now();
    const res = await fetch(`${dev.url}/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message }),
    });
    const decoder = new TextDecoder();
    for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
      const text = decoder.decode(bytes, { stream: true });
      if (Number.isNaN(firstToken) && text.split("\n\n").some(isFirst)) firstToken = performance.now() - start;
    }
  });
  const view = (await (await fetch(`${dev.url}/v1/conversations/${id}`)).json()) as { lastTurnStorage: { rowsWritten: number } };
  return { cpu, rows: view.lastTurnStorage.rowsWritten, firstToken };
}

const plainText = (frame: string) => frame.includes("event: text-delta");
const childText = (frame: string) => frame.includes("event: delegated") && frame.includes('"type":"text-delta"');

export async function delegationRows(turns = 20): Promise<string[]> {
  const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-delegation-"));
  const dev = await startWranglerDev({ persistTo, vars: { TURNS_PER_MINUTE: "100000", DEMO_DELAY_MS: "2" } });
  const plain: Sample[] = [];
  const delegating: Sample[] = [];
  try {
    // Both conversations are billing's, and their objects started, before anything is measured.
    for (const id of ["bench-plain", "bench-delegating"]) await chat(dev.url, id, PLAIN);
    for (let t = 0; t < turns; t++) {
      plain.push(await turn(dev, "bench-plain", PLAIN, plainText));
      delegating.push(await turn(dev, "bench-delegating", DELEGATING, childText));
    }
  } finally {
    await dev.stop();
    rmSync(persistTo, { recursive: true, force: true });
  }
  return report(plain, delegating, turns);
}

function report(plain: Sample[], delegating: Sample[], turns: number): string[] {
  const of = (samples: Sample[], key: keyof Sample) => median(samples.map((s) => s[key]));
  // What the delegation adds (one top-level step that calls the checker, and the checker's two steps), per step, against a
  // plain turn's cost per step (which also carries the turn's own fixed cost: a generous top-level step).
  const perStep = (key: "cpu" | "rows") => {
    const top = of(plain, key) / 2;
    const added = (of(delegating, key) - of(plain, key)) / 3;
    return { top, added, ratio: added / top };
  };
  const cpu = perStep("cpu");
  const rows = perStep("rows");
  const [plainFirst, childFirst] = [of(plain, "firstToken"), of(delegating, "firstToken")];
  return [
    `A delegated step against a top-level step, this tree, one run (${turns} turns of each, alternating; medians)`,
    "",
    "| | plain turn (2 top-level steps) | delegating turn (3 top-level, 2 delegated) | per step, plain turn | per step, what delegating adds | ratio |",
    "|---|---:|---:|---:|---:|---:|",
    `| CPU | ${of(plain, "cpu").toFixed(1)} ms | ${of(delegating, "cpu").toFixed(1)} ms | ${cpu.top.toFixed(1)} ms | ${cpu.added.toFixed(1)} ms | ${cpu.ratio.toFixed(2)}× (target ≤ 1.2×) |`,
    `| rows written | ${of(plain, "rows")} | ${of(delegating, "rows")} | ${rows.top.toFixed(1)} | ${rows.added.toFixed(1)} | ${rows.ratio.toFixed(2)}× (target ≤ 1.2×) |`,
    "",
    `Time to first token: a plain turn's first text ${plainFirst.toFixed(1)} ms; the delegated agent's first text in a delegating turn ${childFirst.toFixed(1)} ms (${(childFirst / plainFirst).toFixed(2)}×; it comes after billing's lookup and its call to the checker, and the checker's own lookup)`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { turns: { type: "string", default: "20" } } });
  console.log((await delegationRows(Number(values.turns))).join("\n"));
}
