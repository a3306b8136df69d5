/**
 * Bundles the Worker exactly as it would be deployed and fails on any sign of Node: wrangler
 * only warns about a Node built-in, and the test pool enables nodejs_compat by itself, so this
 * is the check that the production configuration runs on web standards alone. Node compatibility
 * is on by default from compatibility date 2026-08-04: the config must switch it off with both
 * `no_nodejs_compat` and `no_nodejs_compat_v2`. Another Worker's
 * wrangler.toml can be given (the package's consumer test does): `node scripts/check-bundle.ts path/to/wrangler.toml`.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

const outdir = mkdtempSync(join(tmpdir(), "handoff-bundle-"));
try {
  const configPath = process.argv[2] ?? "wrangler.toml";
  const config = readFileSync(configPath, "utf8");
  const problems: string[] = [];
  // From compatibility date 2026-08-04 Node compatibility is on unless switched off: both flags must say so, and none turn it on.
  const flags = [...(/^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(config)?.[1] ?? "").matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
  for (const off of ["no_nodejs_compat", "no_nodejs_compat_v2"])
    if (!flags.includes(off)) problems.push(`${configPath} lacks compatibility_flags "${off}": Node compatibility is on by default`);
  for (const on of flags.filter((f) => /^nodejs_compat/.test(f))) problems.push(`${configPath} turns on ${on}`);

  const run = spawnSync("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir, "--config", configPath], {
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  const output = `${run.stdout}\n${run.stderr}`;
  if (run.status !== 0) problems.push(`wrangler deploy --dry-run exited with ${run.status}:\n${output}`);
  for (const line of output.split("\n")) {
    if (/\[WARNING\]|node:|Node\.js built-?in|(?<!no_)nodejs_compat/i.test(line)) problems.push(`wrangler: ${line.trim()}`);
  }

  const written = readdirSync(outdir).find((f) => f.endsWith(".js"));
  if (!written) throw new Error(`wrangler wrote no JavaScript to ${outdir}:\n${output}`);
  const bundle = readFileSync(join(outdir, written), "utf8");
  // esbuild writes module specifiers in double quotes; single-quoted ones are prose in error messages.
  const nodeImports = bundle.match(/(?:from\s*|import\(|require\()\s*"node:[a-z_/]+"/g) ?? [];
  if (nodeImports.length) problems.push(`the bundle imports Node built-ins: ${[...new Set(nodeImports)].join(", ")}`);

  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  console.log(`bundle: ${kib(Buffer.byteLength(bundle))}, gzip ${kib(gzipSync(bundle).length)}`);
  if (problems.length) {
    console.error(`bundle check failed:\n- ${problems.join("\n- ")}`);
    process.exit(1);
  }
  console.log(
    "bundle check: no Node built-ins, Node compatibility switched off (no_nodejs_compat, no_nodejs_compat_v2), no wrangler warnings",
  );
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
