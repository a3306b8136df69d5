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
 * counts as a Worker's CPU, by part of the bundle (with `--leaves`, by function). With `--step`, a later step's own
 * isolate time, image against text, in `--rounds` rounds (see `laterStep`); `--isolate --rounds R`, a first turn's. With
 * `--floor`, either also profiles, in each round, a Worker with nothing of the project in it doing the same with the
 * megabyte (bench/peers/send-floor): what any Worker pays for it.
 *
 *   npm run bench:files-native [-- --turns 8] [-- --url] [-- --later [-- --steps 5]] [-- --leaves 30] [-- --isolate]
 *   npm run bench:files-native -- --step [-- --turns 24] [-- --rounds 8] [-- --url] [-- --floor]
 *   npm run bench:files-native -- --isolate --rounds 8 [-- --turns 24] [-- --url] [-- --floor]
 * (perf needs Debian's linux-perf; --url: FILES_SENT_AS=url)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { image, laterTurnAnswers } from "./files.ts";
import { median } from "./loop-overhead.ts";
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
    step: { type: "boolean" },
    rounds: { type: "string" },
    floor: { type: "boolean" },
  },
});
const TURNS = Number(values.turns) || 8;
/** Steps of a later turn (`laterTurnAnswers`: tool calls the demo's triage agent fails or refuses, then the answer). */
const STEPS = Number(values.steps) || 1;
/** `--step`'s rounds. */
const ROUNDS = Number(values.rounds) || 6;

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
  const text = await res.text();
  // The client limiter (600 new turns a minute, wrangler.toml) stops a long run: wait, idle, and send it again.
  if (res.status === 429) {
    await new Promise((resolve) => setTimeout(resolve, 1000 * Number(res.headers.get("retry-after") ?? 60)));
    return message(dev, n, body);
  }
  // A turn that failed would be measured as a cheap one.
  if (!res.ok || !text.includes("event: done") || text.includes("event: error"))
    throw new Error(`the turn in ${n} did not finish: ${res.status} ${text.slice(-300)}`);
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
  process.env.PROFILE_TOP ??= "400";
  const cpu = await profile(dev, async () => {
    for (let n = 0; n < TURNS; n++) await turn(n);
  });
  // With --leaves, the functions by their own time, a built-in named with the module that called it.
  const rows = values.leaves
    ? [...cpu.functions.filter(({ name }) => !cpu.builtins.some((b) => b.name.startsWith(`${name} ←`))), ...cpu.builtins]
    : cpu.groups;
  return new Map(rows.map(({ name, ms }) => [values.leaves ? `\`${name}\`` : name, ms / TURNS]));
}

/** The provider's answers for the requests that name `id` (not kept: the bench sends megabytes). */
async function script(id: string, answers: object[]): Promise<void> {
  await fetch(`${fake.url}/__scenarios`, { method: "POST", body: JSON.stringify({ id, answers, keepRequests: false }) });
}

/** Two first turns with the image and two without, before anything is measured. */
async function warmUp(dataUrl: string): Promise<void> {
  for (const n of ["warm-a", "warm-b"])
    for (const url of [dataUrl, null]) await firstTurn(dev, scenario, `${n}-${url ? "image" : "text"}`, url);
}

/** Each part's time per turn, image against text: perf's, or the isolate's (`--isolate`). */
async function parts(): Promise<void> {
  // Warm-ups and first turns answer in one step; with --later, the turns recorded answer in STEPS.
  const first = (count: number) => Array.from({ length: count }, () => ({ text: "Thanks, I see it." }));
  const answers = values.later
    ? [...first(4 + 2 * TURNS), ...Array.from({ length: 2 * TURNS }, () => laterTurnAnswers(STEPS)).flat()]
    : first(4 + 2 * TURNS);
  await script(scenario, answers);
  const dataUrl = image();
  await warmUp(dataUrl);
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
}

/**
 * `--floor`: the same megabyte through a Worker with nothing of the project in it (bench/peers/send-floor), profiled in
 * each round beside the project's batches: a model request sent with the picture and without (what a later step's image
 * cannot cost less than), a message taken in with it as a data URL and without (a first turn's, with links), the bytes
 * stored by the Worker or, as this project does, by a Durable Object.
 */
async function startFloor(dataUrl: string): Promise<WranglerDev> {
  const floorDev = await startWranglerDev({
    persistTo: join(persistTo, "floor"),
    config: "bench/peers/send-floor/wrangler.toml",
    ready: "/",
  });
  const res = await fetch(`${floorDev.url}/image`, { method: "POST", body: dataUrl });
  if (!res.ok) throw new Error(`the floor did not take the picture: ${res.status}`);
  return floorDev;
}

/** A model request; a message taken in, its bytes stored by the Worker; the same, stored by a Durable Object. */
type FloorKind = "step" | "take" | "take-object";

