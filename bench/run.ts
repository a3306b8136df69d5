/**
 * `npm run bench`: every benchmark side by side in one run, printed as one table per measure.
 * `--write` also saves the output as bench/RESULTS.md with the date and the machine.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { bundleRows } from "./bundle.ts";
import { concurrencyRows } from "./concurrency.ts";
import { loopOverheadRows } from "./loop-overhead.ts";
import { mcpRows } from "./mcp.ts";
import { peerRows } from "./peer.ts";
import { slowReaderRows } from "./slow-readers.ts";
import { storageRows } from "./storage.ts";
import { streamLatencyRows } from "./stream-latency.ts";
import { tracingRows } from "./tracing.ts";

const quick = process.argv.includes("--quick");
const sections: string[][] = [];
const section = (title: string, rows: string[]) => {
  sections.push([`## ${title}`, "", ...rows, ""]);
  console.log(`## ${title}\n\n${rows.join("\n")}\n`);
};

const scratch = mkdtempSync(join(tmpdir(), "handoff-bench-"));
try {
  section("1. Loop overhead against the OpenAI Agents SDK", loopOverheadRows(quick ? 200 : 1000, quick ? 1 : 3));
  section("2. Streaming latency through the Worker", await streamLatencyRows(join(scratch, "latency"), quick ? 3 : 8));
  section("3. Storage cost per turn", await storageRows(quick ? 30 : 500));
  section("4. Concurrency", await concurrencyRows(join(scratch, "concurrency")));
  section("5. Bundle", bundleRows());
  section("6. Clients that never read", await slowReaderRows({ direct: true }));
  section("7. What tracing costs a turn", await tracingRows(join(scratch, "tracing"), quick ? 8 : 40));
  section("8. An MCP tool against a local one", await mcpRows(quick ? 30 : 200));
  section("9. Against Cloudflare's AIChatAgent, side by side", await peerRows(quick));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

if (process.argv.includes("--write")) {
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
  const header = [
    `# Benchmark results`,
    "",
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machine} with \`npm run bench\`. Shared, noisy machine: compare ratios within a run, not across runs.`,
    "",
  ];
  writeFileSync(new URL("./RESULTS.md", import.meta.url), [...header, ...sections.flat()].join("\n"));
}
