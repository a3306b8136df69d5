/**
 * Soak: one conversation of 2,000 turns with handoffs through wrangler dev and the demo model.
 * Every stream is checked as it arrives; every 250 turns the stored conversation is checked; at the
 * end, per-turn time is compared early and late. workerd's resident memory under wrangler dev grows
 * by itself with every request (a GET of /v1/agents, which touches no conversation, does too), so
 * memory is judged against that baseline, measured first in the same process.
 *   npm run test:deep   (SOAK_TURNS overrides the count)
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import { findHistoryProblem, type Message } from "../../src/runtime/messages.ts";
import { parseSse, startWranglerDev } from "../e2e/wrangler-dev.ts";

const TURNS = Number(process.env.SOAK_TURNS ?? 2000);
const MESSAGES = ["How was I billed for order A1001?", "Where is order A1002?", "What is 12 * 7?", "hello"];

/** Resident memory of the workerd processes under the dev server, in KiB. */
function workerdRss(): number {
  const out = execFileSync("ps", ["-eo", "rss=,comm="], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((line) => line.includes("workerd"))
    .reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[0]), 0);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

it(`keeps ${TURNS} turns of one conversation valid, with flat time and memory`, { timeout: 30 * 60_000 }, async () => {
  const persistTo = mkdtempSync(join(tmpdir(), "handoff-soak-"));
  const dev = await startWranglerDev({ persistTo, vars: { TURNS_PER_MINUTE: "1000000" } });
  try {
    const BASELINE = 1000;
    const baseStart = workerdRss();
    for (let i = 0; i < BASELINE; i++) await (await fetch(`${dev.url}/v1/agents`)).text();
    const perRequest = (workerdRss() - baseStart) / BASELINE;
    const times: number[] = [];
    const rss: number[] = [];
    let handoffs = 0;
    let lastId = 0;
    for (let turn = 1; turn <= TURNS; turn++) {
      const start = performance.now();
      const res = await fetch(`${dev.url}/v1/conversations/soak/messages`, {
        method: "POST",
        // The per-client limit is keyed by address; the soak speaks for many clients of one conversation.
        headers: { "content-type": "application/json", "cf-connecting-ip": `198.51.100.${turn % 200}` },
        body: JSON.stringify({ message: MESSAGES[turn % MESSAGES.length] }),
      });
      assert.equal(res.status, 200, `turn ${turn}: ${res.status}`);
      const events = parseSse(await res.text());
      times.push(performance.now() - start);
      assert.equal(events.filter((e) => e.type === "done" || e.type === "error").length, 1, `turn ${turn} ends once`);
      assert.equal(events.at(-1)?.type, "done", `turn ${turn} ends with done: ${JSON.stringify(events.at(-1))}`);
      assert.ok(events[0]!.id > lastId, `turn ${turn}: ids keep increasing`);
      events.forEach((e, i) => i > 0 && assert.equal(e.id, events[i - 1]!.id + 1));
      lastId = events.at(-1)!.id;
      handoffs += events.filter((e) => e.type === "handoff").length;
      if (turn === 200 || turn % 500 === 0 || turn === TURNS) rss.push(workerdRss());
      if (turn % 250 === 0 || turn === TURNS) {
        const state = (await (await fetch(`${dev.url}/v1/conversations/soak`)).json()) as {
          messages: Message[];
          handoffCount: number;
          activeAgent: string;
        };
        assert.equal(findHistoryProblem(state.messages), null);
        assert.equal(state.handoffCount, handoffs);
      }
    }
    const early = median(times.slice(100, 300));
    const late = median(times.slice(-200));
    const perTurn = (rss.at(-1)! - rss[0]!) / (TURNS - 200);
    console.log(
      `soak: ${TURNS} turns, ${handoffs} handoffs; median turn ${early.toFixed(1)} ms (turns 100-300) vs ${late.toFixed(1)} ms (last 200); ` +
        `workerd RSS (KiB) at turn 200 then every 500 turns: ${rss.join(", ")}; growth ${perTurn.toFixed(1)} KiB a turn vs ${perRequest.toFixed(1)} KiB a request for GET /v1/agents`,
    );
    // Flat: the late turns within twice the early ones while the history grows tenfold.
    assert.ok(late < early * 2 + 5, `per-turn time grew: ${early.toFixed(1)} → ${late.toFixed(1)} ms`);
    // A turn (a POST, an SSE stream, a Durable Object call) may cost the dev server a few times a bare GET, not more.
    assert.ok(
      perTurn < Math.max(perRequest, 1) * 4,
      `memory grows ${perTurn.toFixed(1)} KiB a turn, against ${perRequest.toFixed(1)} KiB a bare request`,
    );
  } finally {
    await dev.stop();
    rmSync(persistTo, { recursive: true, force: true });
  }
});