/** The isolate time of `target`'s workerd per turn, ms, over `TURNS` turns of `turn`. */
async function perTurn(target: WranglerDev, turn: (n: number) => Promise<void>): Promise<number> {
  const cpu = await profile(target, async () => {
    for (let n = 0; n < TURNS; n++) await turn(n);
  });
  return cpu.groups.reduce((sum, part) => sum + part.ms, 0) / TURNS;
}

/** A batch with the image and one without, in the order the round's `turned` says: each one's ms per turn. */
async function pair(turned: boolean, batch: (withImage: boolean) => Promise<number>): Promise<{ image: number; text: number }> {
  const ms = new Map<boolean, number>();
  for (const withImage of turned ? [false, true] : [true, false]) ms.set(withImage, await batch(withImage));
  return { image: ms.get(true)!, text: ms.get(false)! };
}

async function floorSend(kind: FloorKind, withImage: boolean, dataUrl: string, n: number): Promise<void> {
  const files = withImage ? { files: [{ url: dataUrl, name: "box.png" }] } : {};
  const step = `${floor!.url}/step?scenario=${scenario}-floor${withImage ? "&image" : ""}`;
  const res =
    kind === "step"
      ? await fetch(step, { method: "POST", headers: { "x-provider": `${fake.url}/v1` } })
      : await fetch(`${floor!.url}/${kind}`, { method: "POST", body: JSON.stringify({ message: `a photo ${n}`, ...files }) });
  const text = await res.text();
  if (!res.ok) throw new Error(`the floor's ${kind} failed: ${res.status} ${text}`);
}

/** The floor's image − text for `kind` in one round. */
async function floorRound(kind: FloorKind, turned: boolean, dataUrl: string): Promise<number> {
  const { image, text } = await pair(turned, (withImage) => perTurn(floor!, (n) => floorSend(kind, withImage, dataUrl, n)));
  return image - text;
}

/** A round's four batches, in the order they run (turned round every other round). */
const BATCHES = [
  { image: true, steps: 2 },
  { image: false, steps: 2 },
  { image: false, steps: 5 },
  { image: true, steps: 5 },
];

/**
 * `--step`: what a later step costs the isolate, image against text. Each of `ROUNDS` rounds profiles four batches of
 * `TURNS` later turns (image and text, of two steps and of five); a later step is a third of what a turn of five costs
 * over a turn of two (the first step, which reads the file, taken out), and the figures are the rounds' medians: one
 * batch's time moves between runs by more than a step costs, so a single pair of runs cannot tell them.
 */
async function laterStep(): Promise<void> {
  const dataUrl = image();
  const first = Array.from({ length: 4 + ROUNDS * BATCHES.length * TURNS }, () => ({ text: "Thanks, I see it." }));
  const later = (steps: number) => Array.from({ length: ROUNDS * 2 * TURNS }, () => laterTurnAnswers(steps)).flat();
  const scripts = [
    [scenario, first],
    [`${scenario}-s2`, later(2)],
    [`${scenario}-s5`, later(5)],
  ] as const;
  for (const [id, answers] of scripts) await script(id, answers);
  await scriptFloor(dataUrl);
  await warmUp(dataUrl);
  for (let round = 0; round < ROUNDS; round++)
    for (const batch of BATCHES)
      for (let n = 0; n < TURNS; n++) await firstTurn(dev, scenario, batchId(round, batch, n), batch.image ? dataUrl : null);
  console.log(
    `A later step in the isolate's time (workerd's inspector), ${values.url ? "FILES_SENT_AS=url" : "inline"}: ${ROUNDS} rounds` +
      ` of ${TURNS} later turns a batch; ms per turn of 2 and of 5 steps, a step a third of the difference\n\n` +
      `| round | image, 2 / 5 | text, 2 / 5 | a step, image | a step, text | image − text | image ÷ text |${floorHeader}\n` +
      `|---|---:|---:|---:|---:|---:|---:|${floorRule}`,
  );
  const ratios: number[] = [];
  const differences: number[] = [];
  const floors: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const [i2, i5, t2, t5] = await stepRound(round);
    const [image, text] = [(i5 - i2) / 3, (t5 - t2) / 3];
    ratios.push(image / text);
    differences.push(image - text);
    const f = (value: number) => value.toFixed(1);
    const row = [`${f(i2)} / ${f(i5)}`, `${f(t2)} / ${f(t5)}`, f(image), f(text), f(image - text), `${(image / text).toFixed(2)}×`];
    // A model request with the picture against one without: what a step's picture costs any Worker that sends it.
    if (floor) {
      floors.push(await floorRound("step", round % 2 === 1, dataUrl));
      row.push(f(floors[round]!));
    }
    console.log(`| ${round + 1} | ${row.join(" | ")} |`);
  }
  console.log(`\nA later step, the rounds' medians: image − text ${range(differences, " ms", 1)}; image ÷ text ${range(ratios, "×", 2)}`);
  if (floor) console.log(`The floor's model request, image − text: ${range(floors, " ms", 1)}`);
}

const floorHeader = values.floor ? " floor: image − text |" : "";
const floorRule = values.floor ? "---:|" : "";

