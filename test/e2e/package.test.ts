/**
 * The package, proven from the outside: `npm pack`, then a fresh folder holding only a
 * package.json, a wrangler.toml and a Worker of its own (test/e2e/fixtures/consumer: other agent
 * names, one tool, a vitest file) installs the tarball, and
 * 1. type-checks under strict TypeScript;
 * 2. bundles with `wrangler deploy --dry-run`, with no Node warning and no nodejs_compat;
 * 3. holds a conversation with a handoff under `wrangler dev` against a fake provider, and a second
 *    request goes on with the agent that holds the conversation;
 * 4. runs its own vitest file against its network with `handoff-runtime/testing`;
 * 5. is what the README shows (its files, as the README has them).
 * The consumer's tools (TypeScript, wrangler, vitest) are this repository's, linked in: what is
 * installed from the tarball is the package and its dependencies.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { fileURLToPath } from "node:url";
import { startFakeOpenAI } from "../node/fake-openai-server.ts";
import { chat, startWranglerDev } from "./wrangler-dev.ts";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "handoff-package-"));
const consumer = join(scratch, "consumer");

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" } });
  const output = `${result.stdout}\n${result.stderr}`;
  assert.equal(result.status, 0, `${command} ${args.join(" ")} failed in ${cwd}:\n${output}`);
  return output;
}

before(() => {
  const packed = run("npm", ["pack", "--pack-destination", scratch, "--silent"], repo).trim().split("\n").at(-1)!;
  cpSync(new URL("./fixtures/consumer", import.meta.url), consumer, { recursive: true });
  const manifest = join(consumer, "package.json");
  writeFileSync(manifest, readFileSync(manifest, "utf8").replace("HANDOFF_RUNTIME_TARBALL", join(scratch, packed)));
  run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"], consumer);
  for (const tool of ["typescript", "wrangler", "vitest", "@cloudflare/workers-types"]) {
    mkdirSync(join(consumer, "node_modules", tool, ".."), { recursive: true });
    symlinkSync(join(repo, "node_modules", tool), join(consumer, "node_modules", tool));
  }
});

after(() => rmSync(scratch, { recursive: true, force: true }));

it("is what the README shows: its four files, each as the README has it", () => {
  const readme = readFileSync(join(repo, "README.md"), "utf8");
  for (const file of ["src/network.ts", "src/worker.ts", "wrangler.toml", "test/network.test.ts"]) {
    const header = file.endsWith(".toml") ? `# ${file}` : `// ${file}`;
    const block = new RegExp(`\`\`\`[a-z]+\n${header.replaceAll(".", "\\.")}\n([\\s\\S]*?)\n\`\`\``).exec(readme);
    assert.ok(block, `the README shows ${file}`);
    assert.equal(block[1], readFileSync(new URL(`./fixtures/consumer/${file}`, import.meta.url), "utf8").trimEnd(), `the README's ${file}`);
  }
});

it("type-checks a Worker of its own under strict TypeScript", () => {
  run(process.execPath, [join(consumer, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], consumer);
});

it("bundles it for production with no Node built-in", () => {
  const output = run(process.execPath, [join(repo, "scripts/check-bundle.ts"), join(consumer, "wrangler.toml")], repo);
  assert.match(output, /bundle check: no Node built-ins/);
});

it("holds a conversation with a handoff under wrangler dev, and the next message goes to the agent that holds it", async () => {
  const fake = await startFakeOpenAI();
  const persistTo = join(scratch, "state");
  const dev = await startWranglerDev({
    persistTo,
    config: join(consumer, "wrangler.toml"),
    vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-e2e" },
  });
  try {
    await fetch(`${fake.url}/__scenarios`, {
      method: "POST",
      body: JSON.stringify({
        id: "pkgconsumer",
        answers: [
          { toolCalls: [{ id: "t1", name: "transfer_to_bookings", arguments: JSON.stringify({ reason: "a booking" }) }] },
          { toolCalls: [{ id: "c1", name: "check_availability", arguments: JSON.stringify({ date: "Friday" }) }] },
          { text: "Friday at 19:00 or 21:30?" },
          { text: "Booked for 19:00." },
        ],
      }),
    });
    const first = await chat(dev.url, "guest-1", "a table for two on Friday [pkgconsumer]");
    assert.deepEqual(
      first.filter((e) => e.type === "handoff").map((e) => [e.from, e.to]),
      [["concierge", "bookings"]],
    );
    const lookup = first.find((e) => e.type === "tool-result" && e.name === "check_availability");
    assert.deepEqual(lookup, { ...lookup, isError: false, result: { date: "Friday", free: ["19:00", "21:30"] } });
    assert.equal(first.at(-1)?.type, "done");
    const second = await chat(dev.url, "guest-1", "19:00 please [pkgconsumer]");
    assert.deepEqual(second[0], { ...second[0], type: "run-start", agent: "bookings" });
    assert.deepEqual(second.at(-1), { ...second.at(-1), type: "done", status: "completed", agent: "bookings", text: "Booked for 19:00." });
  } finally {
    await dev.stop();
    await fake.close();
  }
});

it("runs the consumer's own vitest file with handoff-runtime/testing", () => {
  const output = run(process.execPath, [join(consumer, "node_modules/vitest/vitest.mjs"), "run", "--root", consumer], consumer);
  assert.match(output, /3 passed/);
});
