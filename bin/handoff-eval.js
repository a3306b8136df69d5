#!/usr/bin/env node
/**
 * handoff-eval: run eval cases (JSONL) against a network and score its routing.
 *
 *   handoff-eval run cases.jsonl --network ./src/network.ts [--compare ./src/network-b.ts]
 *     [--k 3] [--concurrency 4] [--retries 2] [--model demo|<name>] [--prices prices.json]
 *     [--out DIR] [--title TEXT] [--min-accuracy 0.8] [--min-pass 0.8]
 *     [--router router.json [--threshold 0.9]]
 *   handoff-eval train cases.jsonl --out router.json
 *
 * `train` fits a lexical router to the cases' first messages and expected holders. `run --router`
 * measures it alone on the cases (router-only), then runs the network with and without it on its
 * entry agent (router-then-model, model-only), and says how many first messages it routed itself.
 *
 * The network module's default export (or `network`) is a Network, or a function that returns one;
 * its agents' MCP servers are reached through the package's MCP client (headers from this environment).
 * The model is the one the Worker would use: OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL (and
 * OPENAI_API, OPENAI_MAX_RETRIES); with neither key nor URL, or `--model demo`, the offline demo
 * model answers. `--model <name>` (else OPENAI_MODEL) is the model called for every agent that
 * names none of its own, over the network's default.
 * Exit codes: 0 passed the thresholds, 1 below a threshold, 2 bad input (nothing is run).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import {
  compare,
  DemoModel,
  htmlReport,
  LexicalRouter,
  lexicalRouter,
  parseCases,
  routedFirstTurns,
  routerExamplesOf,
  routerTable,
  runEval,
  score,
  scoreTable,
  trainLexicalRouter,
  withRouter,
} from "../dist/evals/index.js";
import { McpConnections } from "../dist/mcp/index.js";

const USAGE =
  "usage: handoff-eval run <cases.jsonl> --network <module> [--compare <module>] [--router router.json [--threshold X]] [--k N] [--concurrency N] [--out DIR] [--model demo|<name>] [--prices FILE] [--min-accuracy X] [--min-pass X]\n       handoff-eval train <cases.jsonl> --out router.json";

/** @param {string} message */
function refuse(message) {
  console.error(`handoff-eval: ${message}`);
  process.exit(2);
}

/** @param {string} path */
async function loadNetwork(path) {
  const module = await import(pathToFileURL(resolve(path)).href).catch((error) => refuse(`cannot load the network module ${path}: ${error.message}`));
  const exported = module.default ?? module.network ?? module.createNetwork;
  // A function is called as the Worker calls its network's: with the environment.
  const network = typeof exported === "function" ? await exported(process.env) : exported;
  if (!network?.entry || typeof network.toolset !== "function")
    refuse(`${path} exports no Network (default export, \`network\` or \`createNetwork\`: a Network or a function returning one).`);
  return network;
}

/**
 * The model called: `name` for every agent without a model of its own, over the network's default.
 * @param {import("../dist/runtime/index.js").Model} model
 * @param {import("../dist/runtime/index.js").Network} network
 * @param {string | undefined} name
 * @returns {import("../dist/runtime/index.js").Model}
 */
function choosing(model, network, name) {
  if (!name) return model;
  return { ...(model.label ? { label: model.label } : {}), stream: (request) => model.stream({ ...request, model: network.get(request.agent)?.model ?? name }) };
}

/** OPENAI_MAX_RETRIES, as the Worker reads it: the provider client's retries (2 when unset). */
function maxRetries() {
  const raw = process.env.OPENAI_MAX_RETRIES;
  if (raw === undefined || raw === "") return 2;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 10) refuse(`OPENAI_MAX_RETRIES must be a whole number from 0 to 10 (it is ${raw}).`);
  return n;
}

/** @param {string | undefined} name */
async function loadModel(name) {
  if (name === "demo" || (!process.env.OPENAI_API_KEY && !process.env.OPENAI_BASE_URL)) return { model: new DemoModel(), label: "the offline demo model" };
  const [{ default: OpenAI }, { OpenAIModel }] = await Promise.all([import("openai"), import("../dist/models/index.js")]);
  const client = new OpenAI({ apiKey: process.env.OPENAI_API_KEY ?? "none", baseURL: process.env.OPENAI_BASE_URL, maxRetries: maxRetries() });
  const api = process.env.OPENAI_API === "responses" ? "responses" : "chat";
  return { model: new OpenAIModel(client, { api }), label: `${name ?? process.env.OPENAI_MODEL ?? "the agents' models"} at ${process.env.OPENAI_BASE_URL ?? "OpenAI"}` };
}

/** A progress bar on stderr when it is a terminal. */
function progress() {
  const tty = process.stderr.isTTY;
  return (/** @type {number} */ done, /** @type {number} */ total) => {
    if (!tty) return;
    const width = 30;
    const filled = Math.round((done / total) * width);
    process.stderr.write(`\r[${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total}`);
    if (done === total) process.stderr.write("\n");
  };
}

/**
 * `train`: a lexical router fitted to the cases' first messages and expected holders, written as JSON.
 * @param {any[]} cases
 * @param {string | undefined} out
 */
function train(cases, out) {
  if (!out) refuse("train writes the router's JSON: give --out router.json.");
  const examples = routerExamplesOf(cases);
  if (examples.length === 0) refuse("no case has an expected holder on its first turn: nothing to train on.");
  const started = performance.now();
  const model = trainLexicalRouter(examples);
  const json = JSON.stringify(model);
  writeFileSync(/** @type {string} */ (out), `${json}\n`);
  const took = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`trained on ${examples.length} first messages for ${model.labels.join(", ")} in ${took} s: ${model.terms.length} terms, ${(json.length / 1024).toFixed(0)} KiB → ${out}`);
  process.exit(0);
}

