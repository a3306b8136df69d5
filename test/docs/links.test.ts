/**
 * Every relative link in the project's pages leads to a file that exists: the README, docs/, the
 * testing and benchmark records, the examples' notes. (Under Node: the workerd tests read no files.)
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect, it } from "vitest";

const root = new URL("../../", import.meta.url).pathname;
const inFolder = (folder: string) =>
  readdirSync(join(root, folder), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".md"))
    .map((name) => join(folder, name));
const pages = ["README.md", "TESTING.md", "CHANGELOG.md", "bench/RESULTS.md", ...inFolder("docs"), ...inFolder("examples")];

it.each(pages)("%s links only to files that exist", (page) => {
  const text = readFileSync(join(root, page), "utf8");
  const targets = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
  const missing = targets.filter((target) => !existsSync(join(root, dirname(page), decodeURIComponent(target))));
  expect(missing).toEqual([]);
});

// A first reader's page: the two commands and a Worker of their own, the rest one link away (issue 76).
it("keeps the README under 20 KB", () => {
  expect(readFileSync(join(root, "README.md")).byteLength).toBeLessThan(20 * 1024);
});
