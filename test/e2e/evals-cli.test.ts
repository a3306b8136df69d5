/**
 * The `handoff-eval` command as a user runs it (after `npm run build`, as `npm test` does): a
 * malformed case line is refused with its line number and exit code 2 before anything runs; a run
 * with the offline demo model writes the JSON and the HTML report, and exits 1 below a threshold.
 * The report is opened in Debian's Chromium: failed cases first, the confusion matrix as a heat map.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { chromium } from "playwright-core";

const dir = mkdtempSync(join(tmpdir(), "handoff-evals-"));
after(() => rmSync(dir, { recursive: true, force: true }));

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
      assert.deepEqual(elsewhere, [], "the report asks nothing of any other origin");
      mkdirSync("test-artifacts", { recursive: true });
      await page.screenshot({ path: "test-artifacts/eval-report.png", fullPage: false });
    } finally {
      await browser.close();
    }
  });
});
