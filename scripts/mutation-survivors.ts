/**
 * Lists the mutants a `npm run test:mutation` run left alive (survived or not covered), one line
 * each with its place, the mutation and the line it changed, for TESTING.md's list of survivors.
 *   node scripts/mutation-survivors.ts [reports/mutation/mutation.json]
 */
import { readFileSync } from "node:fs";

interface Mutant {
  status: string;
  mutatorName: string;
  replacement?: string;
  location: { start: { line: number } };
}

const report = JSON.parse(readFileSync(process.argv[2] ?? "reports/mutation/mutation.json", "utf8")) as {
  files: Record<string, { source: string; mutants: Mutant[] }>;
};
for (const [file, { source, mutants }] of Object.entries(report.files).sort()) {
  const lines = source.split("\n");
  for (const m of mutants) {
    if (m.status !== "Survived" && m.status !== "NoCoverage") continue;
    const line = m.location.start.line;
    const changed = (m.replacement ?? "").replaceAll("\n", " ").slice(0, 60);
    console.log(
      `- \`${file.replace(/^src\//, "")}:${line}\` ${m.status === "NoCoverage" ? "(not covered) " : ""}${m.mutatorName} → \`${changed}\` in \`${lines[line - 1]!.trim().slice(0, 80)}\``,
    );
  }
}
