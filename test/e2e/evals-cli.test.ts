/**
 * The `handoff-eval` command as a user runs it (after `npm run build`, as `npm test` does): a
 * malformed case line is refused with its line number and exit code 2 before anything runs; a run
 * with the offline demo model writes the JSON and the HTML report, and exits 1 below a threshold.
 * The report is opened in Debian's Chromium: failed cases first, the confusion matrix as a heat map.
 * Against a fake OpenAI-compatible server (the real streaming wire format), the scores of three
 * scripted routings are the ones worked out by hand.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { chromium } from "playwright-core";
import { startFakeOpenAI } from "../node/fake-openai-server.ts";

const dir = mkdtempSync(join(tmpdir(), "handoff-evals-"));
const fake = await startFakeOpenAI();
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await fake.close();
});

const run = (...args: string[]) =>
  spawnSync(process.execPath, ["bin/handoff-eval.js", ...args], {
    encoding: "utf8",
    env: { ...process.env, OPENAI_API_KEY: "", OPENAI_BASE_URL: "" },
  });

// Twelve real queries of the sample: a few intents the demo model routes, and some it cannot.
const sample = readFileSync("examples/bank/banking77-sample.jsonl", "utf8").trim().split("\n");
const cases = join(dir, "cases.jsonl");
writeFileSync(
  cases,
  `${[...sample.filter((l) => l.includes('"billing"')).slice(0, 6), ...sample.filter((l) => l.includes('"cards"')).slice(0, 6)].join("\n")}\n`,
);

/** The command as a child that does not block this process, which hosts the fake provider. */
function runAsync(env: Record<string, string>, ...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["bin/handoff-eval.js", ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

const script = (id: string, answers: unknown[]) =>
  fetch(`${fake.url}/__scenarios`, { method: "POST", body: JSON.stringify({ id, answers }) });

describe("handoff-eval", () => {
  it("refuses a malformed case line with its number, exit code 2, and runs nothing", () => {
    const bad = join(dir, "bad.jsonl");
    writeFileSync(bad, `${sample[0]}\n{"id": "x", "turns": [{"user": "hi", "expect": {"holdr": "cards"}}]}\n`);
    const result = run("run", bad, "--network", "examples/bank/network.ts");
    assert.equal(result.status, 2);
    assert.match(result.stderr, new RegExp(`${bad.replaceAll("/", "\\/")}:2: .*holdr`));
    assert.doesNotMatch(result.stderr, /cases ×/);
    assert.equal(run("run", cases).status, 2, "no --network");
    assert.match(run("run", cases, "--network", "examples/bank/network.ts", "--k", "0").stderr, /--k must be a whole number/);
  });

  it("writes the scores as a table, JSON and HTML, and exits 1 below a threshold", async () => {
    const out = join(dir, "out");
    const ok = run("run", cases, "--network", "examples/bank/network.ts", "--k", "2", "--out", out, "--min-accuracy", "0.1");
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /routing accuracy \(turns\)\s+\d+\.\d%/);
    assert.match(ok.stdout, /pass\^2/);
    const json = JSON.parse(readFileSync(join(out, "results.json"), "utf8"));
    assert.equal(json.scores.cases, 12);
    assert.equal(json.scores.k, 2);
    assert.equal(json.samples.length, 24);
    const below = run("run", cases, "--network", "examples/bank/network.ts", "--min-accuracy", "0.99");
    assert.equal(below.status, 1);
    assert.match(below.stderr, /below the thresholds: routing accuracy/);

    const CHROMIUM = "/usr/bin/chromium";
    assert.ok(existsSync(CHROMIUM), "Debian's chromium is needed (.ci/run installs it)");
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      const elsewhere: string[] = [];
      page.on("request", (request) => {
        if (!request.url().startsWith("file://")) elsewhere.push(request.url());
      });
      await page.goto(`file://${join(out, "report.html")}`);
      const cells = await page.getByTestId("confusion").locator("td").count();
      assert.ok(cells >= 4, "a heat map of the confusion matrix");
      const failedFirst = await page.locator("details.case").first().getAttribute("data-testid");
      assert.equal(failedFirst, json.samples.some((s: { pass: boolean }) => !s.pass) ? "failed-case" : "passed-case");
      assert.match((await page.getByTestId("summary").textContent()) ?? "", /routing accuracy/);
      // Each case's trace is the trace builder's spans: the turn, the agents' tenures, the model calls, the handoffs.
      const trace = page.getByTestId("trace").first();
      assert.match((await trace.textContent()) ?? "", /turn 1 trace/);
      const kinds = await trace.locator("tr td:nth-child(2)").allTextContents();
      assert.ok(
        ["turn", "agent", "model"].every((kind) => kinds.includes(kind)),
        kinds.join(","),
      );
      assert.deepEqual(elsewhere, [], "the report asks nothing of any other origin");
      mkdirSync("test-artifacts", { recursive: true });
      await page.screenshot({ path: "test-artifacts/eval-report.png", fullPage: false });
      await page.locator("details.case").first().scrollIntoViewIfNeeded();
      await page.locator("details.case").first().screenshot({ path: "test-artifacts/eval-report-case.png" });
    } finally {
      await browser.close();
    }
  });

  it("scores a provider's routings as worked out by hand", async () => {
    await script("ev-cards", [{ toolCalls: [{ name: "transfer_to_cards", arguments: "{}" }] }, { text: "Cards here: it is on its way." }]);
    await script("ev-misroute", [{ toolCalls: [{ name: "transfer_to_cards", arguments: "{}" }] }, { text: "Cards here." }]);
    await script("ev-announced", [{ text: "Let me transfer you to the transfers team." }]);
    const file = join(dir, "provider.jsonl");
    const line = (id: string, user: string, holder: string) =>
      JSON.stringify({ id, turns: [{ user: `[${id}] ${user}`, expect: { holder } }] });
    writeFileSync(
      file,
      `${[line("ev-cards", "My card never arrived.", "cards"), line("ev-misroute", "I was charged twice.", "billing"), line("ev-announced", "My transfer failed.", "transfers")].join("\n")}\n`,
    );
    const out = join(dir, "provider");
    const env = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-eval", OPENAI_MODEL: "fake-model" };
    const result = await runAsync(env, "run", file, "--network", "examples/bank/network.ts", "--out", out, "--min-accuracy", "0.5");
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /3 cases × 1 against fake-model at http:\/\/127\.0\.0\.1/);
    const { scores } = JSON.parse(readFileSync(join(out, "results.json"), "utf8"));
    assert.deepEqual(scores.routing, { turns: 3, correct: 1, accuracy: 1 / 3 });
    assert.deepEqual(scores.passAtK, { passed: 1, cases: 3, rate: 1 / 3 });
    assert.equal(scores.announcedHandoffs, 1);
    assert.equal(scores.handoffsPerCase, 2 / 3);
    assert.equal(scores.providerErrors, 0);
    const cards = scores.perAgent.find((a: { agent: string }) => a.agent === "cards");
    assert.deepEqual({ precision: cards.precision, recall: cards.recall }, { precision: 0.5, recall: 1 });
    const { labels, counts } = scores.confusion as { labels: string[]; counts: number[][] };
    assert.equal(counts[labels.indexOf("billing")]?.[labels.indexOf("cards")], 1, "billing expected, cards reached");
    assert.equal(counts[labels.indexOf("transfers")]?.[labels.indexOf("triage")], 1, "transfers expected, triage kept it");
    // What the provider was sent: the configured model and key, the entry's transfer tools, then the specialist's prompt.
    const { requests } = (await (await fetch(`${fake.url}/__scenarios/ev-cards`)).json()) as {
      requests: Array<{
        model: string;
        authorization: string;
        tools: Array<{ function: { name: string } }>;
        messages: Array<{ role: string; content: string }>;
      }>;
    };
    assert.equal(requests.length, 2);
    assert.deepEqual([requests[0]?.model, requests[0]?.authorization], ["fake-model", "Bearer sk-eval"]);
    assert.ok(requests[0]?.tools.some((t) => t.function.name === "transfer_to_billing"));
    assert.match(requests[1]?.messages[0]?.content ?? "", /cards specialist/);
  });

  it("calls the model --model names (else OPENAI_MODEL) over the network's default, honours OPENAI_MAX_RETRIES, and takes a named createNetwork", async () => {
    await script("ev-model", [{ toolCalls: [{ name: "transfer_to_cards", arguments: "{}" }] }, { text: "Cards here." }]);
    await script("ev-retries", [{ status: 500, error: { message: "the provider is down" } }, { text: "Never reached." }]);
    const file = join(dir, "models.jsonl");
    writeFileSync(
      file,
      `${JSON.stringify({ id: "ev-model", turns: [{ user: "[ev-model] My card never arrived.", expect: { holder: "cards" } }] })}\n`,
    );
    const base = { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-eval", OPENAI_MODEL: "env-model" };
    const sent = async (id: string) =>
      ((await (await fetch(`${fake.url}/__scenarios/${id}`)).json()) as { requests: Array<{ model: string }> }).requests.map(
        (r) => r.model,
      );
    const network = "test/e2e/fixtures/eval-network.ts";
    const chosen = await runAsync(base, "run", file, "--network", network, "--model", "chosen-model");
    assert.equal(chosen.status, 0, chosen.stderr);
    // The entry has no model of its own: it gets the one chosen; the specialist keeps its own.
    assert.deepEqual(await sent("ev-model"), ["chosen-model", "cards-own-model"]);
    await script("ev-model", [{ toolCalls: [{ name: "transfer_to_cards", arguments: "{}" }] }, { text: "Cards here." }]);
    assert.equal((await runAsync(base, "run", file, "--network", network)).status, 0);
    assert.deepEqual(await sent("ev-model"), ["env-model", "cards-own-model"]);
    // With OPENAI_MAX_RETRIES=0 a failing provider is asked once per try of the case (and --retries 0: once).
    const failing = join(dir, "retries.jsonl");
    writeFileSync(
      failing,
      `${JSON.stringify({ id: "ev-retries", turns: [{ user: "[ev-retries] hello", expect: { holder: "triage" } }] })}\n`,
    );
    await runAsync({ ...base, OPENAI_MAX_RETRIES: "0" }, "run", failing, "--network", network, "--retries", "0");
    assert.equal((await sent("ev-retries")).length, 1);
    const refused = await runAsync({ ...base, OPENAI_MAX_RETRIES: "many" }, "run", failing, "--network", network);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /OPENAI_MAX_RETRIES must be a whole number from 0 to 10/);
  });
});

