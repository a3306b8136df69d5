/**
 * The mutants a mutation run left alive (survived or not covered), each beside what
 * test/mutation/survivors.json already says of its line (equivalent, unreachable, missing, killed
 * since), or `unexplained`. With `--record "<part>"`, the unexplained ones are added to the data file
 * under that part, verdict `unexplained`, for a maintainer to set one by one.
 *   node scripts/mutation-survivors.ts [reports/mutation/mutation.json] [--record "<part>"]
 */
import { readFileSync, writeFileSync } from "node:fs";

interface Mutant {
  status: string;
  mutatorName: string;
  replacement?: string;
  location: { start: { line: number } };
}

interface Survivor {
  part: string;
  verdict: string;
  place: string | null;
  text: string;
}

const DATA = new URL("../test/mutation/survivors.json", import.meta.url);
const args = process.argv.slice(2);
const recordAt = args.indexOf("--record");
const part = recordAt >= 0 ? args[recordAt + 1] : undefined;
const reportPath = args.find((arg, i) => !arg.startsWith("--") && (recordAt < 0 || i !== recordAt + 1)) ?? "reports/mutation/mutation.json";

const data = JSON.parse(readFileSync(DATA, "utf8")) as { survivors: Survivor[] };
const report = JSON.parse(readFileSync(reportPath, "utf8")) as { files: Record<string, { source: string; mutants: Mutant[] }> };

/** What the data file says of a line: entries whose place is the file (with or without its folders) and that line. */
function explained(file: string, line: number): Survivor[] {
  return data.survivors.filter((s) => {
    const [place, at] = (s.place ?? "").split(":");
    const [from, to] = (at ?? "").split("-").map(Number);
    return place !== undefined && file.endsWith(place) && from !== undefined && line >= from && line <= (to || from);
  });
}

const unexplained: Survivor[] = [];
for (const [file, { source, mutants }] of Object.entries(report.files).sort()) {
  const lines = source.split("\n");
  for (const m of mutants) {
    if (m.status !== "Survived" && m.status !== "NoCoverage") continue;
    const line = m.location.start.line;
    const place = `${file.replace(/^src\//, "")}:${line}`;
    const changed = (m.replacement ?? "").replaceAll("\n", " ").slice(0, 60);
    const what = `${m.status === "NoCoverage" ? "(not covered) " : ""}${m.mutatorName} → \`${changed}\` in \`${lines[line - 1]!.trim().slice(0, 80)}\``;
    const known = explained(file, line);
    console.log(`- \`${place}\` ${what}: ${known.length ? known.map((k) => k.verdict).join(", ") : "unexplained"}`);
    if (!known.length) unexplained.push({ part: part ?? "", verdict: "unexplained", place, text: what });
  }
}
if (part !== undefined && unexplained.length) {
  data.survivors.push(...unexplained);
  writeFileSync(DATA, `${JSON.stringify(data, null, 1)}\n`);
  console.log(`${unexplained.length} recorded under "${part}" in test/mutation/survivors.json: set each one's verdict and why.`);
}
