/**
 * The tree's shape, checked by `npm test` beside the import rules: no folder under src/ holds more
 * than 25 files of its own (a folder that grows past it is doing more than one job: split it).
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";

const MAX_FILES = 25;
const crowded: string[] = [];
function visit(dir: string): void {
  const entries = readdirSync(dir, { withFileTypes: true });
  const files = entries.filter((e) => e.isFile()).length;
  if (files > MAX_FILES) crowded.push(`${dir}: ${files} files`);
  for (const entry of entries) if (entry.isDirectory()) visit(join(dir, entry.name));
}
visit("src");
if (crowded.length) {
  console.error(`folders past ${MAX_FILES} files of their own:\n- ${crowded.join("\n- ")}`);
  process.exit(1);
}
console.log(`layout: no src/ folder past ${MAX_FILES} files`);
