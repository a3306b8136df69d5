/**
 * Where a first turn's 1 MB image goes in the Worker's workerd, natively (what workerd's inspector cannot see): Linux
 * `perf record` of the Worker's workerd over first turns that carry the image (a data URL in the message), then over the
 * same turns without it, each sample given to a part (perf-parts.ts, with digests and base64 told apart first); per turn,
 * in milliseconds, with the difference. Under `wrangler dev` local R2 runs in that same process: its DigestStreams (the
 * MD5 and SHA-256 of what it stores) and its pipes are counted here; on Cloudflare that work is R2's.
 *
 * With `--later`, the turns recorded are each conversation's second, a text message whose request carries the image from
 * the history (the first turns are made before perf starts): what a later step costs; `--steps N`, a later turn of N
 * steps (tool calls the demo's triage agent fails or refuses, then the answer). With `--leaves N`, the N leaf frames
 * (the functions the samples were in) whose time the image grows most, instead of the parts. With `--isolate`, not perf
 * but workerd's inspector: the isolate's own time (JavaScript, the built-ins it calls, V8's collector), what Cloudflare
 * counts as a Worker's CPU, by part of the bundle.
 *
 *   npm run bench:files-native [-- --turns 8] [-- --url] [-- --later [-- --steps 5]] [-- --leaves 30] [-- --isolate]   (needs perf: Debian's linux-perf; --url: FILES_SENT_AS=url)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { laterTurnAnswers } from "./files.ts";
import { partOf, stacks } from "./perf-parts.ts";
import { profile } from "./profile.ts";
import { workerdRoles } from "./workerd-processes.ts";

const HZ = 2000;
/** Told apart before perf-parts.ts's own parts. */
const FILE_PARTS: Array<[string, RegExp]> = [
  ["digests (MD5, SHA-256)", /md5_|sha256_|SHA256|MD5|DigestStream/],
  ["base64", /base64|Base64/],
  ["memcpy", /memmove|memcpy/],
];

const { values } = parseArgs({
  options: {
    turns: { type: "string" },
    url: { type: "boolean" },
    later: { type: "boolean" },
    leaves: { type: "string" },
    steps: { type: "string" },
    isolate: { type: "boolean" },
  },
});
const TURNS = Number(values.turns) || 8;
/** Steps of a later turn (`laterTurnAnswers`: tool calls the demo's triage agent fails or refuses, then the answer). */
const STEPS = Number(values.steps) || 1;

function image(): string {
  const bytes = Buffer.alloc(1024 * 1024, 7);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return `data:image/png;base64,${bytes.toString("base64")}`;
}

/** A first turn of a new conversation, with the image or not, read to its end. */
async function firstTurn(dev: WranglerDev, scenario: string, n: string, dataUrl: string | null): Promise<void> {
  const files = dataUrl ? { files: [{ url: dataUrl, name: "box.png" }] } : {};
  await message(dev, n, { message: `a photo [${scenario}]`, ...files });
}

async function message(dev: WranglerDev, n: string, body: object): Promise<void> {
  const res = await fetch(`${dev.url}/v1/conversations/native-files-${n}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await res.text();
}

/** The turn recorded: a first turn, or (`--later`) a text message in a conversation whose first turn was made before. */
async function measuredTurn(dev: WranglerDev, scenario: string, n: string, dataUrl: string | null): Promise<void> {
  if (values.later) await message(dev, n, { message: `and now? [${scenario}]` });
  else await firstTurn(dev, scenario, n, dataUrl);
}

/** Milliseconds per turn in each part (and, with `--leaves`, per leaf frame), over `TURNS` turns recorded by perf. */
async function recorded(dev: WranglerDev, data: string, turn: (n: number) => Promise<void>): Promise<Map<string, number>> {
  if (values.isolate) return isolateTime(dev, turn);
  const perf = spawn("perf", ["record", "-F", String(HZ), "-g", "-o", data, "-p", workerdRoles(dev).worker], { stdio: "ignore" });
  await new Promise((resolve) => setTimeout(resolve, 500));
  for (let n = 0; n < TURNS; n++) await turn(n);
  perf.kill("SIGINT");
  await new Promise((resolve) => perf.on("exit", resolve));
  const parts = new Map<string, number>();
  for (const stack of stacks(data)) {
    const part = values.leaves ? `\`${stack[0]!.slice(0, 100)}\`` : partOf(stack, FILE_PARTS);
    parts.set(part, (parts.get(part) ?? 0) + 1000 / HZ / TURNS);
  }
  return parts;
}

