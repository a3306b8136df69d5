/**
 * What a first user met on the pages, round four (issue 76), in Debian's Chromium against the real `wrangler dev` on the
 * offline demo model: every example the empty chat offers is answered (the calculator's "what is 12 times 7" was not),
 * and a reload keeps what the conversation showed: a decided approval's card with its decision, and the model's badge.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium } from "playwright-core";
import { openPage, turn } from "./chat-page-driver.ts";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const CHROMIUM = "/usr/bin/chromium";
const persistTo = mkdtempSync(join(tmpdir(), "handoff-round-four-"));
const DESKTOP = { width: 1280, height: 800 };
let dev: WranglerDev;
let browser: Browser;

before(async () => {
  dev = await startWranglerDev({ persistTo });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
  mkdirSync("test-artifacts", { recursive: true });
});

after(async () => {
  await browser?.close();
  await dev?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

describe("the chat page, round four", () => {
  it("answers each example an empty chat offers, the calculator's in words among them", async () => {
    const page = await openPage(browser, dev.url, DESKTOP);
    await page.locator("#welcome button").first().waitFor();
    const offered = await page.locator("#welcome button").allTextContents();
    assert.ok(offered.includes("what is 12 times 7"), `the calculator's example is offered: ${offered.join(" | ")}`);
    await page.getByRole("button", { name: "what is 12 times 7" }).click();
    await page.getByText("The answer is 84.").waitFor();
    await page.context().close();
  });

  it("says, where a phone's user looks, what became of the guest's conversation when they sign in, and drops it at the next", async () => {
    const page = await openPage(browser, dev.url, { width: 390, height: 800 });
    await turn(page, "hello");
    await page.getByRole("button", { name: /conversations/i }).click();
    await page.getByLabel("Sign-in name").fill("Ada");
    await page.getByRole("button", { name: "Sign in" }).click();
    const kept = page.getByTestId("guest-kept");
    await kept.waitFor();
    assert.ok(await kept.isVisible(), "the note is in the chat, not in the closed drawer");
    assert.equal(await page.getByTestId("lost-link").count(), 0, "no word of a lost link");
    // Who answers is never cut for the header's buttons on a phone.
    const who = await page.locator("header p").evaluate((p) => ({ shown: p.clientWidth, needed: p.scrollWidth }));
    assert.ok(who.needed <= who.shown, `"Talking to …" fits: ${who.needed} px in ${who.shown}`);
    assert.equal(new URL(page.url()).search, "", "the address no longer names the guest's conversation");
    await page.screenshot({ path: "test-artifacts/round-four-guest-signs-in-phone.png" });
    await page.getByLabel("Message").fill("hello again");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".user").filter({ hasText: "hello again" }).waitFor();
    assert.equal(await page.getByTestId("guest-kept").count(), 0, "the note goes once the new conversation begins");
    await page.context().close();
  });

  for (const colorScheme of ["light", "dark"] as const) {
    it(`follows the system's ${colorScheme} theme, its words readable on their backgrounds (4.5:1 at least)`, async () => {
      const context = await browser.newContext({ viewport: DESKTOP, colorScheme });
      const page = await context.newPage();
      await page.goto(dev.url);
      await turn(page, "Where is order A1002?");
      // Each element's text colour and what it is read on (its own background, or the page's where it has none).
      const colours = await page.evaluate(() => {
        const page = getComputedStyle(document.documentElement).backgroundColor;
        const on = (selector: string, own: boolean) => {
          const style = getComputedStyle(document.querySelector(selector)!);
          return { text: style.color, background: own ? style.backgroundColor : page };
        };
        return {
          page,
          shown: {
            "the user's message": on(".user", true),
            "the agent's answer": on(".assistant", false),
            "a tool line": on("details.tool summary, details.tools > summary", false),
            "the Send button": on("#send", true),
          },
        };
      });
      assert.equal(luminance(colours.page) < 0.2, colorScheme === "dark", `the page's background is ${colours.page}`);
      // Who speaks has a mark of their own: each agent's bubble a colour from its name.
      const marks = await page
        .locator(".assistant")
        .evaluateAll((bubbles) => bubbles.map((b) => [(b as HTMLElement).dataset.agent, getComputedStyle(b).borderLeftWidth]));
      assert.ok(marks.length > 0 && marks.every(([, width]) => width !== "0px"), JSON.stringify(marks));
      for (const [what, { text, background }] of Object.entries(colours.shown)) {
        const [light, dark] = [luminance(text), luminance(background)].sort((a, b) => b - a);
        const ratio = (light! + 0.05) / (dark! + 0.05);
        assert.ok(ratio >= 4.5, `${what}: ${ratio.toFixed(1)}:1 (${text} on ${background})`);
      }
      await page.screenshot({ path: `test-artifacts/round-four-${colorScheme}-desktop.png` });
      await context.close();
    });
  }

  it("keeps a decided approval's card, with its decision, and the model's badge after a reload", async () => {
    const page = await openPage(browser, dev.url, DESKTOP);
    await turn(page, "I was charged twice for order A1001, please refund it.");
    const card = page.getByTestId("approval");
    await card.getByRole("button", { name: "Approve" }).click();
    await page.getByRole("button", { name: "Stop" }).waitFor({ state: "hidden" });
    await page.locator(".assistant").last().waitFor();
    await page.reload();
    const decided = page.getByTestId("approval");
    await decided.waitFor();
    assert.match((await decided.textContent()) ?? "", /Refund 129 USD for order A1001\? Approved\./);
    assert.equal(await decided.getByRole("button").count(), 0, "a decided card offers no buttons");
    assert.equal(await page.locator("#model").textContent(), "(offline demo model)");
    assert.ok(await page.locator("#model").isVisible(), "the model's badge shows after the reload");
    await page.screenshot({ path: "test-artifacts/round-four-reload-desktop.png", fullPage: true });
    await page.context().close();
  });
});

/** A CSS colour's relative luminance (WCAG 2). */
function luminance(color: string): number {
  const [r, g, b] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((c) => {
    const v = Number(c) / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}
