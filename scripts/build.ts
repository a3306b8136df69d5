/**
 * `npm run build`: the package's JavaScript and declarations in dist/, from the four entry points'
 * sources. tsc rewrites `.ts` import specifiers to `.js` in the JavaScript but not in the
 * declarations, so they are rewritten here: a consumer's TypeScript then needs no special flag.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dist = new URL("../dist/", import.meta.url).pathname;
rmSync(dist, { recursive: true, force: true });
const tsc = spawnSync("npx", ["tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

for (const file of readdirSync(dist, { recursive: true, encoding: "utf8" })) {
  if (!file.endsWith(".d.ts")) continue;
  const path = join(dist, file);
  const text = readFileSync(path, "utf8");
  writeFileSync(path, text.replace(/(from\s+|import\()"(\.{1,2}\/[^"]+)\.ts"/g, '$1"$2.js"'));
}
console.log(`built ${dist}`);
