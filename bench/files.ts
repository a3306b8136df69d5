/**
 * What a 1 MB image costs a turn, through `wrangler dev` (R2 local) against the fake provider,
 * side by side with the same turn without it, sides alternating (ABBA): bytes the conversation's
 * Durable Object writes (its turn's count, and its SQLite file's growth: the image is expected to
 * be a reference row there, its bytes in R2), the workerd CPU of the request, and the time to the
 * first text delta (the image is read from R2 and sent to the provider as a data URL first). A first message may also
 * name an image uploaded just before it by `POST …/files` (its raw bytes, no base64): both requests are counted.
 *
 * Side by side in one run: the baseline tree (`--baseline`, the commit before this one by default), this tree, and this
 * tree sending images as links (FILES_SENT_AS=url); each conversation's later text turn shows what the image in its
 * history costs every later request. Beside them, local R2 alone (bench/peers/r2-put): the writes that store the
 * megabyte against a request that drops it, and a read of it against none, so what the simulator costs workerd is told
 * apart from the Worker's work.
 *
 *   npm run bench:files [-- --turns 20] [-- --baseline <git ref>]
 */
import { createHash } from "node:crypto";
import { readdirSync, statSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";
import { parseArgs } from "node:util";
import { parseSse, startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { worktree } from "./worktree.ts";
import { turnCpuMs } from "./workerd-processes.ts";

const IMAGE_BYTES = 1024 * 1024;

/** A PNG's signature and a megabyte after it: the Worker takes it by its signature. */
export function image(): string {
  const bytes = Buffer.alloc(IMAGE_BYTES, 7);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return `data:image/png;base64,${bytes.toString("base64")}`;
}

/** Bytes of the Durable Objects' SQLite files under the persisted state. */
function objectBytes(dir: string): number {
  let total = 0;
  // A write-ahead log may go between the listing and the read.
  for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" }))
    if (/\/do\/.*\.sqlite(-wal)?$/.test(`/${entry}`)) total += statSync(join(dir, entry), { throwIfNoEntry: false })?.size ?? 0;
  return total;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Turn {
  ttftMs: number;
  cpuMs: number;
  turnBytes: number;
  fileBytes: number;
}

/** One Worker measured: where it runs from, its variables, and its turns by kind. */
interface Side {
  label: string;
  dev: WranglerDev;
  /** Whether it sends images as links (FILES_SENT_AS=url). */
  links: boolean;
  persistTo: string;
  turns: Map<string, Turn[]>;
}

/**
 * What each conversation does: a first message with or without the image (one model call), then a later text message
 * of two steps (a tool call, then the answer), then one of five (four tool calls, then the answer), each of whose
 * requests carries the image from the history; the two later turns come in either order, conversations alternating, so
 * neither is always the one after the upload. They differ by three steps, each after its turn's first.
 */
const KINDS = [
  "text, first turn",
  "image, first turn",
  "image uploaded, first turn",
  "text, later turn",
  "image, later turn",
  "text, later turn of 5 steps",
  "image, later turn of 5 steps",
] as const;

/** How a conversation's first message comes: text alone, with the image inline (a data URL), or naming an upload. */
type FirstMessage = "text" | "inline" | "uploaded";
type Kind = (typeof KINDS)[number];
/** The kind each first message is counted as, and its later turn (an uploaded image's later turn is the inline one's). */
const OPENING: Record<FirstMessage, Kind> = {
  text: "text, first turn",
  inline: "image, first turn",
  uploaded: "image uploaded, first turn",
};
const LATER: Record<FirstMessage, [Kind, Kind] | undefined> = {
  text: ["text, later turn", "text, later turn of 5 steps"],
  inline: ["image, later turn", "image, later turn of 5 steps"],
  uploaded: undefined,
};

/**
 * The baseline tree, this one, and this one sending images as links, side by side, sides alternating: each
 * conversation's first message with or without a 1 MB image, then a later text-only message whose requests carry the
 * image from the history.
 */
export async function fileRows(turns = 20, baseline = "HEAD~1"): Promise<string[]> {
  const fake = await startFakeOpenAI();
  const tree = worktree(baseline);
  const vars = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-bench", TURNS_PER_MINUTE: "100000", TITLE_MODEL: "off" };
  const sides: Side[] = [];
  const scenario = `bench${Date.now()}`;
  const r2 = { persistTo: mkdtempSync(join(tmpdir(), "handoff-bench-r2-")), writes: [] as number[], read: [] as number[] };
  let r2Dev: WranglerDev | undefined;
  try {
    // The warm-up round, then each round's nine conversations (three first messages on three sides), in their order.
    const rounds = [false, ...Array.from({ length: turns }, (_, n) => n % 2 === 1)];
    const answers = rounds.flatMap((longerFirst) => Array.from({ length: 9 }, () => script(longerFirst)).flat());
    await fetch(`${fake.url}/__scenarios`, { method: "POST", body: JSON.stringify({ id: scenario, answers, keepRequests: false }) });
    // Images as links: the fake provider does not fetch them (a real one does, from the file route: an R2 read, no base64).
    const links = { FILES_SENT_AS: "url", PUBLIC_URL: "https://chat.example", SESSION_SECRET: "bench-session-secret-0123456789" };
    for (const [label, cwd, more] of [
      [`at ${baseline}`, tree.dir, {}],
      ["this tree", process.cwd(), {}],
      ["this tree, FILES_SENT_AS=url", process.cwd(), links],
    ] as const) {
      const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-files-"));
      const dev = await startWranglerDev({ persistTo, vars: { ...vars, ...more }, cwd });
      sides.push({ label, dev, persistTo, links: more === links, turns: new Map(KINDS.map((k) => [k, []])) });
    }
    r2Dev = await startWranglerDev({ persistTo: r2.persistTo, config: "bench/peers/r2-put/wrangler.toml" });
    const dataUrl = image();
    const firsts: FirstMessage[] = ["text", "inline", "uploaded"];
    for (const side of sides) for (const first of firsts) await conversation(side, scenario, dataUrl, "warm", first);
    await localR2(r2Dev, dataUrl);
    for (let n = 0; n < turns; n++) {
      const order = n % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order)
        for (const first of n % 2 === 0 ? firsts : [...firsts].reverse()) await conversation(side, scenario, dataUrl, String(n), first);
      const { writes, read } = await localR2(r2Dev, dataUrl);
      r2.writes.push(writes);
      r2.read.push(read);
    }
  } finally {
    await r2Dev?.stop();
    rmSync(r2.persistTo, { recursive: true, force: true });
    for (const side of sides) {
      await side.dev.stop();
      rmSync(side.persistTo, { recursive: true, force: true });
    }
    tree.remove();
    await fake.close();
  }
  return report(sides, turns, { writes: median(r2.writes), read: median(r2.read) });
}

/**
 * Local R2 alone: workerd's CPU for a request that stores the image's bytes as a conversation does, less one that drops
 * them; and for a request that reads them back as a leg does, less one that reads nothing.
 */
async function localR2(dev: WranglerDev, dataUrl: string): Promise<{ writes: number; read: number }> {
  const bytes = Buffer.from(dataUrl.slice(dataUrl.indexOf(",") + 1), "base64");
  const headers = { "x-sha256": createHash("sha256").update(bytes).digest("hex") };
  const send = async (path: string, body?: Buffer) => {
    let answer = "";
    const cpuMs = await turnCpuMs(dev, async () => {
      const res = await fetch(`${dev.url}${path}`, body ? { method: "POST", headers, body: new Uint8Array(body) } : undefined);
      answer = await res.text();
      if (!res.ok) throw new Error(`local R2's ${path} answered ${res.status}: ${answer.slice(0, 200)}`);
    });
    return { cpuMs, answer };
  };
  const put = await send("/put", bytes);
  const drop = await send("/drop", bytes);
  const read = await send(`/get/${put.answer}`);
  if (Number(read.answer) !== bytes.length) throw new Error(`local R2 read ${read.answer} bytes of ${bytes.length}`);
  const none = await send("/none");
  return { writes: put.cpuMs - drop.cpuMs, read: read.cpuMs - none.cpuMs };
}

/**
 * A conversation of three turns: its first message (text alone, the image inline, or the image uploaded by `POST …/files`
 * with its raw bytes and then named by id: both requests counted), then two later text messages; each measured.
 */
async function conversation(side: Side, scenario: string, dataUrl: string, n: string, first: FirstMessage): Promise<void> {
  const id = `bench-files-${first}-${n}`;
  const message = `a photo [${scenario}]`;
  const opening =
    first === "uploaded"
      ? await turn(side, id, async () => ({ message, files: [{ fileId: await upload(side, id, dataUrl) }] }))
      : await turn(side, id, async () => ({ message, ...(first === "inline" ? { files: [{ url: dataUrl, name: "box.png" }] } : {}) }));
  const [later, longer] = await laterTurns(side, id, scenario, n !== "warm" && Number(n) % 2 === 1);
  if (n === "warm") return;
  side.turns.get(OPENING[first])!.push(opening);
  const after = LATER[first];
  if (after) [later, longer].forEach((measured, i) => side.turns.get(after[i]!)!.push(measured));
}

/**
 * A later turn of `steps` steps as the provider answers it: tool calls the demo's triage agent fails (`remember`: no one
 * is signed in) or refuses (a handoff to no agent, which the runaway-error guard does not count), alternating, so never
 * three failed steps in a row; then the answer.
 */
export function laterTurnAnswers(steps: number, answer = "Noted."): object[] {
  const call = (name: string) => ({ toolCalls: [{ name, arguments: JSON.stringify({ text: "Likes photos" }) }] });
  return [...Array.from({ length: steps - 1 }, (_, i) => call(i % 2 === 0 ? "remember" : "transfer_to_nowhere")), { text: answer }];
}

/** What the provider answers a conversation: its first turn one step; its later turns two steps and five, the longer first or not. */
function script(longerFirst: boolean): object[] {
  const [later, longer] = [laterTurnAnswers(2), laterTurnAnswers(5, "Noted again.")];
  return [{ text: "Thanks, I see it." }, ...(longerFirst ? [...longer, ...later] : [...later, ...longer])];
}

/** A conversation's later turns of two steps and of five, in the order `longerFirst` says: the two measured. */
async function laterTurns(side: Side, id: string, scenario: string, longerFirst: boolean): Promise<[Turn, Turn]> {
  const next = () => turn(side, id, async () => ({ message: `and now? [${scenario}]` }));
  if (!longerFirst) return [await next(), await next()];
  const longer = await next();
  return [await next(), longer];
}

/** The image's raw bytes uploaded to the conversation (its first request makes it): the file's id. */
async function upload(side: Side, id: string, dataUrl: string): Promise<string> {
  const bytes = Buffer.from(dataUrl.slice(dataUrl.indexOf(",") + 1), "base64");
  const res = await fetch(`${side.dev.url}/v1/conversations/${id}/files?name=box.png`, {
    method: "POST",
    headers: { "content-type": "image/png" },
    body: bytes,
  });
  if (res.status !== 201) throw new Error(`the upload to ${id} answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { file: { id: string } }).file.id;
}

/** A turn, from `body`'s first request (an upload, when it makes one) to the turn's end. */
async function turn(side: Side, id: string, body: () => Promise<unknown>): Promise<Turn> {
  const before = objectBytes(side.persistTo);
  let ttftMs = 0;
  const cpuMs = await turnCpuMs(side.dev, async () => {
    const start = performance.now();
    const sent = await body();
    const res = await fetch(`${side.dev.url}/v1/conversations/${id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(sent),
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      text += decoder.decode(read.value, { stream: true });
      if (!ttftMs && text.includes("event: text-delta")) ttftMs = performance.now() - start;
    }
    if (parseSse(text).at(-1)?.type !== "done") throw new Error(`a turn of ${id} ended with ${text.slice(-300)}`);
  });
  const view = (await (await fetch(`${side.dev.url}/v1/conversations/${id}`)).json()) as { lastTurnStorage: { bytesWritten: number } };
  return { ttftMs, cpuMs, turnBytes: view.lastTurnStorage.bytesWritten, fileBytes: objectBytes(side.persistTo) - before };
}

function report(sides: Side[], turns: number, r2: { writes: number; read: number }): string[] {
  const of = (side: Side, kind: (typeof KINDS)[number], key: keyof Turn) => median(side.turns.get(kind)!.map((t) => t[key]));
  const ratio = (side: Side, kind: "first" | "later" | "uploaded", key: keyof Turn) =>
    kind === "uploaded"
      ? (of(side, "image uploaded, first turn", key) / of(side, "text, first turn", key)).toFixed(2)
      : (of(side, `image, ${kind} turn`, key) / of(side, `text, ${kind} turn`, key)).toFixed(2);
  // A step after its turn's first: a third of what a conversation's later turn of five steps costs over its turn of two
  // (the two kinds' lists are in the same order, a conversation's two turns at the same place), the median of those.
  const step = (side: Side, what: "text" | "image") => {
    const [two, five] = [side.turns.get(`${what}, later turn`)!, side.turns.get(`${what}, later turn of 5 steps`)!];
    return median(five.map((turn, i) => (turn.cpuMs - two[i]!.cpuMs) / 3));
  };
  const stepRatio = (side: Side) => `${(step(side, "image") / step(side, "text")).toFixed(2)}×`;
  return [
    `Each conversation: a first message with or without a 1 MB PNG (a data URL in the JSON body, or an upload of its raw bytes`,
    `just before, named by id; one model call), then a later text message of two steps (a tool call, then the answer),`,
    `then one of five (four tool calls, then the answer), in either order, each of whose requests carries the image;`,
    `${turns} conversations of each kind per side, sides and kinds alternating; medians. A later step (one after its`,
    `turn's first) is the median over conversations of a third of what the turn of five steps costs over the turn of two.`,
    "",
    "| side | turn | workerd CPU, ms | first text delta, ms | bytes the turn writes (DO) |",
    "|---|---|---:|---:|---:|",
    ...sides.flatMap((side) =>
      KINDS.map(
        (kind) =>
          `| ${side.label} | ${kind} | ${of(side, kind, "cpuMs").toFixed(1)} | ${of(side, kind, "ttftMs").toFixed(1)} | ${of(side, kind, "turnBytes")} |`,
      ),
    ),
    "",
    "| side | first turn, image ÷ text: CPU | first text delta | uploaded first: CPU | first text delta | later turn: CPU | first text delta | a later step: CPU (ms, text and image) |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
    ...sides.map((side) => {
      const cells = (["first", "uploaded", "later"] as const).flatMap((k) => [ratio(side, k, "cpuMs"), ratio(side, k, "ttftMs")]);
      const steps = `${stepRatio(side)} (${step(side, "text").toFixed(1)}, ${step(side, "image").toFixed(1)})`;
      return `| ${side.label} | ${cells.map((cell) => `${cell}×`).join(" | ")} | ${steps} |`;
    }),
    "",
    `Local R2 alone (medians of the differences): storing the megabyte as a conversation does (a holder's marker, then`,
    `the bytes with the SHA-256 R2 checks) costs workerd ${r2.writes.toFixed(1)} ms of CPU more than a request that drops it;`,
    `reading it back as a leg does, ${r2.read.toFixed(1)} ms more than a request that reads nothing. Under wrangler dev this`,
    `is in the Worker's workerd; on Cloudflare it is R2's. Image ÷ text CPU with it taken out (the writes from a first`,
    `turn, the read from an inline later turn):`,
    "",
    "| side | first turn | uploaded first | later turn | a later step (reads nothing) |",
    "|---|---:|---:|---:|---:|",
    ...sides.map((side) => {
      const without = (kind: Kind, base: Kind, ms: number) => ((of(side, kind, "cpuMs") - ms) / of(side, base, "cpuMs")).toFixed(2);
      const first = (kind: Kind) => without(kind, "text, first turn", r2.writes);
      // With links nothing is read from R2 for a later turn.
      const read = side.links ? 0 : r2.read;
      const later = without("image, later turn", "text, later turn", read);
      return `| ${side.label} | ${first("image, first turn")}× | ${first("image uploaded, first turn")}× | ${later}× | ${stepRatio(side)} |`;
    }),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { turns: { type: "string" }, baseline: { type: "string" } } });
  console.log((await fileRows(Number(values.turns) || 20, values.baseline ?? "HEAD~1")).join("\n"));
}
