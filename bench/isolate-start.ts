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
 *   node bench/isolate-start.ts [--rounds 30]                (npm run bench:isolate-start)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startWranglerDev } from "../test/e2e/wrangler-dev.ts";
import { measure, readmeBundles } from "./bundle-readme.ts";
import { median } from "./loop-overhead.ts";
import { installPeer, PEER_DIR } from "./peer.ts";

const HARNESS = new URL("./peers/isolate-start/wrangler.toml", import.meta.url).pathname;
const at = process.argv.indexOf("--rounds");
const ROUNDS = at < 0 ? 30 : Number(process.argv[at + 1]);

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

function bundles(scratch: string): Started[] {
  progress("building the README's Worker and the runtime-and-SSE one");
  const { readme, minimal } = readmeBundles();
  progress("building AIChatAgent's starter");
  installPeer();
  const peer = measure(PEER_DIR, join(scratch, "peer"));
  const ours = ["no_nodejs_compat", "no_nodejs_compat_v2"];
  const kib = (bytes: number) => bytes / 1024;
  return [
    { name: "the README's Worker", gzipKiB: kib(readme.gzip), modules: readme.modules, flags: ours, path: "/v1/agents" },
    { name: "the runtime-and-SSE Worker", gzipKiB: kib(minimal.gzip), modules: minimal.modules, flags: ours, path: "/v1/agents" },
    { name: "AIChatAgent's starter", gzipKiB: kib(peer.gzip), modules: withEmailStub(peer.modules), flags: ["nodejs_compat"], path: "/" },
    {
      name: "the floor (answers ok)",
      gzipKiB: 0,
      modules: { "floor.js": 'export default { fetch: () => new Response("ok") };' },
      flags: ours,
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
    console.log(
      [
        `A fresh isolate: the script evaluated and its first request answered, through a Worker Loader (median of ${ROUNDS}, bundles in turn)`,
        "",
        "| Worker | gzipped | fresh isolate to its first response | over the floor | first request answered |",
        "|---|---:|---:|---:|---|",
        ...started.map(
          (bundle, i) =>
            `| ${bundle.name} | ${bundle.gzipKiB.toFixed(1)} KiB | ${median(times[i]!).toFixed(1)} ms | ${(median(times[i]!) - floor).toFixed(1)} ms | GET ${bundle.path}: ${[...answers[i]!].join(", ")} |`,
        ),
      ].join("\n"),
    );
  } finally {
    await dev.stop();
  }
} finally {
  rmSync(scratch, { recursive: true, force: true, maxRetries: 10, retryDelay: 500 });
}
