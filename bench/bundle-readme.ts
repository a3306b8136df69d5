/**
 * What a team's own Worker weighs: the README's seven files, written into an empty folder as the
 * package test writes them, installed with the package packed from this tree, built as `npm run
 * deploy` ships it (`wrangler deploy --dry-run --minify`), with esbuild's metafile for who takes
 * what (by package, and by the package's own folders). Beside it, the same package in a Worker that
 * uses only the runtime and the SSE API (one agent, no person, no MCP server, no pages), which must
 * bundle nothing it does not call (`uncalled`: the MCP SDK, A2A, AG-UI). `--budget` checks both
 * against bench/bundle-budget.json and fails past either (the package test does the same in CI).
 *
 *   npm run bench:bundle [-- --budget]
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { readmeFiles } from "../test/support/readme-files.ts";

const repo = new URL("..", import.meta.url).pathname;

interface Metafile {
  outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
}

export interface BundleFigures {
  raw: number;
  gzip: number;
  /** Raw bytes in the output by who brought them: a package, or a folder of handoff-runtime's own. */
  parts: Array<[string, number]>;
  /** Every module in the bundle, by its path as esbuild read it. */
  inputs: string[];
  /** The built script's modules, by file name, the main module first: what a Worker Loader starts (bench/isolate-start.ts). */
  modules: Record<string, string>;
}

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed in ${cwd}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Builds the Worker in `dir` as `npm run deploy` would (into `out`), and reads its size and its metafile. */
export function measure(dir: string, out = join(dir, "out")): BundleFigures {
  run("npx", ["wrangler", "deploy", "--dry-run", "--minify", "--outdir", out, "--metafile", join(out, "meta.json")], dir);
  const meta = JSON.parse(readFileSync(join(out, "meta.json"), "utf8")) as Metafile;
  const scripts = Object.keys(meta.outputs).filter((file) => file.endsWith(".js"));
  const bundle = readFileSync(join(dir, scripts[0]!));
  const modules = Object.fromEntries(scripts.map((file) => [basename(file), readFileSync(join(dir, file), "utf8")]));
  const parts = new Map<string, number>();
  const inputs: string[] = [];
  for (const output of Object.values(meta.outputs))
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      if (bytesInOutput > 0) inputs.push(path);
      const own = /node_modules\/handoff-runtime\/dist\/([^/]+)\//.exec(path);
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
      const name = own ? `handoff-runtime: ${own[1]}/` : pkg ? pkg[1]! : path.startsWith("src/") ? "the Worker's own src/" : "other";
      parts.set(name, (parts.get(name) ?? 0) + bytesInOutput);
    }
  return { raw: bundle.length, gzip: gzipSync(bundle).length, parts: [...parts].sort((a, b) => b[1] - a[1]), inputs, modules };
}

