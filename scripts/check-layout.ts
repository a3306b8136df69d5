/**
 * The tree's shape, checked by `npm test` beside the import rules: no folder under src/ holds more
 * than 25 files of its own (a folder that grows past it is doing more than one job: split it), and
 * at most 35 lines of src/ run past 140 characters (the formatter's width; strings it cannot wrap).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const MAX_FILES = 25;
const WIDTH = 140;
const MAX_WIDE_LINES = 35;
const crowded: string[] = [];
const wide: string[] = [];
function visit(dir: string): void {
  const entries = readdirSync(dir, { withFileTypes: true });
  const files = entries.filter((e) => e.isFile());
  if (files.length > MAX_FILES) crowded.push(`${dir}: ${files.length} files`);
  for (const file of files)
    for (const [i, line] of readFileSync(join(dir, file.name), "utf8").split("\n").entries())
      if (line.length > WIDTH) wide.push(`${join(dir, file.name)}:${i + 1}`);
  for (const entry of entries) if (entry.isDirectory()) visit(join(dir, entry.name));
}
visit("src");
const problems = [
  ...crowded.map((c) => `past ${MAX_FILES} files of its own: ${c}`),
  ...(wide.length > MAX_WIDE_LINES
    ? [`${wide.length} lines past ${WIDTH} characters (at most ${MAX_WIDE_LINES}): ${wide.join(", ")}`]
    : []),
];
if (problems.length) {
  console.error(`layout check failed:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}
console.log(`layout: no src/ folder past ${MAX_FILES} files; ${wide.length} lines past ${WIDTH} characters (at most ${MAX_WIDE_LINES})`);
