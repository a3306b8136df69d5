/**
 * Puts one mutant into `src/` by hand, runs the tests named, and puts the line back: how a
 * survivor the one-workerd route cannot switch on (module-level code, a cached path) is checked,
 * and how a new test is shown to kill the mutant it was written for. Exits 0 when the mutant is
 * killed (a test failed), 1 when it survives, 2 when the line does not hold the text to change.
 *   node scripts/mutant-by-hand.ts <file>:<line> <from> <to> [vitest run arguments…]
 *   node scripts/mutant-by-hand.ts src/conversation/turn-admission.ts:45 "clientLimit: false" "clientLimit: true" \
 *     --project users test/configured-users/admission.test.ts
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const [place, from, to, ...vitestArgs] = process.argv.slice(2);
const [file, lineText] = (place ?? "").split(":");
const line = Number(lineText);
if (!file || !Number.isInteger(line) || line < 1 || from === undefined || to === undefined) {
  console.error("usage: node scripts/mutant-by-hand.ts <file>:<line> <from> <to> [vitest run arguments…]");
  process.exit(2);
}

const original = readFileSync(file, "utf8");
const lines = original.split("\n");
const target = lines[line - 1];
if (target === undefined || !target.includes(from)) {
  console.error(`${file}:${line} does not hold '${from}': ${target ?? "(past the end of the file)"}`);
  process.exit(2);
}
// A function, so that `$` in the mutant is taken as it is.
lines[line - 1] = target.replace(from, () => to);

const restore = () => writeFileSync(file, original);
// An interrupted run must not leave the mutant in the checkout.
process.on("SIGINT", () => {
  restore();
  process.exit(130);
});
writeFileSync(file, lines.join("\n"));
let status: number | null;
try {
  status = spawnSync("npx", ["vitest", "run", ...vitestArgs], { stdio: "inherit" }).status;
} finally {
  restore();
}
const killed = status !== 0;
console.log(`${file}:${line} '${from}' → '${to}': ${killed ? "killed" : "survived"}`);
process.exit(killed ? 0 : 1);
