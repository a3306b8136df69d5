/**
 * The chat page in headless Debian Chromium (playwright-core, never a downloaded browser) against
 * wrangler dev with the offline demo model: a billing question, the handoff divider, an approved
 * refund, a reload that shows the same conversation, and a dropped stream resumed without
 * duplicated text. The screenshot is kept in test-artifacts/.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium } from "playwright-core";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";
import { headerAction } from "./chat-page-driver.ts";

const CHROMIUM = "/usr/bin/chromium";
const persistTo = mkdtempSync(join(tmpdir(), "handoff-page-"));
let dev: WranglerDev;
let browser: Browser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Debian's chromium is needed at ${CHROMIUM}: apt-get install -y chromium (.ci/run does it)`);
  // The demo model types at 40 ms a word, as `npm start` has it at 25: slow enough to press Stop mid-answer.
  dev = await startWranglerDev({ persistTo, vars: { DEMO_DELAY_MS: "40" } });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

after(async () => {
  await browser?.close();
  await dev?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

describe("the chat page", () => {
  it("shows a handoff, takes an approval, and survives a reload", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(dev.url);
    await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();

    await page.getByLabel("Message").fill("I was charged twice for order A1001");
    await page.getByRole("button", { name: "Send" }).click();
    await page
      .getByTestId("handoff")
      .filter({ hasText: /^triage → billing$/ })
      .waitFor();
    const approval = page.getByTestId("approval");
    await approval.filter({ hasText: "Refund 129 USD for order A1001?" }).waitFor();
    assert.equal(await page.getByTestId("active-agent").textContent(), "billing");

    await approval.getByRole("button", { name: "Approve" }).click();
    const answer = page.locator(".assistant").filter({ hasText: "is refunded to your card" });
    await answer.waitFor();
    mkdirSync("test-artifacts", { recursive: true });
    await page.screenshot({ path: "test-artifacts/chat-page.png", fullPage: true });

    await page.reload();
    await page
      .getByTestId("handoff")
      .filter({ hasText: /^triage → billing$/ })
      .waitFor();
    await answer.waitFor();
    assert.equal(await page.locator(".user").count(), 1);
    assert.equal(await page.getByTestId("active-agent").textContent(), "billing");
    // The tools in their own words, folded into one line; their names in the details.
    assert.match((await page.locator("details.tool summary").allTextContents()).join(" "), /Looked up order A1001.*Refund of 129 USD/);
    assert.match((await page.locator("details.tool pre").allTextContents()).join(" "), /lookup_order[\s\S]*refund/);
    await page.close();
  });

  it("shows a delegation as a collapsible block under the call: the fraud checker's text and its tool call, as they come", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(dev.url);
    await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    await page.getByLabel("Message").fill("Is this charge on order A1001 fraud?");
    await page.getByRole("button", { name: "Send" }).click();
    const block = page.getByTestId("delegation");
    await block.locator("summary").filter({ hasText: "asked fraud-check: answered" }).waitFor();
    await block.locator("summary").click();
    assert.match(
      (await block.locator(".delegation-text").textContent()) ?? "",
      /Order A1001 was charged 2 times: a double charge, not fraud/,
    );
    assert.match((await block.locator("li").allTextContents()).join(" "), /lookup_order \{"orderId":"A1001"\} → done/);
    await page.locator(".assistant").filter({ hasText: "I asked our fraud check." }).waitFor();
    // Billing kept the conversation: a delegation changes no holder.
    assert.equal(await page.getByTestId("active-agent").textContent(), "billing");
    mkdirSync("test-artifacts", { recursive: true });
    await page.screenshot({ path: "test-artifacts/chat-page-delegation.png", fullPage: true });
    // The trace panel draws the fraud checker's run as a span of its own look, under the call that asked it.
    await headerAction(page, "Trace");
    const delegated = page.locator(".span.agent.delegation");
    await delegated.waitFor();
    assert.equal(await delegated.locator(".span-name").textContent(), "delegated fraud-check");
    assert.match((await delegated.locator(".span-figure").textContent()) ?? "", /ms · asked as a tool$/);
    const names = await page.locator(".span-name").allTextContents();
    assert.equal(names[names.indexOf("delegated fraud-check") - 1], "ask_fraud_check");
    await page.getByTestId("trace-panel").screenshot({ path: "test-artifacts/trace-panel-delegation.png" });
    await page.close();
  });

  it("shows a background delegation at work over the socket, then the follow-up turn that brings its result", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    await page.goto(dev.url);
    await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    await page.getByLabel("Message").fill("My parcel for order A1002 is lost");
    await page.getByRole("button", { name: "Send" }).click();
    // The call answered at once; the turn ended without waiting for the search.
    await page.locator(".assistant").filter({ hasText: "I will come back to you here when it is done." }).waitFor();
    // A page opened again while the search waits or runs shows it at work (from the view), then its work over the socket.
    await page.reload();
    const block = page.getByTestId("delegation");
    await block.locator("summary").filter({ hasText: "asked parcel-search" }).waitFor();
    const followUp = page.locator(".assistant").filter({ hasText: "Good news from our parcel search" });
    await followUp.filter({ hasText: "it goes out again tomorrow morning." }).waitFor({ timeout: 20_000 });
    assert.match((await followUp.textContent()) ?? "", /The parcel of order A1002 \(USB-C dock\) is at the Arlington depot/);
    await block.locator("summary").filter({ hasText: "asked parcel-search: answered" }).waitFor();
    assert.equal(await page.getByTestId("active-agent").textContent(), "shipping");
    mkdirSync("test-artifacts", { recursive: true });
    await page.screenshot({ path: "test-artifacts/chat-page-background-delegation.png", fullPage: true });
    await page.close();
  });

  it("asks what a background search needs on a card of its own: the composer stays free, and the answer carries the search on", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 1000 } });
    await page.goto(dev.url);
    await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    await page.getByLabel("Message").fill("My parcel for order A1002 is lost, please redeliver it");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".assistant").filter({ hasText: "I will come back to you here when it is done." }).waitFor();
    // The search asks when and where, over the socket; the conversation is not held for it.
    const card = page.getByTestId("request-question").filter({ hasText: "Parcel search asks: When should order A1002 come again" });
    await card.waitFor({ timeout: 20_000 });
    await page.locator("#send:enabled").waitFor();
    assert.equal(await page.getByLabel("Message").getAttribute("placeholder"), "Write a message");
    // Opened again, the page draws the question from the view, and the search as waiting for the user.
    await page.reload();
    await card.waitFor();
    await page.getByTestId("delegation").locator("summary").filter({ hasText: "asked parcel-search: waiting for you" }).waitFor();
    mkdirSync("test-artifacts", { recursive: true });
    await page.screenshot({ path: "test-artifacts/chat-page-background-question.png", fullPage: true });
    await card.locator('input[name="day"]').fill("2026-12-10");
    await card.getByRole("button", { name: "parcel locker" }).click();
    await card.getByRole("button", { name: "Send" }).click();
    const followUp = page.locator(".assistant").filter({ hasText: "Good news from our parcel search" });
    await followUp.filter({ hasText: "it comes again on 2026-12-10, left at the parcel locker." }).waitFor({ timeout: 20_000 });
    await page.getByTestId("delegation").locator("summary").filter({ hasText: "asked parcel-search: answered" }).waitFor();
    assert.equal(await page.locator(".error-line").count(), 0);
    await page.screenshot({ path: "test-artifacts/chat-page-background-answered.png", fullPage: true });
    await page.close();
  });

  it("draws the trace panel: the network with this conversation's handoff path, and the turn's spans on a time axis", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 1000 } });
    // Offline: the page asks nothing of any other origin.
    const elsewhere: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(dev.url)) elsewhere.push(request.url());
    });
    await page.goto(dev.url);
    await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    await headerAction(page, "Trace");
    await page.getByTestId("trace-panel").getByText("No turns yet.").waitFor();
    assert.deepEqual(await page.getByTestId("graph-node").evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).dataset.agent)), [
      "triage",
      "billing",
      "shipping",
      "calculator",
      "support-desk",
    ]);

    await page.getByLabel("Message").fill("I was charged twice for order A1001");
    await page.getByRole("button", { name: "Send" }).click();
    await page.getByTestId("approval").getByRole("button", { name: "Approve" }).click();
    await page.locator(".assistant").filter({ hasText: "is refunded to your card" }).waitFor();

    // The handoff path, labelled with its turn, and the holder highlighted.
    const path = page.locator('[data-testid="path-edge"][data-from="triage"][data-to="billing"]');
    await path.waitFor();
    assert.equal(
      await page
        .locator(".path-label")
        .allTextContents()
        .then((labels) => labels.join(" ")),
      "1",
    );
    assert.equal(await page.locator(".node.active").getAttribute("data-agent"), "billing");
    // The waterfall of turn 1: both legs (the wait for the approval included), model calls with tokens.
    const kinds = await page.getByTestId("span-bar").evaluateAll((rows) => rows.map((r) => (r as SVGElement).dataset.kind));
    assert.equal(kinds[0], "turn");
    assert.ok(kinds.filter((k) => k === "model").length >= 3, `model calls in ${kinds.join(", ")}`);
    assert.ok(kinds.includes("request") && kinds.includes("handoff") && kinds.includes("tool"), kinds.join(", "));
    assert.match((await page.locator(".span.model .span-figure").first().textContent()) ?? "", /ms · \d+ in · \d+ out/);
    // The summary in the page's words; its figures on hover.
    assert.match((await page.locator("#trace-summary").textContent()) ?? "", /^Answered · triage → billing · \d+\.\d s$/);
    assert.match(
      (await page.locator("#trace-summary").getAttribute("title")) ?? "",
      /^\d+ model calls, \d+ tokens in and \d+ out \(completed\)$/,
    );
    mkdirSync("test-artifacts", { recursive: true });
    await page.getByTestId("trace-panel").screenshot({ path: "test-artifacts/trace-panel.png" });
    await page.screenshot({ path: "test-artifacts/chat-page-trace.png", fullPage: true });
    assert.deepEqual(elsewhere, []);
    await page.close();
  });

  it("stops an answer with Stop: the server cancels the turn, and the next message is answered", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 700 } });
    await page.goto(dev.url);
    await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    await page.getByLabel("Message").fill("hello there");
    await page.getByRole("button", { name: "Send" }).click();
    await page.locator(".assistant").first().waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await page.locator(".notice").filter({ hasText: "Stopped." }).waitFor();
    const id = await page.evaluate(() => (JSON.parse(localStorage.getItem("handoff-chat") ?? "{}") as { id: string }).id);
    const view = (await (await fetch(`${dev.url}/v1/conversations/${id}`)).json()) as { status: string; messages: unknown[] };
    assert.equal(view.status, "cancelled");
    assert.equal(view.messages.length, 1, "only the user's message was stored");
    assert.equal(await page.getByRole("button", { name: "Stop" }).isHidden(), true);

    await page.getByLabel("Message").fill("I was charged twice for order A1001");
    await page.getByRole("button", { name: "Send" }).click();
    await page
      .getByTestId("handoff")
      .filter({ hasText: /^triage → billing$/ })
      .waitFor();
    mkdirSync("test-artifacts", { recursive: true });
    await page.screenshot({ path: "test-artifacts/chat-page-stopped.png", fullPage: true });
    await page.close();
  });

  it("draws the newest page of a long conversation, and loads earlier pages when their marker comes into view", async () => {
    const page = await browser.newPage({ viewport: { width: 900, height: 500 } });
    const pages: string[] = [];
    // Pages of two messages instead of a hundred, so a short conversation has several.
    await page.route(/\/v1\/conversations\/[A-Za-z0-9_-]+(\?.*)?$/, (route) => {
      const url = new URL(route.request().url());
      if (route.request().method() === "GET") {
        if (!url.searchParams.has("limit")) url.searchParams.set("limit", "2");
        pages.push(url.search);
      }
      return route.continue({ url: url.toString() });
    });
    await page.goto(dev.url);
    await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    for (const [i, text] of ["hello there", "and hello again"].entries()) {
      await page.getByLabel("Message").fill(text);
      await page.getByRole("button", { name: "Send" }).click();
      await page.locator(".assistant").nth(i).waitFor();
      await page.getByRole("button", { name: "Stop" }).waitFor({ state: "hidden" });
    }
    pages.length = 0;
    await page.reload();
    // The marker above the newest page is in view on this short page, so the earlier page loads at once.
    await page.locator(".user").filter({ hasText: "hello there" }).waitFor();
    assert.deepEqual(await page.locator(".user").allTextContents(), ["hello there", "and hello again"]);
    await page.locator("#earlier").waitFor({ state: "hidden" });
    assert.deepEqual(pages, ["?limit=2", "?before=2&limit=2"]);
    await page.close();
  });

  it("reconnects a dropped stream with Last-Event-ID and draws no text twice (no socket: the SSE fallback)", async () => {
    const page = await browser.newPage();
    await page.routeWebSocket(/\/socket/, (socket) => socket.close());
    await page.goto(dev.url);
    await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    const resumes: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes("/events")) resumes.push(request.headers()["last-event-id"] ?? "");
    });
    // Cut the answer after its first few events, as a dropped connection would.
    await page.route("**/messages", async (route) => {
      const response = await route.fetch();
      const frames = (await response.text()).split("\n\n");
      await route.fulfill({ response, body: `${frames.slice(0, 6).join("\n\n")}\n\n` });
    });
    await page.getByLabel("Message").fill("hello");
    await page.getByRole("button", { name: "Send" }).click();
    const bubble = page.locator(".assistant .text").last();
    await page.waitForFunction(
      () => document.querySelector("#send:not([disabled])") !== null && document.querySelector(".assistant") !== null,
    );
    const text = await bubble.textContent();
    assert.ok(text?.startsWith("This is the offline demo model."), `unexpected text: ${text}`);
    assert.equal(text?.split("This is the offline demo model.").length, 2, "the text is drawn once");
    assert.match(text ?? "", /ask to talk to a person\.$/);
    assert.equal(resumes.length, 1);
    assert.ok(Number(resumes[0]) > 0, "the page resumed after the last event it had drawn");
    await page.close();
  });

  it("draws text holding line and paragraph separators whole (no socket: the SSE fallback)", async () => {
    const page = await browser.newPage();
    await page.routeWebSocket(/\/socket/, (socket) => socket.close());
    await page.goto(dev.url);
    await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    const odd = "first\u2028second\u2029third";
    // The demo model never says such text: put it in the first text delta of a real stream.
    await page.route("**/messages", async (route) => {
      const response = await route.fetch();
      let replaced = false;
      const frames = (await response.text()).split("\n\n").map((frame) => {
        if (replaced || !frame.includes("event: text-delta")) return frame;
        replaced = true;
        return frame.replace(/^data: .*$/m, `data: ${JSON.stringify({ type: "text-delta", delta: `${odd} ` })}`);
      });
      await route.fulfill({ response, body: frames.join("\n\n") });
    });
    await page.getByLabel("Message").fill("hello");
    await page.getByRole("button", { name: "Send" }).click();
    await page.waitForFunction(
      () => document.querySelector("#send:not([disabled])") !== null && document.querySelector(".assistant") !== null,
    );
    const text = await page.locator(".assistant .text").last().textContent();
    assert.ok(text?.startsWith(`${odd} `), `the separators' chunk was lost: ${JSON.stringify(text)}`);
    assert.match(text ?? "", /ask to talk to a person\.$/);
    await page.close();
  });

  it("a browser EventSource on a finished turn gets 204 and stops reconnecting", async () => {
    const page = await browser.newPage();
    await page.goto(dev.url);
    await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    await page.getByLabel("Message").fill("hello");
    await page.getByRole("button", { name: "Send" }).click();
    await page.waitForFunction(
      () => document.querySelector("#send:not([disabled])") !== null && document.querySelector(".assistant") !== null,
    );
    const asked: number[] = [];
    page.on("response", (response) => {
      if (response.url().includes("/events")) asked.push(response.status());
    });
    // Read the whole last turn, then stay connected as an EventSource would, past its 3 s retry.
    const seen = await page.evaluate(async () => {
      const id = (JSON.parse(localStorage.getItem("handoff-chat") ?? "{}") as { id?: string }).id;
      const source = new EventSource(`/v1/conversations/${id}/events`);
      const types: string[] = [];
      for (const type of ["run-start", "text-delta", "done"]) source.addEventListener(type, () => types.push(type));
      await new Promise((resolve) => setTimeout(resolve, 4_500));
      source.close();
      return types;
    });
    assert.equal(seen.at(-1), "done");
    assert.deepEqual(asked, [200, 204], "one replay, then 204, then no more reconnects");
    await page.close();
  });
});
