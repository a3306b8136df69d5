/**
 * Storage cost per turn, measured through `wrangler dev` with the offline demo model:
 * rows and bytes written by one turn at turn 10 and at turn 500 of one conversation (from the
 * SQL cursors' rowsWritten, as the Durable Object reports it), and what a Durable Object start
 * costs once the conversation holds ~1,000 messages.
 *
 *   npm run bench:storage [-- --turns 500]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chat, startWranglerDev } from "../test/e2e/wrangler-dev.ts";

export async function storageRows(turns: number): Promise<string[]> {
  const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-storage-"));
  // Three kinds of turn, in a cycle: a transfer plus a tool call, a transfer plus a calculator call, plain text.
  const MESSAGES = ["Where is order A1002?", "What is 12 * 7?", "hello"] as const;

  interface View {
    page: { total: number };
    lastTurnStorage: { rowsWritten: number; bytesWritten: number };
  }

  const dev = await startWranglerDev({ persistTo, vars: { TURNS_PER_MINUTE: "100000" } });
  const view = async (url: string) => (await (await fetch(`${url}/v1/conversations/bench-storage`)).json()) as View;
  const rows: Array<{ turn: number; kind: string; rows: number; bytes: number; messages: number; ms: number }> = [];
  try {
    for (let turn = 1; turn <= turns; turn++) {
      const message = MESSAGES[(turn - 1) % MESSAGES.length]!;
      const measured = (turn >= 10 && turn < 10 + MESSAGES.length) || turn > turns - MESSAGES.length;
      const before = measured && turn > 1 ? (await view(dev.url)).page.total : 0;
      const start = performance.now();
      const events = await chat(dev.url, "bench-storage", message);
      const ms = performance.now() - start;
      if (events.at(-1)?.type !== "done") throw new Error(`turn ${turn} ended with ${JSON.stringify(events.at(-1))}`);
      if (measured) {
        const after = await view(dev.url);
        rows.push({
          turn,
          kind: message,
          rows: after.lastTurnStorage.rowsWritten,
          bytes: after.lastTurnStorage.bytesWritten,
          messages: after.page.total - before,
          ms,
        });
      }
    }
  } finally {
    await dev.stop();
  }

  // A Durable Object start with the whole history on disk: the first request after a restart reads it once.
  const restarted = await startWranglerDev({ persistTo, vars: { TURNS_PER_MINUTE: "100000" } });
  let startCost: { firstMs: number; warmMs: number; messages: number };
  try {
    const time = async () => {
      const start = performance.now();
      const state = await view(restarted.url);
      return { ms: performance.now() - start, messages: state.page.total };
    };
    const first = await time();
    const warm = [await time(), await time(), await time()].map((t) => t.ms).sort((a, b) => a - b)[1]!;
    startCost = { firstMs: first.ms, warmMs: warm, messages: first.messages };
  } finally {
    await restarted.stop();
    rmSync(persistTo, { recursive: true, force: true });
  }

  return [
    `Storage per turn, one conversation of ${turns} turns through wrangler dev (demo model; rows from the SQL cursors' rowsWritten)`,
    "",
    "| turn | kind | messages added | rows written | bytes written | turn ms |",
    "|---:|---|---:|---:|---:|---:|",
    ...rows.map((r) => `| ${r.turn} | ${r.kind} | ${r.messages} | ${r.rows} | ${r.bytes} | ${r.ms.toFixed(1)} |`),
    "",
    `Durable Object start at ${startCost.messages} messages: first request after a restart ${startCost.firstMs.toFixed(1)} ms, then ${startCost.warmMs.toFixed(1)} ms (median of 3).`,
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log((await storageRows(Number(process.argv[process.argv.indexOf("--turns") + 1]) || 500)).join("\n"));
}
