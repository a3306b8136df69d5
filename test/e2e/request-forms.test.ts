/**
 * What a turn asks the user, on the chat page in Debian's Chromium against wrangler dev (Node
 * compatibility off) and the offline demo model: a question drawn as a form from its schema (the
 * place as buttons, the day as a date field) with a wrong answer refused and the card asking again;
 * the demo's client tool (delivery slots) answered by the page's own card; the tracking MCP
 * server's elicitation as a form; a choice as a button per option (and a field for the user's own words) at 1280 and
 * 390 px; and a reload that draws a waiting request again. Screenshots
 * (desktop and phone) are kept in test-artifacts/.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const CHROMIUM = "/usr/bin/chromium";
const persistTo = mkdtempSync(join(tmpdir(), "handoff-requests-"));
let dev: WranglerDev;
let browser: Browser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Debian's chromium is needed at ${CHROMIUM}`);
  dev = await startWranglerDev({ persistTo, vars: { DEMO_DELAY_MS: "5" } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
  mkdirSync("test-artifacts", { recursive: true });
});

after(async () => {
  await browser?.close();
  await dev?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

async function ask(text: string, width = 900): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  await page.goto(dev.url);
  await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
  await page.getByLabel("Message").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
  return page;
}

describe("what a turn asks, on the chat page", () => {
  it("draws a question's form from its schema, refuses an answer that does not fit, and books the one that does", async () => {
    const page = await ask("Please redeliver order A1001");
    const card = page.getByTestId("request-question");
    await card.filter({ hasText: "When should order A1001 come again" }).waitFor();
    // The card comes with the request; the status line with the turn's end, a moment later.
    await page
      .locator("#status")
      .filter({ hasText: /^Waiting for your answer\.$/ })
      .waitFor();
    // The place is a choice: one button each; the day is a date field.
    assert.deepEqual(await card.locator(".choices button").allTextContents(), ["front door", "neighbour", "parcel locker"]);
    assert.equal(await card.locator('input[name="day"]').getAttribute("type"), "date");
    await page.screenshot({ path: "test-artifacts/request-question-desktop.png", fullPage: true });

    // No place picked: the Worker refuses it (the schema needs one), and the card asks again.
    await card.locator('input[name="day"]').fill("2026-12-08");
    await card.getByRole("button", { name: "Send" }).click();
    await page
      .locator(".error-line")
      .filter({ hasText: /where|fit/ })
      .waitFor();
    await card.getByRole("button", { name: "parcel locker" }).click();
    await card.getByRole("button", { name: "Send" }).click();
    await page.locator(".assistant").filter({ hasText: "comes again on 2026-12-08; it will be left at the parcel locker" }).waitFor();
    assert.match((await page.locator("details.tool summary").allTextContents()).join(" "), /Booked a redelivery of order A\d+/);
    await page.screenshot({ path: "test-artifacts/request-question-answered-desktop.png", fullPage: true });
    await page.close();
  });

  it("answers the demo's client tool with the page's own card: the slot clicked is the tool's output", async () => {
    const page = await ask("I need a delivery slot for order A1002");
    const card = page.getByTestId("request-client-tool");
    await card.filter({ hasText: "Pick a delivery slot for order A1002" }).waitFor();
    await page.screenshot({ path: "test-artifacts/request-client-tool-desktop.png", fullPage: true });
    await card.getByRole("button", { name: "Mon 14:00-17:00" }).click();
    await page.locator(".assistant").filter({ hasText: "booked for Mon 14:00-17:00" }).waitFor();
    await page.close();
  });

  it("shows the tracking server's elicitation as a form, and its answer goes back to the server", async () => {
    const page = await ask("Please hold the parcel of order A1002 at a depot");
    const card = page.getByTestId("request-elicitation");
    await card.filter({ hasText: "Tracking asks: Hold the parcel of order A1002" }).waitFor();
    await page.screenshot({ path: "test-artifacts/request-elicitation-desktop.png", fullPage: true });
    await card.locator('input[name="confirm"]').check();
    await card.getByRole("button", { name: "Leeds" }).click();
    await card.getByRole("button", { name: "Send" }).click();
    await page.locator(".assistant").filter({ hasText: "held at the Leeds depot" }).waitFor();
    await page.close();
  });

  it("draws a waiting question again after a reload, and fits a phone's width", async () => {
    const page = await ask("Please redeliver order A1003", 390);
    await page.getByTestId("request-question").waitFor();
    await page.reload();
    const card = page.getByTestId("request-question");
    await card.filter({ hasText: "When should order A1003 come again" }).waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `the page is ${width} px wide on a 390 px phone`);
    await page.screenshot({ path: "test-artifacts/request-question-phone.png", fullPage: true });
    await card.getByRole("button", { name: "Decline" }).click();
    await page.locator(".assistant").filter({ hasText: "No redelivery was booked" }).waitFor();
    await page.close();
  });
  for (const width of [1280, 390])
    it(`draws a choice as a button per option and a field for the user's own words, at ${width} px; a reload draws it again`, async () => {
      const page = await ask("Where should the courier leave my parcel A1002 when no one is home?", width);
      const card = page.getByTestId("request-choice");
      await card.filter({ hasText: "Where should the courier leave order A1002 when no one is home?" }).waitFor();
      assert.deepEqual(await card.locator(".choices button").allTextContents(), ["Front door", "With a neighbour", "Parcel locker"]);
      await card.getByLabel("Somewhere else").waitFor();
      const fits = await page.evaluate(() => document.documentElement.scrollWidth <= innerWidth);
      assert.ok(fits, "the card fits the window");
      await page.screenshot({ path: `test-artifacts/request-choice-${width}.png`, fullPage: true });
      // A reload while it waits: the card again, with its options.
      await page.reload();
      await card.filter({ hasText: "when no one is home" }).waitFor();
      if (width === 390) {
        // In the user's own words, from the phone.
        await card.getByLabel("Somewhere else").fill("behind the blue gate");
        await card.getByRole("button", { name: "Send" }).click();
        await page.locator(".assistant").filter({ hasText: "will be left: behind the blue gate" }).waitFor();
      } else {
        await card.getByRole("button", { name: "Parcel locker" }).click();
        await page.locator(".assistant").filter({ hasText: "will be left: Parcel locker" }).waitFor();
      }
      await page.close();
    });
});
