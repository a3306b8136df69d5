/**
 * The pages as a first user meets them, at desktop and at phone width, in Debian's Chromium against
 * wrangler dev (the demo model and its router, as `npm start` runs them), and against two Workers
 * that refuse the page: one with no access configured, one with a key and no sign-in provider.
 * Each check is one a new user tripped on: a refusal shown as a TypeError, a composer that let them
 * send while an approval waited (and answered with API words), a stale status after a person handed
 * back, float noise and overlapping labels on the trace axis, a page wider than a phone, a desk
 * header with two name boxes, a truncated key box and no words when empty, router internals in a
 * divider, a model badge on two lines, an empty conversation made by opening the page, and no
 * favicon. Screenshots of each width are kept in test-artifacts/.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { operatorToken, headerAction } from "./chat-page-driver.ts";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const CHROMIUM = "/usr/bin/chromium";
const persistTo = mkdtempSync(join(tmpdir(), "handoff-first-user-"));
const WIDTHS = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 800 },
] as const;
let dev: WranglerDev;
let closed: WranglerDev;
let keyed: WranglerDev;
let browser: Browser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Debian's chromium is needed at ${CHROMIUM}: apt-get install -y chromium (.ci/run does it)`);
  [dev, closed, keyed] = await Promise.all([
    startWranglerDev({ persistTo: join(persistTo, "demo"), vars: { DEMO_ROUTER: "on", DEMO_DELAY_MS: "5" } }),
    // Nothing configured: the API fails closed (503 auth_not_configured).
    startWranglerDev({ persistTo: join(persistTo, "closed"), npmStartVars: false, ready: "/" }),
    // A key and no identity provider: the pages hold no credential (401).
    startWranglerDev({
      persistTo: join(persistTo, "keyed"),
      npmStartVars: false,
      vars: { API_KEY: "a-master-key-0123456789" },
      ready: "/",
    }),
  ]);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
  mkdirSync("test-artifacts", { recursive: true });
});

after(async () => {
  await browser?.close();
  await Promise.all([dev?.stop(), closed?.stop(), keyed?.stop()]);
  rmSync(persistTo, { recursive: true, force: true });
});

async function open(url: string, size: (typeof WIDTHS)[number], path = "/"): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: size.width, height: size.height } });
  const page = await context.newPage();
  await page.goto(`${url}${path}`);
  return page;
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByRole("button", { name: "Send" }).and(page.locator(":enabled")).waitFor();
  await page.getByLabel("Message").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

/** Nothing wider than the window: no sideways scrolling, nothing cut off. */
async function fitsWidth(page: Page, width: number): Promise<void> {
  assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= width, `the page is no wider than ${width} px`);
}

const storedId = (page: Page) =>
  page.evaluate(() => (JSON.parse(localStorage.getItem("handoff-chat") ?? "null") as { id: string } | null)?.id);