/** What a runtime-and-SSE Worker never calls, so must not bundle: the MCP SDK, and the A2A and AG-UI endpoints. */
// A protocol's offer (its paths and the option that serves it, a few lines) is what a Worker not given it answers with.
const UNCALLED: Array<[string, RegExp]> = [
  ["the MCP SDK", /node_modules\/@modelcontextprotocol\//],
  ["the A2A endpoint", /handoff-runtime\/dist\/http\/a2a\/(?!offer\.js$)/],
  ["the AG-UI endpoint", /handoff-runtime\/dist\/(?:http\/ag-ui\/(?!offer\.js$)|wire\/ag-ui)/],
];

/** What of `UNCALLED` a bundle holds, as "what: a module" lines (none for a Worker that pays only for what it uses). */
export function uncalled(figures: BundleFigures): string[] {
  return UNCALLED.flatMap(([what, pattern]) => figures.inputs.filter((path) => pattern.test(path)).map((path) => `${what}: ${path}`));
}

/** A runtime-and-SSE Worker: one agent, the package's Worker, and only the conversations' binding. */
const MINIMAL: Record<string, string> = {
  "src/worker.ts": `import { createHandoffWorker } from "handoff-runtime/cloudflare";
import { Agent, Network } from "handoff-runtime";

const network = new Network(new Agent({ name: "assistant", instructions: "You help." }), { defaultModel: "gpt-4.1-mini" });
const worker = createHandoffWorker({ network });
export const Conversation = worker.Conversation;
export default { fetch: worker.fetch };
`,
  "wrangler.toml": `name = "minimal"
main = "src/worker.ts"
compatibility_date = "2026-11-01"
compatibility_flags = ["no_nodejs_compat", "no_nodejs_compat_v2"]

[[durable_objects.bindings]]
name = "CONVERSATIONS"
class_name = "Conversation"

[[migrations]]
tag = "v1"
new_sqlite_classes = ["Conversation"]
`,
};

/** Writes files (path, text) under `dir`. */
function writeFiles(dir: string, files: Iterable<[string, string]>): void {
  for (const [file, text] of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
}

/** Writes the runtime-and-SSE Worker into `dir`, a folder inside one where the package is installed. */
export function writeMinimalWorker(dir: string): void {
  writeFiles(dir, Object.entries(MINIMAL));
}

/** The README's Worker and the minimal one, installed from the packed package of `tree` (this one, or a checkout of an earlier commit). */
export function readmeBundles(tree = repo): { readme: BundleFigures; minimal: BundleFigures } {
  const scratch = mkdtempSync(join(tmpdir(), "handoff-bundle-readme-"));
  try {
    const packed = run("npm", ["pack", "--pack-destination", scratch, "--silent"], tree).trim().split("\n").at(-1)!;
    const consumer = join(scratch, "readme");
    writeFiles(consumer, readmeFiles(readFileSync(join(tree, "README.md"), "utf8")));
    const manifest = join(consumer, "package.json");
    writeFileSync(
      manifest,
      readFileSync(manifest, "utf8").replace(/"handoff-runtime": "[^"]+"/, `"handoff-runtime": "file:${join(scratch, packed)}"`),
    );
    run("npm", ["install", "--no-audit", "--no-fund"], consumer);
    const readme = measure(consumer);
    // The minimal Worker shares the README's installed packages, in a folder beside them.
    const minimal = join(consumer, "minimal");
    writeMinimalWorker(minimal);
    return { readme, minimal: measure(minimal) };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

export function bundleTable(name: string, figures: BundleFigures, top = 12): string[] {
  const total = figures.parts.reduce((sum, [, bytes]) => sum + bytes, 0);
  return [
    `**${name}**: ${kib(figures.raw)} raw, **${kib(figures.gzip)} gzipped** (\`wrangler deploy --dry-run --minify\`)`,
    "",
    "| part | raw in the bundle | share | ≈ gzip |",
    "|---|---:|---:|---:|",
    ...figures.parts
      .slice(0, top)
      .map(
        ([part, bytes]) => `| ${part} | ${kib(bytes)} | ${((bytes / total) * 100).toFixed(1)}% | ${kib((bytes / total) * figures.gzip)} |`,
      ),
  ];
}

/** A bundle's budget, gzipped, and why it is what it is. */
export interface Budget {
  gzipKiB: number;
  why: string;
}

/** The budgets of the README's Worker and of the runtime-and-SSE one: bench/bundle-budget.json, the one place they are set. */
export function budgets(): { readme: Budget; minimal: Budget } {
  return JSON.parse(readFileSync(new URL("./bundle-budget.json", import.meta.url), "utf8")) as { readme: Budget; minimal: Budget };
}

/** What is wrong with a bundle against its budget (nothing when it is within it). */
export function overBudget(name: string, figures: BundleFigures, { gzipKiB, why }: Budget): string[] {
  const kiB = figures.gzip / 1024;
  return kiB > gzipKiB ? [`${name} is ${kiB.toFixed(1)} KiB gzipped; its budget is ${gzipKiB} KiB (${why})`] : [];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { readme, minimal } = readmeBundles();
  console.log([...bundleTable("The README's Worker", readme), "", ...bundleTable("A runtime-and-SSE Worker", minimal)].join("\n"));
  const left = uncalled(minimal);
  console.log(
    `\nthe runtime-and-SSE Worker bundles ${left.length ? `what it never calls:\n${left.join("\n")}` : "nothing it never calls (MCP SDK, A2A, AG-UI)"}`,
  );
  if (process.argv.includes("--budget")) {
    const limits = budgets();
    const problems = [
      ...overBudget("the README's Worker", readme, limits.readme),
      ...overBudget("the runtime-and-SSE Worker", minimal, limits.minimal),
      ...left,
    ];
    console.log(
      problems.length ? `\nOVER:\n${problems.join("\n")}` : `\nwithin budget (${limits.readme.gzipKiB} and ${limits.minimal.gzipKiB} KiB)`,
    );
    if (problems.length) process.exit(1);
  }
}
