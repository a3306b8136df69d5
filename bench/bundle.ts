/**
 * Bundle size: the gzip size of the Worker as `wrangler deploy --dry-run` builds it, and what each
 * dependency contributes (bytes in the output, from esbuild's metafile; gzip shares prorated).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

interface Metafile {
  outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
}

/** Features by the modules that are theirs alone. */
const FEATURES: Array<[string, RegExp]> = [
  [
    "the router (src/router/, route-first, the embedding router)",
    /^src\/(router\/|runtime\/step\/route-first|runtime\/ports\/router-port|models\/embedding-router)/,
  ],
  [
    "a user's memory (src/memory/, conversation-memory, runtime/memory, its port, tools and routes)",
    /^src\/(memory\/|conversation\/conversation-memory|runtime\/memory\/|runtime\/ports\/memory-port|runtime\/tools\/memory-tools|http\/memory-routes)/,
  ],
  [
    "A2A, both ways (src/a2a/: client, server and wire, its push configs; the remote port and call)",
    /^src\/(a2a\/|runtime\/ports\/remote-port|runtime\/step\/remote-call)/,
  ],
];

export function bundleRows(): string[] {
  const outdir = mkdtempSync(join(tmpdir(), "handoff-bundle-"));
  try {
    const run = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir, "--metafile", join(outdir, "meta.json")], {
      encoding: "utf8",
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    });
    if (run.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${run.stderr}`);
    const bundle = readFileSync(join(outdir, "index.js"));
    const gzip = gzipSync(bundle).length;
    const meta = JSON.parse(readFileSync(join(outdir, "meta.json"), "utf8")) as Metafile;
    const byPackage = new Map<string, number>();
    const byFeature = new Map<string, number>();
    for (const output of Object.values(meta.outputs)) {
      for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
        const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
        const name = match ? match[1]! : path.startsWith("src/") ? "src/ (this runtime)" : "other (wrangler shims)";
        byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput);
        const feature = FEATURES.find(([, test]) => test.test(path))?.[0];
        if (feature) byFeature.set(feature, (byFeature.get(feature) ?? 0) + bytesInOutput);
      }
    }
    const total = [...byPackage.values()].reduce((a, b) => a + b, 0);
    const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
    const minified = minifiedGzip(join(outdir, "min"));
    return [
      `Bundle (wrangler deploy --dry-run): ${kib(bundle.length)} raw, **${kib(gzip)} gzip**; minified as \`npm run deploy\` ships it (\`--minify\`): **${kib(minified)} gzip** (target: under 250 KiB gzip)`,
      "",
      "| part | raw in bundle | share | ≈ gzip |",
      "|---|---:|---:|---:|",
      ...[...byPackage]
        .sort((a, b) => b[1] - a[1])
        .map(([name, bytes]) => `| ${name} | ${kib(bytes)} | ${((bytes / total) * 100).toFixed(1)}% | ${kib((bytes / total) * gzip)} |`),
      "",
      "Of src/, what some features add (their own modules; A2A uses no package of its own):",
      "",
      "| feature | raw in bundle | share | ≈ gzip |",
      "|---|---:|---:|---:|",
      ...FEATURES.map(([name]) => byFeature.get(name) ?? 0).map(
        (bytes, i) => `| ${FEATURES[i]![0]} | ${kib(bytes)} | ${((bytes / total) * 100).toFixed(1)}% | ${kib((bytes / total) * gzip)} |`,
      ),
    ];
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

/** The gzip size of the Worker as `wrangler deploy --minify` builds it. */
function minifiedGzip(outdir: string): number {
  const run = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--minify", "--outdir", outdir], {
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  if (run.status !== 0) throw new Error(`wrangler deploy --dry-run --minify failed:\n${run.stderr}`);
  return gzipSync(readFileSync(join(outdir, "index.js"))).length;
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(bundleRows().join("\n"));