for (const size of WIDTHS) {
  describe(`the chat page at ${size.name} width (${size.width} px)`, () => {
    it("says why it cannot start, and what to configure, when the Worker refuses it", async () => {
      const unconfigured = await open(closed.url, size);
      const line = unconfigured.getByTestId("cannot-start");
      await line.waitFor();
      assert.match(
        (await line.textContent()) ?? "",
        /^This chat cannot start: .+ For a local run, put ALLOW_ANONYMOUS=true in \.dev\.vars/,
      );
      const locked = await open(keyed.url, size);
      await locked.getByTestId("cannot-start").waitFor();
      const said = (await locked.getByTestId("cannot-start").textContent()) ?? "";
      assert.match(said, /^This Worker needs a sign-in: .+ configures an identity provider \(AUTH_JWKS_URL or AUTH_JWT_SECRET\)/);
      for (const page of [unconfigured, locked]) {
        assert.doesNotMatch((await page.locator("#log").textContent()) ?? "", /Cannot read properties|TypeError|undefined/);
        assert.equal(await page.getByRole("button", { name: "Send" }).isDisabled(), true);
        await fitsWidth(page, size.width);
      }
      await locked.screenshot({ path: `test-artifacts/first-user-cannot-start-${size.name}.png`, fullPage: true });
      await unconfigured.context().close();
      await locked.context().close();
    });

    it("makes no conversation until the first message, shows who took over in words, and keeps the model badge on one line", async () => {
      const page = await open(dev.url, size);
      await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
      assert.equal(await storedId(page), undefined, "opening the page makes no conversation");
      const badge = await page.locator("#model").boundingBox();
      await send(page, "I was charged twice for order A1001");
      await page.getByTestId("approval").waitFor();
      // The router decided: the divider names who took over; why (the router's score) is the trace's, not the chat's.
      const divider = page.getByTestId("handoff");
      assert.equal(await divider.textContent(), "triage → billing");
      assert.equal(await divider.getAttribute("title"), null);
      const model = page.locator("#model");
      assert.equal(await model.textContent(), "(offline demo model)");
      const height = (await model.boundingBox())!.height;
      assert.ok(height < 1.6 * Number.parseFloat(await model.evaluate((n) => getComputedStyle(n).lineHeight)) || height < 22, "one line");
      assert.ok(badge === null || badge.height < 22);
      assert.ok(await storedId(page), "the first message made the conversation");
      await page.context().close();
    });

    it("holds the composer while an approval waits, says so in words for users, and lets go once it is decided", async () => {
      const page = await open(dev.url, size);
      await send(page, "I was charged twice for order A1001");
      const card = page.getByTestId("approval").filter({ hasText: "Refund 129 USD for order A1001?" });
      await card.waitFor();
      const message = page.getByLabel("Message");
      assert.equal(await message.isDisabled(), true);
      assert.equal(await message.getAttribute("placeholder"), "Decide the request above first");
      assert.equal(await page.getByRole("button", { name: "Send" }).isDisabled(), true);
      // The card comes with the request; the status line with the turn's end, a moment later.
      await page
        .locator("#status")
        .filter({ hasText: /^Waiting for your approval\.$/ })
        .waitFor();
      // The arguments are behind a toggle, and break anywhere rather than widen the page.
      assert.equal(await card.locator("code").isVisible(), false);
      await card.getByText("Details").click();
      assert.equal(await card.locator("code").textContent(), '{"orderId":"A1001","amountUsd":129}');
      await fitsWidth(page, size.width);
      await page.screenshot({ path: `test-artifacts/first-user-approval-${size.name}.png`, fullPage: true });

      // Another tab of the same conversation sends anyway: the refusal is worded for the user, the code kept for whoever runs it.
      const id = await storedId(page);
      const refused = await page.evaluate(
        async (conversation) =>
          (
            await fetch(`/v1/conversations/${conversation}/messages`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: '{"message":"hello?"}',
            })
          ).status,
        id,
      );
      assert.equal(refused, 409);
      await card.getByRole("button", { name: "Approve" }).click();
      await page.locator(".assistant").filter({ hasText: "is refunded to your card" }).waitFor();
      assert.equal(await message.isDisabled(), false);
      assert.equal(await message.getAttribute("placeholder"), "Write a message");
      await send(page, "x".repeat(9000));
      const line = page.locator(".error-line");
      await line.waitFor();
      assert.equal(await line.textContent(), "That message is too long. Shorten it and send it again.");
      assert.match((await line.getAttribute("title")) ?? "", /^message_too_long: /);
      await fitsWidth(page, size.width);
      await page.context().close();
    });

    it("says who has the conversation once a person hands it back, and that agent answers what the customer asked meanwhile", async () => {
      const page = await open(dev.url, size);
      await send(page, "I want to talk to a person");
      await page.locator("#status").filter({ hasText: "A person at support-desk will answer here." }).waitFor();
      await send(page, "are you there?");
      await page.locator(".user").filter({ hasText: "are you there?" }).waitFor();
      // That turn's end, before the person hands back: else the hand-back can reach the conversation first, and triage answers it.
      await page.locator("#status").filter({ hasText: "A person at support-desk will answer here." }).waitFor();
      const id = await storedId(page);
      const answers = await page.locator(".assistant").count();
      // The desk is a signed-in operator's (the development sign-in, with "operator" ticked).
      const back = await fetch(`${dev.url}/v1/conversations/${id}/operator/handoff`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${await operatorToken(dev.url)}` },
        body: JSON.stringify({ to: "triage", note: "Customer wants a refund for A1001" }),
      });
      assert.equal(back.status, 200);
      await page
        .getByTestId("handoff")
        .filter({ hasText: /^support-desk → triage$/ })
        .waitFor();
      // "are you there?" came after the person's last word: triage answers it now, not at the customer's next message.
      await page.waitForFunction((count) => document.querySelectorAll(".assistant").length > count, answers);
      assert.equal(await page.getByTestId("active-agent").textContent(), "triage");
      // The note was for triage: not on the customer's page, live or after a reload.
      assert.doesNotMatch((await page.locator("body").textContent()) ?? "", /refund for A1001/);
      await page.reload();
      await page
        .getByTestId("handoff")
        .filter({ hasText: /^support-desk → triage$/ })
        .waitFor();
      assert.doesNotMatch((await page.locator("body").textContent()) ?? "", /refund for A1001/);
      // Reloaded, no one is said to be waiting for a person who handed the conversation back.
      assert.doesNotMatch((await page.locator("#status").textContent()) ?? "", /A person at/);
      await page.screenshot({ path: `test-artifacts/first-user-hand-back-${size.name}.png`, fullPage: true });
      await page.context().close();
    });

    it("labels the trace axis in whole milliseconds or seconds, with no label over another", async () => {
      const page = await open(dev.url, size);
      await send(page, "Solve x^2 - 5x + 6 = 0");
      await page.getByTestId("handoff").first().waitFor();
      await page.getByRole("button", { name: "Send" }).and(page.locator(":enabled")).waitFor();
      await headerAction(page, "Trace");
      await page.getByTestId("span-bar").first().waitFor();
      const labels = await page.locator(".tick-label").evaluateAll((nodes) =>
        nodes.map((node) => {
          const box = (node as SVGGraphicsElement).getBoundingClientRect();
          return { text: node.textContent ?? "", left: box.left, right: box.right };
        }),
      );
      assert.ok(labels.length >= 2, "the axis has ticks");
      for (const label of labels) assert.match(label.text, /^(0|\d+ ms|\d+(\.\d{1,2})? s)$/);
      for (const [a, b] of labels.slice(1).map((label, i) => [labels[i]!, label] as const)) {
        assert.ok(a.right <= b.left, `"${a.text}" and "${b.text}" do not overlap`);
      }
      await page.screenshot({ path: `test-artifacts/first-user-trace-${size.name}.png`, fullPage: true });
      await page.context().close();
    });
  });

  describe(`the operator desk at ${size.name} width (${size.width} px)`, () => {
    it("offers one way to say who answers, shows every control, and says when no one waits", async () => {
      const desk = await open(dev.url, size, "/operator.html");
      await desk.getByRole("button", { name: "Sign in" }).waitFor();
      // With the development sign-in, signing in is how an operator is named: no second name box, no key box.
      assert.equal(await desk.getByLabel("Name shown to the customer").isVisible(), false);
      assert.equal(await desk.getByLabel("Operator key").isVisible(), false);
      const signIn = (await desk.getByRole("button", { name: "Sign in" }).boundingBox())!;
      assert.ok(signIn.x + signIn.width <= size.width, "the Sign in button is on screen");
      await fitsWidth(desk, size.width);
      await desk.screenshot({ path: `test-artifacts/first-user-desk-${size.name}.png`, fullPage: true });

      // With a key and no sign-in: the key box, wide enough for its placeholder, and words for an empty desk.
      const keyed_ = await open(keyed.url, size, "/operator.html");
      const key = keyed_.getByLabel("Operator key");
      await key.fill("a-master-key-0123456789");
      await key.dispatchEvent("change");
      await keyed_.reload();
      await keyed_.getByTestId("waiting").filter({ hasText: "No one is waiting for a person." }).waitFor();
      await keyed_.getByTestId("held").filter({ hasText: "No conversation is held by a person." }).waitFor();
      const fits = await keyed_.getByLabel("Operator key").evaluate((input: HTMLInputElement) => {
        const context = document.createElement("canvas").getContext("2d")!;
        context.font = getComputedStyle(input).font;
        const padding = Number.parseFloat(getComputedStyle(input).paddingLeft) + Number.parseFloat(getComputedStyle(input).paddingRight);
        return context.measureText(input.placeholder).width <= input.clientWidth - padding;
      });
      assert.equal(fits, true, "the key's placeholder is shown whole");
      assert.equal(await keyed_.getByLabel("Name shown to the customer").count(), 1);
      await fitsWidth(keyed_, size.width);
      await keyed_.screenshot({ path: `test-artifacts/first-user-desk-key-${size.name}.png`, fullPage: true });
      await desk.context().close();
      await keyed_.context().close();
    });
  });
}

it("serves a favicon, at /favicon.ico and as the pages' icon", async () => {
  const ico = await fetch(`${dev.url}/favicon.ico`);
  assert.equal(ico.status, 200);
  assert.match(ico.headers.get("content-type") ?? "", /icon/);
  assert.equal((await fetch(`${dev.url}/favicon.svg`)).status, 200);
});

it("a signed-in user's sidebar lists no empty conversation for having opened the page", async () => {
  const page = await open(dev.url, WIDTHS[0]);
  await page.getByLabel("Sign-in name").fill("Nia");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("signed-in").waitFor();
  await page.getByTestId("inbox").filter({ hasText: "No conversations yet." }).waitFor();
  await page.reload();
  await page.getByTestId("inbox").filter({ hasText: "No conversations yet." }).waitFor();
  await headerAction(page, "New conversation");
  await page.getByTestId("inbox").filter({ hasText: "No conversations yet." }).waitFor();
  await send(page, "Where is order A1002?");
  await page.getByTestId("inbox").locator("[data-conversation]").waitFor();
  assert.equal(await page.getByTestId("inbox").locator("[data-conversation]").count(), 1);
  await page.context().close();
});
