/**
 * A title that comes late: a real model's title call, made after the first turn ends, may take
 * seconds. In Debian's Chromium against wrangler dev and a fake OpenAI-compatible provider that
 * holds the title call's answer, the signed-in user's inbox shows the first message until the
 * title is made, then the title, with nothing more done on the page.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { type Browser, chromium } from "playwright-core";
import { startFakeOpenAI } from "../node/fake-openai-server.ts";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const CHROMIUM = "/usr/bin/chromium";
const persistTo = mkdtempSync(join(tmpdir(), "handoff-late-title-"));
const fake = await startFakeOpenAI();
let dev: WranglerDev;
let browser: Browser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Debian's chromium is needed at ${CHROMIUM}: apt-get install -y chromium (.ci/run does it)`);
  dev = await startWranglerDev({ persistTo, vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-e2e" } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
});

after(async () => {
  await browser?.close();
  await dev?.stop();
  await fake.close();
  rmSync(persistTo, { recursive: true, force: true });
});

it("shows the title a model made seconds after the first turn, without a reload", async () => {
  const id = "scnlatetitle";
  const message = `Hello, I have a question about my plan [${id}]`;
  await fetch(`${fake.url}/__scenarios`, {
    method: "POST",
    // The turn's answer, then the title call's, held until released.
    body: JSON.stringify({ id, answers: [{ text: "Hi! What would you like to know?" }, { text: "Question about a plan", holdAfter: 1 }] }),
  });
  const page = await (await browser.newContext({ viewport: { width: 1150, height: 800 } })).newPage();
  await page.goto(dev.url);
  await page.getByLabel("Sign-in name").fill("Lena");
  await page.getByRole("button", { name: "Sign in" }).click();
  // Signing in reloads the page: until then, Send is the anonymous page's, and a message sent
  // there is lost with the reload.
  await page.getByTestId("signed-in").filter({ hasText: "Signed in as Lena" }).waitFor();
  await page.getByRole("button", { name: "Send" }).and(page.locator(":enabled")).waitFor();
  await page.getByLabel("Message").fill(message);
  await page.getByRole("button", { name: "Send" }).click();
  await page.locator(".assistant").filter({ hasText: "What would you like to know?" }).waitFor();

  const row = page.getByTestId("inbox").locator(`[data-conversation] .title`);
  await row.filter({ hasText: "Hello, I have a question" }).waitFor();
  // Well past the turn: the title call is still held.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  assert.deepEqual(await row.allTextContents(), [message]);

  await fetch(`${fake.url}/__scenarios/${id}/release`, { method: "POST" });
  await row.filter({ hasText: "Question about a plan" }).waitFor({ timeout: 20_000 });
  const { requests } = (await (await fetch(`${fake.url}/__scenarios/${id}`)).json()) as { requests: unknown[] };
  assert.equal(requests.length, 2, "the turn's call and the title's");
  await page.context().close();
});
