/**
 * The pages a team would ship (issue 76), in Debian's Chromium against the real `wrangler dev` on the offline demo model,
 * at 1280 and 390 px, light and dark: axe-core finds no serious or critical violation on the chat page (empty, asking
 * for an approval, held by a person) nor on the desk; the phone's header keeps who answers in view and the rest in a
 * menu a keyboard opens and closes; a request card's answer is its primary action; the desk shows the queue, the
 * conversation and the answer box together. Screenshots in test-artifacts/finished-*.png.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { operatorToken, turn, axeFindings } from "./chat-page-driver.ts";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const CHROMIUM = "/usr/bin/chromium";
const persistTo = mkdtempSync(join(tmpdir(), "handoff-pages-finished-"));
const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 800 } } as const;
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

/** A window of `size` and `colorScheme` on `path`; axe-core may be added to it (the page's CSP would refuse it). */
async function open(size: keyof typeof SIZES, colorScheme: "light" | "dark", path = "/", account?: string): Promise<Page> {
  const context = await browser.newContext({ viewport: SIZES[size], colorScheme, bypassCSP: true });
  if (account) await context.addInitScript((saved) => localStorage.setItem("handoff-account", saved), account);
  const page = await context.newPage();
  await page.goto(`${dev.url}${path}`);
  return page;
}

for (const colorScheme of ["light", "dark"] as const) {
  for (const size of ["desktop", "phone"] as const) {
    describe(`the pages at ${SIZES[size].width} px, ${colorScheme}`, () => {
      it("the chat page: empty, asking for an approval, held by a person; axe-core finds nothing serious", async () => {
        const page = await open(size, colorScheme);
        await page.locator("#welcome button").first().waitFor();
        assert.match((await page.locator("#welcome h2").textContent()) ?? "", /How can we help/);
        assert.deepEqual(await axeFindings(page), [], "the empty chat");
        await page.screenshot({ path: `test-artifacts/finished-empty-${colorScheme}-${size}.png` });

        await turn(page, "I was charged twice for order A1001, please refund it.");
        const card = page.getByTestId("approval");
        await card.waitFor();
        // The answer a card asks for is its primary action: Approve stands out from Deny.
        const [approve, deny] = await Promise.all(
          ["Approve", "Deny"].map((name) => card.getByRole("button", { name }).evaluate((b) => getComputedStyle(b).backgroundColor)),
        );
        assert.notEqual(approve, deny, "Approve is drawn as the primary action");
        assert.deepEqual(await axeFindings(page), [], "the approval card");
        await page.screenshot({ path: `test-artifacts/finished-approval-${colorScheme}-${size}.png` });
        await card.getByRole("button", { name: "Deny" }).click();
        await page.getByRole("button", { name: "Stop" }).waitFor({ state: "hidden" });
        // Answered, the card says what was decided and asks no more.
        assert.match((await card.locator("p").first().textContent()) ?? "", /Denied\.$/);
        assert.equal(await card.evaluate((c) => c.classList.contains("decided")), true, "no longer says it needs an answer");

        await turn(page, "I want to talk to a person");
        await page
          .getByTestId("active-agent")
          .filter({ hasText: /support/i })
          .waitFor();
        assert.deepEqual(await axeFindings(page), [], "held by a person");
        await page.screenshot({ path: `test-artifacts/finished-person-${colorScheme}-${size}.png` });
        await page.context().close();
      });

      it("the desk: the queue, the conversation and the answer box together; axe-core finds nothing serious", async () => {
        const chat = await open(size, colorScheme);
        await turn(chat, "I want to talk to a person");
        const token = await operatorToken(dev.url);
        const desk = await open(size, colorScheme, "/operator.html", JSON.stringify({ token, name: "Sam", operator: true }));
        await desk.getByTestId("waiting").locator("button").first().click();
        await desk.getByTestId("desk-log").locator(".bubble").first().waitFor();
        for (const part of [...(size === "desktop" ? ["#waiting"] : []), "#desk-log", "#answer-text", "#hand-back"])
          assert.ok(await desk.locator(part).isVisible(), `${part} is on the screen`);
        if (size === "phone") {
          // A phone shows the conversation in the queue's place; the queue is a button away.
          assert.equal(await desk.locator("#waiting").isVisible(), false);
          await desk.screenshot({ path: `test-artifacts/finished-desk-conversation-${colorScheme}-phone.png` });
          await desk.getByRole("button", { name: "← Queue" }).click();
          assert.ok(await desk.locator("#waiting").isVisible(), "back to the queue");
        }
        if (size === "desktop") {
          const [queue, answer] = await Promise.all([desk.locator("nav").boundingBox(), desk.locator("#answer-text").boundingBox()]);
          assert.ok(queue && answer && queue.x + queue.width <= answer.x, "the queue beside the conversation");
          assert.ok(answer.y + answer.height <= SIZES.desktop.height, "the answer box in the window");
        }
        assert.deepEqual(await axeFindings(desk), [], "the desk");
        await desk.screenshot({ path: `test-artifacts/finished-desk-${colorScheme}-${size}.png` });
        await desk.context().close();
        await chat.context().close();
      });
    });
  }
}

