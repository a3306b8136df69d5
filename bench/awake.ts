/**
 * How long a conversation's Durable Object stays awake while a page follows a person-held
 * conversation: the SSE follow stream (`GET …/events?follow=true`, reopened when it ends) against a
 * hibernating WebSocket (`GET …/socket`), side by side, one `wrangler dev` each, for ten minutes,
 * with the person answering a few times. The bench's Worker (bench/peers/awake) logs each time its
 * Conversation object is constructed: a wake. workerd, like production, evicts an object 10 s after
 * its last event when nothing holds it (no request in flight; hibernatable sockets do not hold it).
 *
 *   npm run bench:awake [-- --minutes 10 --answers 3]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chat, startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";
import { startFakeOpenAI } from "../test/node/fake-openai-server.ts";

const { values } = parseArgs({ options: { minutes: { type: "string", default: "10" }, answers: { type: "string", default: "3" } } });
const WINDOW_MS = Number(values.minutes) * 60_000;
const ANSWERS = Number(values.answers);
/** workerd's (and production's) inactivity timeout before an object that nothing holds is evicted. */
const EVICT_AFTER_MS = 10_000;
const CONFIG = new URL("./peers/awake/wrangler.toml", import.meta.url).pathname;
const OPERATOR = { authorization: "Bearer bench-operator-key-0001", "content-type": "application/json" };

interface Side {
  dev: WranglerDev;
  /** Person's messages the page received. */
  received: number;
  /** When the person's messages were sent (start and end of each request). */
  answers: Array<[number, number]>;
  /** Follow requests the page opened (SSE only). */
  requests: number;
  /** When each follow request was open (SSE only). */
  open: Array<[number, number]>;
}

function wakes(dev: WranglerDev, from: number): number[] {
  return [...dev.log().matchAll(/\{"bench":"woke","at":(\d+)\}/g)].map((m) => Number(m[1])).filter((at) => at >= from);
}

/** The page on SSE: a follow stream, reopened from the last event id whenever the Worker ends it. */
async function followOverSse(side: Side, id: string, until: number, after: number): Promise<void> {
  let last = after;
  while (Date.now() < until) {
    const opened = Date.now();
    side.requests++;
    const controller = new AbortController();
    const stop = setTimeout(() => controller.abort(), until - Date.now());
    try {
      const res = await fetch(`${side.dev.url}/v1/conversations/${id}/events?follow=true&after=${last}`, { signal: controller.signal });
      if (res.status === 204 || !res.body) throw new Error(`the follow stream answered ${res.status}`);
      let text = "";
      const decoder = new TextDecoder();
      for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(bytes, { stream: true });
        const frames = text.split("\n\n");
        text = frames.pop() ?? "";
        for (const frame of frames) {
          const eventId = /^id: (\d+)$/m.exec(frame);
          if (eventId) last = Number(eventId[1]);
          if (frame.includes("event: operator-message")) side.received++;
        }
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    } finally {
      clearTimeout(stop);
      side.open.push([opened, Date.now()]);
    }
  }
}

/** The page on a WebSocket: opened once, after the last event. */
async function followOverSocket(side: Side, id: string, until: number, after: number): Promise<void> {
  const socket = new WebSocket(`${side.dev.url.replace("http", "ws")}/v1/conversations/${id}/socket?after=${after}`);
  socket.addEventListener("message", (event) => {
    if ((JSON.parse(String(event.data)) as { type: string }).type === "operator-message") side.received++;
  });
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve);
    socket.addEventListener("error", reject);
  });
  await new Promise((resolve) => setTimeout(resolve, until - Date.now()));
  socket.close();
}

async function answer(side: Side, id: string, n: number): Promise<void> {
  const start = Date.now();
  const res = await fetch(`${side.dev.url}/v1/conversations/${id}/operator/messages`, {
    method: "POST",
    headers: OPERATOR,
    body: JSON.stringify({ message: `The person's answer ${n}.`, operator: "Sam" }),
  });
  if (!res.ok) throw new Error(`the operator's message answered ${res.status}: ${await res.text()}`);
  side.answers.push([start, Date.now()]);
}

