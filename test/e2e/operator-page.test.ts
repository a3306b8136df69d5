/**
 * A user and a person, side by side in Debian's Chromium against wrangler dev (the demo model):
 * the user asks for a person, the operator page shows the conversation waiting, the person answers
 * (the user sees it as it is sent) and hands back to triage with a note, and the user's next
 * message is answered by triage. Screenshots of both pages are kept in test-artifacts/.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium } from "playwright-core";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const CHROMIUM = "/usr/bin/chromium";
const persistTo = mkdtempSync(join(tmpdir(), "handoff-operator-"));
let dev: WranglerDev;
let browser: Browser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Debian's chromium is needed at ${CHROMIUM}: apt-get install -y chromium (.ci/run does it)`);
  // Approvals expire after 3 s here: a turn the schedule runs reaches the open page over its socket.
  // An open API with no development sign-in: the desk answers under the name typed in it.
  dev = await startWranglerDev({ persistTo, vars: { APPROVAL_EXPIRES_IN: "3s", DEV_SIGN_IN: "false" } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
});

after(async () => {
  await browser?.close();
  await dev?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

describe("a handoff to a person, in two pages", () => {
  it("waits on the operator desk, shows the person's answer to the user, and goes back to triage with a note", async () => {
    const user = await browser.newPage({ viewport: { width: 900, height: 800 } });
    await user.goto(dev.url);
    await user.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    await user.getByLabel("Message").fill("I want to talk to a person");
    await user.getByRole("button", { name: "Send" }).click();
    await user.getByText("A person at support-desk will answer here.").waitFor();
    const id = await user.evaluate(() => (JSON.parse(localStorage.getItem("handoff-chat") ?? "{}") as { id: string }).id);

    const desk = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    await desk.goto(`${dev.url}/operator.html`);
    const waiting = desk.getByTestId("waiting").locator(`button[data-conversation="${id}"]`);
    await waiting.waitFor();
    assert.match((await waiting.textContent()) ?? "", /I want to talk to a person/);
    await waiting.click();
    await desk.getByTestId("handoff-path").filter({ hasText: "triage → support-desk" }).waitFor();
    await desk.getByLabel("Name shown to the customer").fill("Sam");
    await desk.getByLabel("Answer").fill("Hi, Sam here. How can I help?");
    await desk.getByRole("button", { name: "Send answer" }).click();

    // The user sees the person's message as it is sent, as the person's.
    await user.locator(".assistant.person").filter({ hasText: "Hi, Sam here. How can I help?" }).waitFor();
    assert.match((await user.locator(".assistant.person .who").first().textContent()) ?? "", /support-desk \(Sam\)/);
    await desk.getByTestId("held").locator(`button[data-conversation="${id}"]`).waitFor();
    mkdirSync("test-artifacts", { recursive: true });
    await desk.screenshot({ path: "test-artifacts/operator-page.png", fullPage: true });

    await desk.getByLabel("Hand back to").selectOption("triage");
    await desk.getByLabel("Note").fill("customer is happy, nothing to do");
    await desk.getByRole("button", { name: "Hand back" }).click();
    await user
      .getByTestId("handoff")
      .filter({ hasText: /^support-desk → triage$/ })
      .waitFor();
    // The page says who has the conversation now, and that the message that waited gets no answer of its own.
    await user
      .locator("#status")
      .filter({ hasText: /^triage has the conversation again and answers your next message\.$/ })
      .waitFor();
    await desk.getByTestId("held").locator(`button[data-conversation="${id}"]`).waitFor({ state: "detached" });

    await user.getByLabel("Message").fill("thanks, bye");
    await user.getByRole("button", { name: "Send" }).click();
    await user.locator(".assistant").filter({ hasText: "This is the offline demo model" }).waitFor();
    assert.equal(await user.getByTestId("active-agent").textContent(), "triage");
    await user.screenshot({ path: "test-artifacts/user-page-with-person.png", fullPage: true });
    // A reload draws the same conversation: the person's message as theirs, the hand back where it happened.
    await user.reload();
    await user.locator(".assistant.person").filter({ hasText: "Hi, Sam here. How can I help?" }).waitFor();
    // Who took over, never why: the note was for triage, and the transfer's reason is the trace's.
    assert.deepEqual(await user.getByTestId("handoff").allTextContents(), ["triage → support-desk", "support-desk → triage"]);
    assert.doesNotMatch((await user.locator("body").textContent()) ?? "", /customer is happy/);
    // The calculator answers and gives the conversation back; a reload draws the return after its answer.
    await user.getByLabel("Message").fill("What is 6 * 7?");
    await user.getByRole("button", { name: "Send" }).click();
    await user.getByTestId("handoff").filter({ hasText: "calculator → triage" }).waitFor();
    await user.reload();
    await user.getByTestId("handoff").filter({ hasText: "calculator → triage" }).waitFor();
    const drawn = await user.locator("[data-testid=handoff], .assistant").allTextContents();
    assert.ok(drawn.at(-1)?.startsWith("calculator → triage"), `the return closes the turn: ${drawn.join(" | ")}`);
    assert.equal(await user.getByTestId("active-agent").textContent(), "triage");
    await user.close();
    await desk.close();
  });

  it("shows a turn the schedule ran (an approval that expired) in the open page, over its socket, with no action", async () => {
    const user = await browser.newPage({ viewport: { width: 900, height: 800 } });
    const frames: string[] = [];
    user.on("websocket", (socket) => socket.on("framereceived", (frame) => frames.push(String(frame.payload))));
    await user.goto(dev.url);
    await user.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    await user.getByLabel("Message").fill("I was charged twice for order A1001");
    await user.getByRole("button", { name: "Send" }).click();
    await user.getByTestId("approval").waitFor();
    // Nobody decides: after 3 s the alarm declines the refund and billing answers, in this page.
    await user.locator(".assistant").filter({ hasText: "did not go through" }).waitFor({ timeout: 20_000 });
    await user.getByTestId("approval").filter({ hasText: "Expired: no one decided in time." }).waitFor();
    assert.equal(await user.getByTestId("approval").getByRole("button", { name: "Approve" }).isDisabled(), true);
    assert.ok(
      frames.some((frame) => frame.includes('"scheduled"') || frame.includes('"resumed":true')),
      "the answer came over the socket",
    );
    mkdirSync("test-artifacts", { recursive: true });
    await user.screenshot({ path: "test-artifacts/chat-page-expired-approval.png", fullPage: true });
    await user.close();
  });
  it("lists a conversation whose turn waits for its user, says what it asks, and an operator approves the refund on the desk", async () => {
    const user = await browser.newPage({ viewport: { width: 900, height: 800 } });
    await user.goto(dev.url);
    await user.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
    await user.getByLabel("Message").fill("I was charged twice for order A1002");
    await user.getByRole("button", { name: "Send" }).click();
    await user
      .getByTestId("approval")
      .filter({ hasText: /^Refund [\d.]+ USD for order A1002\?/ })
      .waitFor();
    const id = await user.evaluate(() => (JSON.parse(localStorage.getItem("handoff-chat") ?? "{}") as { id: string }).id);

    const desk = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    await desk.goto(`${dev.url}/operator.html`);
    const asking = desk.getByTestId("asking").locator(`button[data-conversation="${id}"]`);
    await asking.waitFor();
    assert.match((await asking.textContent()) ?? "", /for billing/);
    await asking.click();
    await desk.getByTestId("user-requests").filter({ hasText: "Waiting for the user: approval from refund" }).waitFor();
    assert.equal(await desk.locator("#answer").isHidden(), true);
    mkdirSync("test-artifacts", { recursive: true });
    await desk.screenshot({ path: "test-artifacts/operator-desk-asking.png", fullPage: true });
    await desk.getByTestId("request-approval").getByRole("button", { name: "Approve" }).click();
    // The user's page reads the resumed turn over its socket; the conversation leaves the desk.
    await user.locator(".assistant").filter({ hasText: "is refunded to your card" }).waitFor();
    await asking.waitFor({ state: "detached" });
    await user.close();
    await desk.close();
  });
});