/**
 * The router of `--router`: measured alone on the cases first, then put on the entry agent.
 * @param {string} path
 * @param {number} threshold
 * @param {any[]} cases
 */
async function routerOption(path, threshold, cases) {
  if (!(threshold >= 0 && threshold <= 1)) refuse("--threshold is a confidence from 0 to 1.");
  let router;
  try {
    router = new LexicalRouter(JSON.parse(readFileSync(path, "utf8")));
  } catch (error) {
    refuse(`${path} is not a trained router (handoff-eval train writes one): ${error instanceof Error ? error.message : String(error)}`);
  }
  console.log(`${routerTable(/** @type {any} */ (router), cases)}\n`);
  return lexicalRouter(/** @type {any} */ (router), { threshold });
}

/**
 * Model-only beside router-then-model: the same cases run with no router, and what the router saved.
 * @param {any[]} withRouter
 * @param {() => Promise<any[]>} runWithout
 */
async function modelOnly(withRouter, runWithout) {
  const without = await runWithout();
  const [a, b] = [score(withRouter), score(without)];
  const { routed, of } = routedFirstTurns(withRouter);
  const saved = { input: b.tokens.input - a.tokens.input, output: b.tokens.output - a.tokens.output };
  console.log(
    `router then model: ${(a.routing.accuracy * 100).toFixed(1)} % · model only: ${(b.routing.accuracy * 100).toFixed(1)} % · first messages routed with no model call: ${routed} of ${of} (${routed} model calls saved) · tokens saved: ${saved.input} in, ${saved.output} out\n`,
  );
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      network: { type: "string" },
      compare: { type: "string" },
      k: { type: "string", default: "1" },
      concurrency: { type: "string", default: "4" },
      retries: { type: "string", default: "2" },
      model: { type: "string" },
      prices: { type: "string" },
      out: { type: "string" },
      title: { type: "string" },
      "min-accuracy": { type: "string" },
      "min-pass": { type: "string" },
      router: { type: "string" },
      threshold: { type: "string", default: "0.9" },
    },
  });
  const [command, casesPath] = positionals;
  if ((command !== "run" && command !== "train") || !casesPath) refuse(USAGE);
  const parsed = parseCases(readFileSync(/** @type {string} */ (casesPath), "utf8"));
  if (!parsed.ok) refuse(`${casesPath}:${parsed.line}: ${parsed.message}`);
  const cases = /** @type {{ ok: true, cases: any[] }} */ (parsed).cases;
  if (command === "train") return train(cases, values.out);
  if (!values.network) refuse(USAGE);
  const numbers = { k: Number(values.k), concurrency: Number(values.concurrency), retries: Number(values.retries) };
  for (const [name, n] of Object.entries(numbers)) if (!Number.isInteger(n) || n < (name === "retries" ? 0 : 1)) refuse(`--${name} must be a whole number${name === "retries" ? "" : " of 1 or more"}.`);
  const prices = values.prices ? JSON.parse(readFileSync(values.prices, "utf8")) : undefined;
  const { model, label } = await loadModel(values.model);
  // Agents' MCP servers are reached through the package's client; their headers read this process's environment.
  const mcp = new McpConnections({ env: process.env, log: (message) => console.error(`mcp: ${message}`) });
  const chosen = values.model === "demo" ? undefined : (values.model ?? process.env.OPENAI_MODEL);
  const run = async (/** @type {string} */ path, /** @type {any} */ router = undefined) => {
    const loaded = await loadNetwork(path);
    const network = router ? withRouter(loaded, router) : loaded;
    return runEval({ network, model: choosing(model, network, chosen), cases, mcp, ...numbers, onProgress: progress() });
  };
  console.error(`${cases.length} cases × ${numbers.k} against ${label}`);
  const routed = values.router ? await routerOption(values.router, Number(values.threshold), cases) : undefined;
  const samples = await run(/** @type {string} */ (values.network), routed);
  if (routed) await modelOnly(samples, () => run(/** @type {string} */ (values.network)));
  const scores = score(samples, { prices, model: values.model ?? process.env.OPENAI_MODEL });
  const other = values.compare ? await run(values.compare) : undefined;
  const comparison = other ? compare(samples, other) : undefined;
  console.log(scoreTable(scores, comparison));
  if (values.out) {
    mkdirSync(values.out, { recursive: true });
    writeFileSync(join(values.out, "results.json"), `${JSON.stringify({ model: label, scores, comparison, samples: samples.map(({ turns, ...s }) => ({ ...s, turns: turns.map(({ events, ...t }) => t) })) }, null, 2)}\n`);
    writeFileSync(join(values.out, "report.html"), htmlReport(samples, scores, values.title ?? `Handoff eval: ${casesPath}`, comparison));
    console.error(`wrote ${join(values.out, "results.json")} and ${join(values.out, "report.html")}`);
  }
  const below = [];
  if (values["min-accuracy"] !== undefined && scores.routing.accuracy < Number(values["min-accuracy"])) below.push(`routing accuracy ${scores.routing.accuracy.toFixed(3)} < ${values["min-accuracy"]}`);
  if (values["min-pass"] !== undefined && scores.passAtK.rate < Number(values["min-pass"])) below.push(`pass^k ${scores.passAtK.rate.toFixed(3)} < ${values["min-pass"]}`);
  if (below.length) {
    console.error(`handoff-eval: below the thresholds: ${below.join("; ")}`);
    process.exit(1);
  }
  // The provider's client keeps its connections open: the run is over, so is the process.
  process.exit(0);
}

await main();
