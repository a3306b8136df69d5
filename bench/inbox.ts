/**
 * The inbox, measured through `wrangler dev` (development sign-in, the offline demo model):
 *  - a user's inbox of 10,000 conversations, each with a turn: the first page, a page deep in the
 *    list, and searches for words only the user's message has (the title renamed, the agent
 *    answering last) that find many and one, each p50 and p95 over repeated requests;
 *  - rows the inbox writes per turn to keep a conversation's entry current (the conversation's
 *    own rows beside them), for a first turn and for later ones;
 *  - what verifying a sign-in token adds to a request (keys cached): GET /v1/me with the master
 *    key, an HS256 token and an RS256 token from a JWKS, side by side in one run.
 *
 *   npm run bench:inbox [-- --conversations 10000 --samples 200]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { importJWK, SignJWT } from "jose";
import { startJwksServer } from "../test/node/jwks-server.ts";
import { chat, startWranglerDev, type WranglerDev } from "../test/e2e/wrangler-dev.ts";

const { values } = parseArgs({
  options: { conversations: { type: "string", default: "10000" }, samples: { type: "string", default: "200" } },
});
const CONVERSATIONS = Number(values.conversations);
const SAMPLES = Number(values.samples);
// Words the demo model routes by none of its keywords: each turn is the entry agent's plain answer.
const TOPICS = ["lisbon", "porto", "madrid", "seville", "valencia", "bilbao", "girona", "malaga", "cadiz", "toledo"];

function percentiles(ms: number[]): { p50: number; p95: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: Math.round(at(0.5) * 10) / 10, p95: Math.round(at(0.95) * 10) / 10 };
}

async function timed(samples: number, request: () => Promise<Response>): Promise<{ p50: number; p95: number }> {
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    const res = await request();
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    ms.push(performance.now() - start);
  }
  return percentiles(ms);
}

async function inParallel(count: number, width: number, each: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await each(next++);
    }),
  );
}

async function fillInbox(dev: WranglerDev, auth: Record<string, string>): Promise<void> {
  const started = performance.now();
  await inParallel(CONVERSATIONS, 16, async (i) => {
    const { id } = (await (await fetch(`${dev.url}/v1/conversations`, { method: "POST", headers: auth })).json()) as { id: string };
    const res = await fetch(`${dev.url}/v1/conversations/${id}`, {
      method: "PATCH",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ title: `Trip ${i}` }),
    });
    if (!res.ok) throw new Error(`PATCH ${res.status}`);
    const events = await chat(
      dev.url,
      id,
      `hello, a note about ${TOPICS[i % TOPICS.length]} for booking Q${String(i).padStart(5, "0")}`,
      auth,
    );
    if (events.at(-1)?.type !== "done") throw new Error(`turn ended with ${JSON.stringify(events.at(-1))}`);
  });
  const seconds = Math.round((performance.now() - started) / 1000);
  console.log(`filled an inbox with ${CONVERSATIONS} conversations (created, renamed, one turn each) in ${seconds} s`);
}

async function listAndSearch(dev: WranglerDev, auth: Record<string, string>): Promise<void> {
  const get = (query: string) => () => fetch(`${dev.url}/v1/conversations?${query}`, { headers: auth });
  // The first search after the fill brings the search index up to date with every changed conversation.
  const indexing = performance.now();
  await (await get("limit=50&q=lisbon")()).arrayBuffer();
  console.log(`\nthe first search after ${CONVERSATIONS} changes (indexes them): ${Math.round(performance.now() - indexing)} ms`);
  // The words are the user's only (renamed, answered last): found by them, or the figures would time an empty search.
  const one = (await (await get("limit=50&q=Q04242")()).json()) as { conversations: Array<{ title: string }> };
  if (CONVERSATIONS > 4242 && one.conversations.map((c) => c.title).join() !== "Trip 4242")
    throw new Error(`search "Q04242" found ${JSON.stringify(one.conversations.map((c) => c.title))}`);
  // The cursor of page 51 (or of the last page, in a smaller inbox).
  let deep = ((await (await get("limit=50")()).json()) as { next: string }).next;
  for (let page = 2; page <= Math.min(50, CONVERSATIONS / 50 - 1); page++)
    deep = ((await (await get(`limit=50&before=${deep}`)()).json()) as { next: string }).next;
  const rows = [
    ["first page (50)", await timed(SAMPLES, get("limit=50"))],
    [`page ${Math.min(51, CONVERSATIONS / 50)} (before=cursor)`, await timed(SAMPLES, get(`limit=50&before=${deep}`))],
    [`search "lisbon" (${CONVERSATIONS / TOPICS.length} match, first 50)`, await timed(SAMPLES, get("limit=50&q=lisbon"))],
    ['search "Q04242" (one match)', await timed(SAMPLES, get("limit=50&q=Q04242"))],
    ['search "Q0424" (a prefix: ten match)', await timed(SAMPLES, get("limit=50&q=Q0424"))],
    ['search "nowhere" (none match)', await timed(SAMPLES, get("limit=50&q=nowhere"))],
  ] as const;
  console.log(`\nGET /v1/conversations, an inbox of ${CONVERSATIONS} (${SAMPLES} requests each, ms)`);
  console.log("| request | p50 | p95 |\n|---|---:|---:|");
  for (const [what, { p50, p95 }] of rows) console.log(`| ${what} | ${p50} | ${p95} |`);
}

async function rowsPerTurn(dev: WranglerDev, auth: Record<string, string>): Promise<void> {
  const { id } = (await (await fetch(`${dev.url}/v1/conversations`, { method: "POST", headers: auth })).json()) as { id: string };
  console.log("\nRows written per turn: the conversation's own, and its owner's inbox's (to keep the entry current)");
  console.log("| turn | message | conversation rows | inbox rows |\n|---:|---|---:|---:|");
  const messages = ["Where is order A1002?", "hello", "What is 12 * 7?", "thanks", "hello"];
  for (const [i, message] of messages.entries()) {
    const events = await chat(dev.url, id, message, auth);
    if (events.at(-1)?.type !== "done") throw new Error(`turn ended with ${JSON.stringify(events.at(-1))}`);
    // The first turn's title is made after it, off its path: let it land before reading the figures.
    if (i === 0) await new Promise((resolve) => setTimeout(resolve, 500));
    const view = (await (await fetch(`${dev.url}/v1/conversations/${id}`, { headers: auth })).json()) as {
      lastTurnStorage: { rowsWritten: number; inboxRowsWritten?: number };
    };
    console.log(`| ${i + 1} | ${message} | ${view.lastTurnStorage.rowsWritten} | ${view.lastTurnStorage.inboxRowsWritten ?? "?"} |`);
  }
}

async function tokenCost(): Promise<void> {
  const jwks = await startJwksServer();
  const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-tokens-"));
  const master = "bench-master-key-0123456789";
  const dev = await startWranglerDev({
    persistTo,
    vars: { ALLOW_ANONYMOUS: "false", API_KEY: master, AUTH_JWKS_URL: `${jwks.url}/jwks.json`, AUTH_ISSUER: "https://idp.test" },
    ready: "/v1/openapi.json",
  });
  try {
    const sign = async (kid: string) => {
      const jwk = jwks.keys[kid]!;
      return new SignJWT({ sub: "bench-user", name: "Bench" })
        .setProtectedHeader({ alg: jwk.alg!, kid })
        .setIssuer("https://idp.test")
        .setExpirationTime("1h")
        .sign(await importJWK(jwk, jwk.alg));
    };
    const me = (token: string) => () => fetch(`${dev.url}/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    const rs = await sign("rs1");
    const es = await sign("es1");
    // Warm: the key set is fetched once and cached.
    await (await me(rs)()).arrayBuffer();
    const rounds: Record<string, number[]> = { master: [], rs256: [], es256: [] };
    // Interleaved, so the machine's noise falls on all three alike.
    for (let i = 0; i < SAMPLES; i++) {
      for (const [name, token] of [
        ["master", master],
        ["rs256", rs],
        ["es256", es],
      ] as const) {
        const start = performance.now();
        await (await me(token)()).arrayBuffer();
        rounds[name]!.push(performance.now() - start);
      }
    }
    const base = percentiles(rounds.master!).p50;
    console.log(`\nGET /v1/me by credential (${SAMPLES} interleaved requests each, ms; keys cached)`);
    console.log("| credential | p50 | p95 | p50 vs the master key |\n|---|---:|---:|---:|");
    for (const [name, ms] of Object.entries(rounds)) {
      const { p50, p95 } = percentiles(ms);
      const delta = Math.round((p50 - base) * 10) / 10;
      console.log(`| ${name} | ${p50} | ${p95} | ${delta >= 0 ? "+" : ""}${delta} ms |`);
    }
  } finally {
    await dev.stop();
    await jwks.close();
    rmSync(persistTo, { recursive: true, force: true });
  }
}

/**
 * The project's wrangler.toml with the client limiter raised: one user fills 10,000 conversations
 * with a turn each, past the 600 turns a minute it allows one user (written beside the original, so
 * its paths hold; removed at the end).
 */
function benchConfig(): string {
  const original = readFileSync("wrangler.toml", "utf8");
  const raised = original.replace(/simple = \{ limit = \d+, period = 60 \}/, "simple = { limit = 1000000, period = 60 }");
  if (raised === original) throw new Error("wrangler.toml has no client limiter to raise");
  writeFileSync(".wrangler-bench-inbox.toml", raised);
  return ".wrangler-bench-inbox.toml";
}

const persistTo = mkdtempSync(join(tmpdir(), "handoff-bench-inbox-"));
const config = benchConfig();
const dev = await startWranglerDev({ persistTo, config, vars: { TURNS_PER_MINUTE: "100000" } });
try {
  const signIn = await fetch(`${dev.url}/v1/dev/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "Bench" }),
  });
  const auth = { authorization: `Bearer ${((await signIn.json()) as { token: string }).token}` };
  await rowsPerTurn(dev, auth);
  await fillInbox(dev, auth);
  await listAndSearch(dev, auth);
} finally {
  await dev.stop();
  rmSync(persistTo, { recursive: true, force: true });
  rmSync(config, { force: true });
}
await tokenCost();