/**
 * Awake time: the union of what held the object (the handover turn at the start, each person's
 * message, each open follow request), each extended by the 10 s before eviction, within the window.
 * A gap in that union is an eviction, so the wakes the log shows must be one per gap.
 */
function awake(side: Side, from: number, until: number): { ms: number; gaps: number } {
  const held = [[from, from] as [number, number], ...side.answers, ...side.open].sort((a, b) => a[0] - b[0]);
  let ms = 0;
  let gaps = 0;
  let [start, end] = [from, from + EVICT_AFTER_MS];
  for (const [s, e] of held.slice(1)) {
    if (s > end) {
      ms += end - start;
      gaps++;
      start = s;
    }
    end = Math.max(end, e + EVICT_AFTER_MS);
  }
  return { ms: ms + Math.min(end, until) - start, gaps };
}

const fake = await startFakeOpenAI();
const scratch = mkdtempSync(join(tmpdir(), "bench-awake-"));
const vars = {
  OPENAI_BASE_URL: `${fake.url}/v1`,
  OPENAI_API_KEY: "sk-bench",
  OPERATOR_KEY: "bench-operator-key-0001",
  TURNS_PER_MINUTE: "1000",
};
// Both sides start, or neither is left running.
const started = await Promise.allSettled(
  ["sse", "ws"].map((name) => startWranglerDev({ persistTo: join(scratch, name), vars, config: CONFIG })),
);
const devs = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
if (devs.length < 2) {
  await Promise.all([...devs.map((dev) => dev.stop()), fake.close()]);
  throw (started.find((s) => s.status === "rejected") as PromiseRejectedResult).reason;
}
const side = (dev: WranglerDev): Side => ({ dev, received: 0, answers: [], requests: 0, open: [] });
const [sse, ws] = [side(devs[0]!), side(devs[1]!)];
try {
  const lastIds: number[] = [];
  for (const [side, id] of [
    [sse, "scnawakesse"],
    [ws, "scnawakews"],
  ] as const) {
    await fetch(`${fake.url}/__scenarios`, {
      method: "POST",
      body: JSON.stringify({ id, answers: [{ toolCalls: [{ name: "transfer_to_desk", arguments: "{}" }] }] }),
    });
    const events = await chat(side.dev.url, "followed", `I want a person [${id}]`);
    if (!events.some((e) => e.type === "done" && e.status === "awaiting_human"))
      throw new Error("the conversation was not handed to the person");
    lastIds.push(events.at(-1)!.id);
  }
  const from = Date.now();
  const until = from + WINDOW_MS;
  console.error(`bench awake: following for ${values.minutes} min, the person answers ${ANSWERS} times…`);
  const answers = (async () => {
    for (let n = 1; n <= ANSWERS; n++) {
      await new Promise((resolve) => setTimeout(resolve, from + (n * WINDOW_MS) / (ANSWERS + 1) - Date.now()));
      await Promise.all([answer(sse, "followed", n), answer(ws, "followed", n)]);
    }
  })();
  await Promise.all([followOverSse(sse, "followed", until, lastIds[0]!), followOverSocket(ws, "followed", until, lastIds[1]!), answers]);
  const row = (name: string, side: Side) => {
    const { ms, gaps } = awake(side, from, until);
    return `| ${name} | ${(ms / 1000).toFixed(0)} s | ${((ms / WINDOW_MS) * 100).toFixed(1)}% | ${wakes(side.dev, from).length} (${gaps} expected) | ${side.received} of ${ANSWERS} | ${side.requests} |`;
  };
  console.log(
    `A person-held conversation followed for ${values.minutes} min, the person answering ${ANSWERS} times (one wrangler dev per side, side by side; awake = what held the object — the handover turn, the person's messages, open follow requests — each extended by the ${EVICT_AFTER_MS / 1000} s before eviction; a wake logged by the object for each gap confirms it was evicted)`,
  );
  console.log("\n| the page follows over | object awake | of the time | wakes | person's messages received | requests opened |");
  console.log("|---|---:|---:|---:|---:|---:|");
  console.log(row("SSE (`GET …/events?follow=true`, reopened)", sse));
  console.log(row("hibernating WebSocket (`GET …/socket`)", ws));
} finally {
  await Promise.all([sse.dev.stop(), ws.dev.stop()]);
  await fake.close();
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(0);
