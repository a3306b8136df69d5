/**
 * The part of a cold start that `bench:scale` cannot see (issue 67): a fresh isolate evaluating a
 * Worker's script and answering its first request. wrangler dev evaluates the script before it
 * reports ready, so a restart there starts the clock after it; a Worker Loader
 * (bench/peers/isolate-start) starts a bundle in an isolate of its own on demand, timed by the
 * client, bundles in turn, the order rotating round by round. Bundles: the README's Worker and the
 * runtime-and-SSE one (as bench:bundle builds them), AIChatAgent's starter
 * (bench/peers/cloudflare-agents), and a Worker that only answers "ok" (the floor: the isolate
 * itself and the loader's call).
 *
 * `--against <commit>` adds the README's and the runtime-and-SSE Worker as that commit builds them
 * (from a git worktree sharing this tree's node_modules): what a change saved, side by side.
 *
 *   node bench/isolate-start.ts [--rounds 30] [--against HEAD~1]   (npm run bench:isolate-start)
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { measure, readmeBundles } from "./bundle-readme.ts";
import { median } from "./loop-overhead.ts";
import { installPeer, PEER_DIR } from "./peer.ts";

const HARNESS = new URL("./peers/isolate-start/wrangler.toml", import.meta.url).pathname;
const REPO = new URL("..", import.meta.url).pathname;
const flag = (name: string) => {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
};
const ROUNDS = Number(flag("--rounds") ?? 30);
const AGAINST = flag("--against");

interface Started {
  name: string;
  gzipKiB: number;
  modules: Record<string, string>;
  /** The loaded Worker's compatibility flags, as its own configuration has them. */
  flags: string[];
  /** Its first request: a route that needs no binding. */
  path: string;
}

/**
 * The Worker Loader has no `cloudflare:email` under wrangler dev, which the agents SDK imports (and the starter never
 * calls): the import is pointed at a module with the one class it names.
 */
function withEmailStub(modules: Record<string, string>): Record<string, string> {
  const pointed = Object.entries(modules).map(([file, code]) => [
    file,
    code.replaceAll('from"cloudflare:email"', 'from"./cloudflare-email.js"'),
  ]);
  return {
    ...Object.fromEntries(pointed),
    "cloudflare-email.js": "export class EmailMessage { constructor(from, to, raw) { Object.assign(this, { from, to, raw }); } }",
  };
}

const progress = (what: string) => console.error(`bench isolate-start: ${what}…`);

const OURS = ["no_nodejs_compat", "no_nodejs_compat_v2"];
const PEER_NAME = "AIChatAgent's starter";
const kib = (bytes: number) => bytes / 1024;

/** This project's two Workers as the tree at `tree` builds them, their names ending with `suffix`. */
function ourBundles(tree: string | undefined, suffix = ""): Started[] {
  const { readme, minimal } = readmeBundles(tree);
  return [
    { name: `the README's Worker${suffix}`, gzipKiB: kib(readme.gzip), modules: readme.modules, flags: OURS, path: "/v1/agents" },
    {
      name: `the runtime-and-SSE Worker${suffix}`,
      gzipKiB: kib(minimal.gzip),
      modules: minimal.modules,
      flags: OURS,
      path: "/v1/agents",
    },
  ];
}

/** The Workers as `ref` built them: its checkout in a worktree that shares this tree's node_modules, removed after. */
function bundlesAt(ref: string, scratch: string): Started[] {
  const tree = join(scratch, "against");
  execFileSync("git", ["worktree", "add", "--detach", tree, ref], { cwd: REPO, stdio: "ignore" });
  try {
    symlinkSync(join(REPO, "node_modules"), join(tree, "node_modules"));
    return ourBundles(tree, ` at ${ref}`);
  } finally {
    execFileSync("git", ["worktree", "remove", "--force", tree], { cwd: REPO, stdio: "ignore" });
  }
}

function bundles(scratch: string): Started[] {
  progress("building the README's Worker and the runtime-and-SSE one");
  const ours = ourBundles(undefined);
  if (AGAINST) progress(`building them as ${AGAINST} did`);
  const before = AGAINST ? bundlesAt(AGAINST, scratch) : [];
  progress("building AIChatAgent's starter");
  installPeer();
  const peer = measure(PEER_DIR, join(scratch, "peer"));
  return [
    ...ours,
    ...before,
    { name: PEER_NAME, gzipKiB: kib(peer.gzip), modules: withEmailStub(peer.modules), flags: ["nodejs_compat"], path: "/" },
    {
      name: "the floor (answers ok)",
      gzipKiB: 0,
      modules: { "floor.js": 'export default { fetch: () => new Response("ok") };' },
      flags: OURS,
      path: "/",
    },
  ];
}

const scratch = mkdtempSync(join(tmpdir(), "bench-isolate-"));
try {
  const started = bundles(scratch);
  const dev = await startWranglerDev({ persistTo: join(scratch, "state"), config: HARNESS, ready: "/" });
  try {
    for (const [i, bundle] of started.entries()) {
      const res = await fetch(`${dev.url}/bundles/${i}`, { method: "PUT", body: JSON.stringify(bundle) });
      if (!res.ok) throw new Error(`the harness refused ${bundle.name}: ${res.status}`);
    }
    const times = started.map(() => [] as number[]);
    const answers = started.map(() => new Set<number>());
    progress(`${ROUNDS} rounds`);
    for (let round = -1; round < ROUNDS; round++) {
      for (let k = 0; k < started.length; k++) {
        const i = (k + Math.max(round, 0)) % started.length;
        const start = performance.now();
        const res = await fetch(`${dev.url}/start/${i}`, { method: "POST" });
        if (!res.ok) throw new Error(`${started[i]!.name} did not start: ${res.status} ${(await res.text()).slice(0, 2000)}`);
        const { status } = (await res.json()) as { status: number };
        // Round -1 warms the harness and the loader up and is not counted.
        if (round >= 0) times[i]!.push(performance.now() - start);
        answers[i]!.add(status);
      }
    }
    const floor = median(times.at(-1)!);
    const over = (i: number) => median(times[i]!) - floor;
    const peer = started.findIndex((bundle) => bundle.name === PEER_NAME);
    console.log(
      [
        `A fresh isolate: the script evaluated and its first request answered, through a Worker Loader (median of ${ROUNDS}, bundles in turn)`,
        "",
        "| Worker | gzipped | fresh isolate to its first response | over the floor | / AIChatAgent's | first request answered |",
        "|---|---:|---:|---:|---:|---|",
        ...started.map(
          (bundle, i) =>
            `| ${bundle.name} | ${bundle.gzipKiB.toFixed(1)} KiB | ${median(times[i]!).toFixed(1)} ms | ${over(i).toFixed(1)} ms | ${(over(i) / over(peer)).toFixed(2)}× | GET ${bundle.path}: ${[...answers[i]!].join(", ")} |`,
        ),
      ].join("\n"),
    );
  } finally {
    await dev.stop();
  }
} finally {
  rmSync(scratch, { recursive: true, force: true, maxRetries: 10, retryDelay: 500 });
}
