/** A checkout of another commit beside this one, sharing its node_modules: a bench measures it and this tree in one run. */
import { execFileSync } from "node:child_process";
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export function worktree(ref: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "handoff-bench-baseline-"));
  execFileSync("git", ["worktree", "add", "--detach", "--force", dir, ref], { stdio: "ignore" });
  symlinkSync(resolve("node_modules"), join(dir, "node_modules"));
  return { dir, remove: () => execFileSync("git", ["worktree", "remove", "--force", dir], { stdio: "ignore" }) };
}
