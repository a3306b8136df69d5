/**
 * Every entry point of the package bundles for a web-standards runtime (workerd's conditions, no
 * Node platform): no `node:` import and no Node built-in anywhere in what it pulls in. The Worker's
 * own bundle check (check-bundle.ts) covers what wrangler deploys; this covers the entry points a
 * team imports elsewhere, `handoff-runtime/openai` and `handoff-runtime/testing` included.
 */
import { build } from "esbuild";

const ENTRIES = [
  "src/runtime/index.ts",
  "src/cloudflare/index.ts",
  "src/models/index.ts",
  "src/testing/index.ts",
  "src/mcp/index.ts",
  "src/evals/index.ts",
  "src/router/index.ts",
];
const problems: string[] = [];
for (const entry of ENTRIES) {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser", "import"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*"],
    logLevel: "silent",
    metafile: true,
  }).catch((error: { errors?: Array<{ text: string }> }) => {
    problems.push(`${entry}: ${(error.errors ?? []).map((e) => e.text).join("; ") || String(error)}`);
    return null;
  });
  if (!result) continue;
  const text = result.outputFiles[0]!.text;
  const nodeImports = text.match(/(?:from\s*|import\(|require\()\s*"node:[a-z_/]+"/g) ?? [];
  if (nodeImports.length) problems.push(`${entry} imports Node built-ins: ${[...new Set(nodeImports)].join(", ")}`);
  console.log(`${entry}: ${(text.length / 1024).toFixed(1)} KiB, web standards only`);
}
if (problems.length) {
  console.error(`entry point check failed:\n- ${problems.join("\n- ")}`);
  process.exit(1);
}