describe("handoff-eval with a router", () => {
  it("trains a router on cases, measures it alone, and runs the network with and without it on the entry agent", () => {
    const router = join(dir, "router.json");
    const trained = run("train", "examples/bank/banking77-sample.jsonl", "--out", router);
    assert.equal(trained.status, 0, trained.stderr);
    assert.match(trained.stdout, /trained on 308 first messages for account, billing, cards, top_ups, transfers/);
    assert.equal(JSON.parse(readFileSync(router, "utf8")).kind, "lexical-router");
    const out = join(dir, "with-router");
    const evaluated = run(
      "run",
      cases,
      "--network",
      "examples/bank/network.ts",
      "--router",
      router,
      "--threshold",
      "0.3",
      "--model",
      "demo",
      "--out",
      out,
    );
    assert.equal(evaluated.status, 0, evaluated.stderr);
    assert.match(evaluated.stdout, /router alone: 100\.0 % of 12 first messages/);
    assert.match(evaluated.stdout, /\| 0\.9 \| [\d.]+ % \| [\d.]+ % \|/);
    // The router routed what the demo model alone could not (cards), with no model call for those.
    const line = evaluated.stdout.split("\n").find((l) => l.startsWith("router then model"))!;
    const [, withRouter, modelOnly, routed] =
      /router then model: ([\d.]+) % · model only: ([\d.]+) % · first messages routed with no model call: (\d+) of 12/.exec(line) ?? [];
    assert.ok(Number(withRouter) > Number(modelOnly), line);
    assert.ok(Number(routed) >= 6, line);
    // The report says which turns the router handed on, and how sure it was.
    assert.match(
      readFileSync(join(out, "report.html"), "utf8"),
      /data-testid="routed">· routed with no model call: turn 1 by the lexical router \(\d\.\d\d\)/,
    );
  });

  it("refuses a router file that is not one, and train without --out", () => {
    const bad = join(dir, "not-a-router.json");
    writeFileSync(bad, JSON.stringify({ kind: "something else" }));
    const refused = run("run", cases, "--network", "examples/bank/network.ts", "--router", bad);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /is not a trained router/);
    const noOut = run("train", cases);
    assert.equal(noOut.status, 2);
    assert.match(noOut.stderr, /--out router\.json/);
  });
});
