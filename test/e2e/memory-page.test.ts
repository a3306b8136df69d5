/**
 * Memory on the chat page, in Debian's Chromium against the real `wrangler dev` on the offline demo model, as a signed-in
 * customer meets it: they ask to be remembered, see it under "What I remember", and in a new conversation the agent
 * answers about the order they named before, in the language they asked for, saying what it remembered; they correct a
 * memory, forget one and forget all. axe-core finds nothing serious on the page with the panel open, light and dark, at
 * 1280 and at 390 px.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { headerAction, openDesk, turn, axeFindings } from "./chat-page-driver.ts";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const CHROMIUM = "/usr/bin/chromium";
const persistTo = mkdtempSync(join(tmpdir(), "handoff-memory-page-"));
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

/** A window signed in as `name` with the development sign-in (the sidebar's form, as a user does it). */
async function signedIn(name: string, options: { width: number; height: number; colorScheme: "light" | "dark" }): Promise<Page> {
  // axe-core is added to the page as a script: the page's Content-Security-Policy would refuse it.
  const context = await browser.newContext({
    viewport: { width: options.width, height: options.height },
    colorScheme: options.colorScheme,
    bypassCSP: true,
  });
  const page = await context.newPage();
  await page.goto(dev.url);
  if (options.width < 600) await page.getByRole("button", { name: /conversations/i }).click();
  await page.getByLabel("Sign-in name").fill(name);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("signed-in").waitFor({ state: "attached" });
  if (options.width < 600 && (await page.locator("body.drawer-open").count())) await page.locator("#chat-column").click();
  return page;
}

async function openMemory(page: Page): Promise<void> {
  const panel = page.getByTestId("memory-panel");
  if (await panel.isHidden()) await headerAction(page, "What I remember");
  await panel.locator("[data-memory-status]").filter({ hasNotText: "Loading" }).waitFor();
}

/** The panel's row whose words are `text`. */
async function rowOf(page: Page, text: string) {
  const rows = page.getByTestId("memory-panel").locator("li");
  const words = await rows.locator("input").evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).value));
  assert.ok(words.includes(text), `"${text}" is listed: ${words.join(" | ")}`);
  return rows.nth(words.indexOf(text));
}

describe("what the agents remember, on the chat page", () => {
  it("keeps what the customer asks, shows it, and uses it in their next conversation; corrected, forgotten, forgotten all", async () => {
    const page = await signedIn("Mia", { width: 1280, height: 800, colorScheme: "light" });
    await turn(page, "Please remember my order is A1001 and write to me in French.");
    await page.getByTestId("log").getByText("I will remember that for next time").waitFor();
    await openMemory(page);
    const rows = page.getByTestId("memory-panel").locator("li");
    assert.deepEqual(await rows.locator("input").evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).value).sort()), [
      "Prefers to be written to in French",
      "Their order is A1001",
    ]);
    assert.deepEqual(await axeFindings(page), []);
    await page.screenshot({ path: "test-artifacts/memory-panel-light-desktop.png" });

    await headerAction(page, "New conversation");
    await turn(page, "My parcel never came.");
    await page.getByText(/^Remembered from before: /).waitFor();
    const answer = await page.locator(".assistant").last().textContent();
    assert.match(answer ?? "", /Bonjour ! You told me before that your order is A1001, so I looked at that one\. Order A1001 is /);
    // Who answers stays readable beside the header's buttons (they wrap first).
    const who = await page.locator("header p").evaluate((p) => ({ shown: p.clientWidth, needed: p.scrollWidth }));
    assert.ok(who.needed <= who.shown, `"Talking to …" fits: ${who.needed} px in ${who.shown}`);
    await page.screenshot({ path: "test-artifacts/memory-recalled-desktop.png" });

    // Corrected in place, then forgotten one by one, then all at once.
    await openMemory(page);
    const order = await rowOf(page, "Their order is A1001");
    await order.locator("input").fill("Their order is A1002");
    await order.getByRole("button", { name: "Save" }).click();
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll<HTMLInputElement>("#memory li input")).some((i) => i.value === "Their order is A1002"),
    );
    await (await rowOf(page, "Their order is A1002")).getByRole("button", { name: "Forget" }).click();
    await page.getByText("1 thing the agents remember of you").waitFor();
    page.once("dialog", (dialog) => dialog.accept());
    await page.getByRole("button", { name: "Forget everything" }).click();
    await page.getByText(/^Nothing yet\./).waitFor();
    await headerAction(page, "New conversation");
    await turn(page, "My parcel never came.");
    assert.equal(await page.getByText(/^Remembered from before: /).count(), 0, "nothing is recalled once all is forgotten");
    await page.context().close();
  });

  it("fits a phone in the dark: the panel opens from the header, and axe-core finds nothing serious", async () => {
    const page = await signedIn("Noa", { width: 390, height: 800, colorScheme: "dark" });
    await turn(page, "Please remember I moved to 5 Rue Mercière, Lyon.");
    await openMemory(page);
    const panel = page.getByTestId("memory-panel");
    const box = await panel.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the panel fits the phone's width: ${JSON.stringify(box)}`);
    assert.equal(await panel.locator("li input").inputValue(), "Lives at 5 Rue Mercière, Lyon");
    assert.deepEqual(await axeFindings(page), []);
    await page.screenshot({ path: "test-artifacts/memory-panel-dark-phone.png" });
    await page.context().close();
  });

  it("shows the operator desk the customer's memory, read-only, while a person holds their conversation", async () => {
    const page = await signedIn("Ola", { width: 1280, height: 800, colorScheme: "light" });
    await turn(page, "Please remember my order is A1003.");
    await turn(page, "I want to talk to a person");
    const desk = await openDesk(browser, dev.url, { width: 1280, height: 800 });
    await desk.getByTestId("waiting").locator("button").filter({ hasText: "talk to a person" }).first().click();
    const box = desk.getByTestId("customer-memory");
    await box.waitFor();
    await box.locator("summary").click();
    assert.deepEqual(await box.locator("li").allTextContents(), ["Their order is A1003 (fact)"]);
    assert.equal(await box.locator("input, button").count(), 0, "read-only");
    await desk.screenshot({ path: "test-artifacts/memory-desk.png" });
    await desk.context().close();
    await page.context().close();
  });

  it("is not offered to a guest, who has no memory beyond the conversation", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(dev.url);
    await turn(page, "Please remember my order is A1001.");
    await page
      .getByTestId("log")
      .getByText(/I could not remember that: .*no signed-in user/)
      .waitFor();
    assert.equal(await page.getByRole("button", { name: "What I remember" }).count(), 0);
    await context.close();
  });
});