/**
 * The isolate's own time per turn in each part of the bundle (and V8's: its collector, `(program)`), from workerd's
 * inspector: what runs with the isolate, the time Cloudflare counts as a Worker's CPU; workerd's I/O (its HTTP client,
 * the sockets) is not in it.
 */
async function isolateTime(dev: WranglerDev, turn: (n: number) => Promise<void>): Promise<Map<string, number>> {
  const cpu = await profile(dev, async () => {
    for (let n = 0; n < TURNS; n++) await turn(n);
  });
  return new Map(cpu.groups.map(({ name, ms }) => [name, ms / TURNS]));
}

const fake = await startFakeOpenAI();
const scenario = `nativefiles${Date.now()}`;
const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-files-native-"));
const links = { FILES_SENT_AS: "url", PUBLIC_URL: "https://chat.example", SESSION_SECRET: "bench-session-secret-0123456789" };
const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "100000", TITLE_MODEL: "off" };
const dev = await startWranglerDev({ persistTo, vars: { ...vars, ...(values.url ? links : {}) } });
try {
  // Warm-ups and first turns answer in one step; with --later, the turns recorded answer in STEPS.
  const first = (count: number) => Array.from({ length: count }, () => ({ text: "Thanks, I see it." }));
  const answers = values.later
    ? [...first(4 + 2 * TURNS), ...Array.from({ length: 2 * TURNS }, () => laterTurnAnswers(STEPS)).flat()]
    : first(4 + 2 * TURNS);
  await fetch(`${fake.url}/__scenarios`, { method: "POST", body: JSON.stringify({ id: scenario, answers, keepRequests: false }) });
  const dataUrl = image();
  for (const n of ["warm-a", "warm-b"]) {
    await firstTurn(dev, scenario, `${n}-image`, dataUrl);
    await firstTurn(dev, scenario, `${n}-text`, null);
  }
  if (values.later) {
    for (let n = 0; n < TURNS; n++) {
      await firstTurn(dev, scenario, `image-${n}`, dataUrl);
      await firstTurn(dev, scenario, `text-${n}`, null);
    }
  }
  const withImage = await recorded(dev, join(persistTo, "image.data"), (n) => measuredTurn(dev, scenario, `image-${n}`, dataUrl));
  const without = await recorded(dev, join(persistTo, "text.data"), (n) => measuredTurn(dev, scenario, `text-${n}`, null));
  const total = (parts: Map<string, number>) => [...parts.values()].reduce((sum, ms) => sum + ms, 0);
  const names = [...new Set([...withImage.keys(), ...without.keys()])].sort(
    (a, b) => (withImage.get(b) ?? 0) - (without.get(b) ?? 0) - ((withImage.get(a) ?? 0) - (without.get(a) ?? 0)),
  );
  const ms = (value: number | undefined) => (value ?? 0).toFixed(1);
  console.log(
    `The Worker's workerd over ${TURNS} ${values.later ? `later turns of ${STEPS} steps` : "first turns"} with a 1 MB image (${values.url ? "FILES_SENT_AS=url" : "inline"}) and ${TURNS}` +
      ` without, ${values.isolate ? "the isolate's time (workerd's inspector)" : `perf at ${HZ} Hz`}; milliseconds per turn:\n\n| part | with the image | without | difference |\n|---|---:|---:|---:|`,
  );
  for (const name of names.slice(0, values.leaves ? Number(values.leaves) : names.length)) {
    const [a, b] = [withImage.get(name), without.get(name)];
    console.log(`| ${name} | ${ms(a)} | ${ms(b)} | ${ms((a ?? 0) - (b ?? 0))} |`);
  }
  console.log(`| every part | ${ms(total(withImage))} | ${ms(total(without))} | ${ms(total(withImage) - total(without))} |`);
} finally {
  await dev.stop();
  await fake.close();
  rmSync(persistTo, { recursive: true, force: true });
}