/**
 * The floor's model requests have a scenario of their own (a longer id than the project's, so theirs wins); two of each
 * kind warm the floor up, as `warmUp` does the project.
 */
async function scriptFloor(dataUrl: string): Promise<void> {
  if (!floor) return;
  await script(
    `${scenario}-floor`,
    Array.from({ length: 4 + ROUNDS * 2 * TURNS }, () => ({ text: "ok" })),
  );
  for (const kind of ["step", "take", "take-object"] as const)
    for (const withImage of [true, false]) await floorSend(kind, withImage, dataUrl, 0);
}

const batchId = (round: number, batch: (typeof BATCHES)[number], n: number) =>
  `step-${round}-${batch.image ? "image" : "text"}-${batch.steps}-${n}`;

/** A round's isolate time per turn, ms: image of 2 steps and of 5, then text of 2 and of 5. */
async function stepRound(round: number): Promise<[number, number, number, number]> {
  const ms = new Map<string, number>();
  for (const batch of round % 2 ? [...BATCHES].reverse() : BATCHES) {
    const tag = `${scenario}-s${batch.steps}`;
    const turn = (n: number) => message(dev, batchId(round, batch, n), { message: `and now? [${tag}]` });
    ms.set(`${batch.image}-${batch.steps}`, await perTurn(dev, turn));
  }
  return [ms.get("true-2")!, ms.get("true-5")!, ms.get("false-2")!, ms.get("false-5")!];
}

/**
 * `--isolate --rounds R`: a first turn's isolate time, image against text, in rounds of two batches of `TURNS` first
 * turns (which goes first turned round every other round); the figures are the rounds' medians.
 */
async function firstTurnRounds(): Promise<void> {
  const dataUrl = image();
  const answers = Array.from({ length: 4 + ROUNDS * 2 * TURNS }, () => ({ text: "Thanks, I see it." }));
  await script(scenario, answers);
  await scriptFloor(dataUrl);
  await warmUp(dataUrl);
  console.log(
    `A first turn in the isolate's time (workerd's inspector), ${values.url ? "FILES_SENT_AS=url" : "inline"}: ${ROUNDS} rounds` +
      ` of ${TURNS} first turns a batch; ms per turn\n\n| round | image | text | image − text | image ÷ text |` +
      `${values.floor ? " floor: image − text | the floor through an object |" : ""}\n|---|---:|---:|---:|---:|${floorRule.repeat(2)}`,
  );
  const ratios: number[] = [];
  const differences: number[] = [];
  const floors = { direct: [] as number[], object: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    const turned = round % 2 === 1;
    const { image, text } = await pair(turned, (withImage) =>
      perTurn(dev, (n) => firstTurn(dev, scenario, `first-${round}-${withImage}-${n}`, withImage ? dataUrl : null)),
    );
    ratios.push(image / text);
    differences.push(image - text);
    const row = [image, text, image - text].map((ms) => ms.toFixed(1)).concat(`${(image / text).toFixed(2)}×`);
    // The megabyte taken in (and, inline, sent to the model once): what a first turn's picture costs any Worker.
    if (floor) {
      const sent = values.url ? 0 : await floorRound("step", turned, dataUrl);
      floors.direct.push((await floorRound("take", turned, dataUrl)) + sent);
      floors.object.push((await floorRound("take-object", turned, dataUrl)) + sent);
      row.push(floors.direct[round]!.toFixed(1), floors.object[round]!.toFixed(1));
    }
    console.log(`| ${round + 1} | ${row.join(" | ")} |`);
  }
  console.log(`\nA first turn, the rounds' medians: image − text ${range(differences, " ms", 1)}; image ÷ text ${range(ratios, "×", 2)}`);
  if (floor) {
    const what = `The floor's message taken in${values.url ? "" : " and model request"}, image − text`;
    console.log(`${what}: ${range(floors.direct, " ms", 1)}; through a Durable Object: ${range(floors.object, " ms", 1)}`);
  }
}

/** The rounds' median, and the least and most of them. */
function range(values: number[], unit: string, digits: number): string {
  const [low, high] = [Math.min(...values), Math.max(...values)];
  return `${median(values).toFixed(digits)}${unit} (rounds from ${low.toFixed(digits)}${unit} to ${high.toFixed(digits)}${unit})`;
}

const fake = await startFakeOpenAI();
const scenario = `nativefiles${Date.now()}`;
const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-files-native-"));
const links = { FILES_SENT_AS: "url", PUBLIC_URL: "https://chat.example", SESSION_SECRET: "bench-session-secret-0123456789" };
const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "100000", TITLE_MODEL: "off" };
const dev = await startWranglerDev({ persistTo, vars: { ...vars, ...(values.url ? links : {}) } });
const floor = values.floor ? await startFloor(image()) : undefined;
try {
  if (values.step) await laterStep();
  else if (values.isolate && values.rounds) await firstTurnRounds();
  else await parts();
} finally {
  await dev.stop();
  await floor?.stop();
  await fake.close();
  rmSync(persistTo, { recursive: true, force: true });
}