describe("the keyboard", () => {
  for (const path of ["/", "/operator.html"]) {
    it(`reaches every control of ${path} with Tab, each with a visible focus ring`, async () => {
      const token = await operatorToken(dev.url);
      const page = await open("desktop", "light", path, JSON.stringify({ token, name: "Sam", operator: true }));
      await page
        .locator(path === "/" ? "#welcome button" : "#waiting")
        .first()
        .waitFor();
      const controls = await page.evaluate(() =>
        Array.from(document.querySelectorAll<HTMLElement>("button, a[href], input, select, textarea, summary"))
          .filter((el) => el.offsetParent !== null && !(el as HTMLButtonElement).disabled)
          .map((el) => el.id || el.textContent?.trim() || el.getAttribute("aria-label") || el.tagName),
      );
      const reached = new Map<string, boolean>();
      for (let i = 0; i < controls.length + 5; i++) {
        await page.keyboard.press("Tab");
        const focused = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement | null;
          if (!el || el === document.body) return null;
          const style = getComputedStyle(el);
          return {
            name: el.id || el.textContent?.trim() || el.getAttribute("aria-label") || el.tagName,
            ring: style.outlineStyle !== "none" && style.outlineWidth !== "0px",
          };
        });
        if (focused) reached.set(focused.name, focused.ring);
      }
      for (const control of controls) {
        assert.ok(reached.has(control), `Tab reaches ${control}`);
        assert.ok(reached.get(control), `${control} shows a focus ring`);
      }
      await page.context().close();
    });
  }
});

describe("the phone's header", () => {
  it("keeps who answers in view, the rest in a menu a keyboard opens, moves into and closes with Escape", async () => {
    const page = await open("phone", "light");
    await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    const who = await page.locator("header p").evaluate((p) => ({ shown: p.clientWidth, needed: p.scrollWidth }));
    assert.ok(who.needed <= who.shown, `"Talking to …" fits: ${who.needed} px in ${who.shown}`);
    const header = await page.locator("header").boundingBox();
    assert.ok(header && header.height < 110, `the header takes ${header?.height} px, not a screenful`);
    assert.equal(await page.locator("#actions").getByRole("button", { name: "Trace" }).isVisible(), false, "Trace is in the menu");
    const menu = page.getByRole("button", { name: "Menu" });
    await menu.focus();
    await page.keyboard.press("Enter");
    assert.equal(await menu.getAttribute("aria-expanded"), "true");
    assert.ok(await page.locator("#actions").getByRole("button", { name: "Trace" }).isVisible(), "the menu shows Trace");
    const focused = await page.evaluate(() => document.activeElement?.closest("#actions") !== null);
    assert.ok(focused, "the focus moves into the menu");
    // The focused control shows it.
    const ring = await page.evaluate(() => {
      const style = getComputedStyle(document.activeElement!);
      return style.outlineStyle !== "none" && style.outlineWidth !== "0px";
    });
    assert.ok(ring, "a visible focus ring");
    await page.screenshot({ path: "test-artifacts/finished-phone-menu.png" });
    await page.keyboard.press("Escape");
    assert.equal(await menu.getAttribute("aria-expanded"), "false");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "show-actions", "the focus goes back to Menu");
    await page.context().close();
  });
});
