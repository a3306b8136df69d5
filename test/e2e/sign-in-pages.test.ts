/**
 * People who sign in, in Debian's Chromium against wrangler dev with the development sign-in of
 * `npm start` (ALLOW_ANONYMOUS on the command line, no identity provider): two users side by side
 * with inboxes of their own (titles, switching, searching, renaming, deleting, a reload), and an
 * operator who signs in and answers under their own name. Screenshots are kept in test-artifacts/.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { type Browser, chromium, type Page } from "playwright-core";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";
import { headerAction } from "./chat-page-driver.ts";

const CHROMIUM = "/usr/bin/chromium";
const persistTo = mkdtempSync(join(tmpdir(), "handoff-sign-in-"));
let dev: WranglerDev;
let browser: Browser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Debian's chromium is needed at ${CHROMIUM}: apt-get install -y chromium (.ci/run does it)`);
  dev = await startWranglerDev({ persistTo });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
  mkdirSync("test-artifacts", { recursive: true });
});

after(async () => {
  await browser?.close();
  await dev?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

/** A browser of its own (its own localStorage), signed in through the development sign-in. */
async function signedIn(name: string, path = "/", operator = false): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1150, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${dev.url}${path}`);
  await page.getByLabel("Sign-in name").fill(name);
  const box = page.getByRole("checkbox", { name: "operator" });
  if ((await box.isChecked()) !== operator) await box.click();
  await page.getByRole("button", { name: "Sign in" }).click();
  await page
    .getByTestId("signed-in")
    .filter({ hasText: `Signed in as ${name}` })
    .waitFor();
  return page;
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByRole("button", { name: "Send" }).and(page.locator(":enabled")).waitFor();
  await page.getByLabel("Message").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

const titles = (page: Page) => page.getByTestId("inbox").locator(".title").allTextContents();

async function waitForTitles(page: Page, expected: string[]): Promise<void> {
  await page.waitForFunction(
    (want) => JSON.stringify(Array.from(document.querySelectorAll("#inbox-list .title"), (n) => n.textContent)) === JSON.stringify(want),
    expected,
    { timeout: 15_000 },
  );
}

describe("signed-in users in the chat page", () => {
  it("keeps two users' conversations apart, titled, switched, searched, renamed and deleted, across a reload", async () => {
    const ada = await signedIn("Ada");
    await send(ada, "I was charged twice for order A1001");
    await ada.getByTestId("approval").filter({ hasText: "Refund 129 USD for order A1001?" }).waitFor();
    await waitForTitles(ada, ["Double charge on order A1001"]);
    // A slow network: the new conversation is made late, by the first message, which waits for it (Send held meanwhile).
    await ada.route("**/v1/conversations", async (route) => {
      if (route.request().method() === "POST") await new Promise((resolve) => setTimeout(resolve, 1_000));
      await route.continue();
    });
    await headerAction(ada, "New conversation");
    await send(ada, "Where is order A1002?");
    assert.equal(await ada.getByRole("button", { name: "Send" }).isDisabled(), true);
    await ada.locator(".assistant").filter({ hasText: "Order A1002 is" }).waitFor();
    await ada.unroute("**/v1/conversations");
    await waitForTitles(ada, ["Delivery of order A1002", "Double charge on order A1001"]);

    const bob = await signedIn("Bob");
    // Bob's inbox holds none of Ada's: empty, or only the conversation his page opened for him (a race the page may win).
    await bob.waitForFunction(() => document.querySelector("#inbox-list [data-conversation], #inbox-list .empty") !== null);
    assert.deepEqual(
      (await titles(bob)).filter((title) => title !== "New conversation"),
      [],
    );
    await send(bob, "Solve x^2 - 5x + 6 = 0");
    await waitForTitles(bob, ["Solving a sum"]);
    await ada.screenshot({ path: "test-artifacts/inbox-ada.png", fullPage: true });
    await bob.screenshot({ path: "test-artifacts/inbox-bob.png", fullPage: true });

    // Search, then switch to what it found: the earlier conversation comes back whole, approval and all.
    await ada.getByLabel("Search conversations").fill("charged");
    await waitForTitles(ada, ["Double charge on order A1001"]);
    await ada.getByTestId("inbox").locator(".pick").first().click();
    await ada.locator(".user").filter({ hasText: "I was charged twice for order A1001" }).waitFor();
    await ada.getByTestId("approval").waitFor();
    assert.equal(await ada.getByTestId("active-agent").textContent(), "billing");
    assert.equal(await ada.locator(".user").count(), 1);

    // Rename it; a reload (with a sign-in token the Worker no longer takes) signs in again as Ada and shows it open.
    await ada.getByLabel("Search conversations").fill("");
    await ada.getByRole("button", { name: "Rename Double charge on order A1001" }).click();
    // The cleared search refreshes the list while the rename form is open: the form stays.
    await ada.locator("#inbox-list [data-conversation]").filter({ hasText: "Delivery of order A1002" }).waitFor();
    // A title of spaces is refused by the Worker; its message shows on the field, which stays.
    await ada.getByLabel("New title").fill("   ");
    await ada.getByRole("button", { name: "Save" }).click();
    await ada.waitForFunction(() => (document.querySelector<HTMLInputElement>(".rename-form input")?.validationMessage ?? "") !== "");
    assert.match(
      await ada.getByLabel("New title").evaluate((field: HTMLInputElement) => field.validationMessage),
      /`title` must not be empty/,
    );
    await ada.getByLabel("New title").fill("Refund for A1001");
    await ada.getByRole("button", { name: "Save" }).click();
    await waitForTitles(ada, ["Refund for A1001", "Delivery of order A1002"]);
    await ada.evaluate(() => {
      const saved = JSON.parse(localStorage.getItem("handoff-account") ?? "{}");
      localStorage.setItem("handoff-account", JSON.stringify({ ...saved, token: "eyJhbGciOiJIUzI1NiJ9.e30.expired" }));
    });
    await ada.reload();
    await ada.getByTestId("signed-in").filter({ hasText: "Signed in as Ada" }).waitFor();
    await ada.locator(".user").filter({ hasText: "I was charged twice for order A1001" }).waitFor();
    await waitForTitles(ada, ["Refund for A1001", "Delivery of order A1002"]);

    // Escape leaves a rename as it was.
    await ada.getByRole("button", { name: "Rename Delivery of order A1002" }).click();
    await ada.getByLabel("New title").press("Escape");
    await waitForTitles(ada, ["Refund for A1001", "Delivery of order A1002"]);

    // Delete the other one: it leaves the list; Bob's list never had Ada's.
    ada.once("dialog", (dialog) => dialog.accept());
    await ada.getByRole("button", { name: "Delete Delivery of order A1002" }).click();
    await waitForTitles(ada, ["Refund for A1001"]);
    assert.deepEqual(await titles(bob), ["Solving a sum"]);
    await ada.screenshot({ path: "test-artifacts/inbox-ada-after.png", fullPage: true });
    await ada.context().close();
    await bob.context().close();
  });

  it("holds Send while a sign-in is under way: the page reloads once it is done, and a message sent meanwhile would be lost", async () => {
    const page = await (await browser.newContext({ viewport: { width: 1150, height: 800 } })).newPage();
    let answer = () => {};
    let held = new Promise<void>((resolve) => (answer = resolve));
    await page.route("**/v1/dev/sign-in", async (route) => {
      await held;
      await route.continue();
    });
    await page.goto(dev.url);
    const send = page.getByRole("button", { name: "Send" });
    await send.and(page.locator(":enabled")).waitFor();
    // A sign-in the Worker refuses gives Send back, and says why.
    await page.getByLabel("Sign-in name").fill("   ");
    answer();
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator(".sign-in .hint").filter({ hasText: "`name` must not be empty." }).waitFor();
    assert.equal(await send.isEnabled(), true, "Send after a refused sign-in");
    held = new Promise<void>((resolve) => (answer = resolve));
    await page.getByLabel("Sign-in name").fill("Dora");
    await page.getByRole("button", { name: "Sign in" }).click();
    assert.equal(await send.isDisabled(), true, "Send while the sign-in is answered");
    assert.equal(await page.getByRole("button", { name: "Sign in" }).isDisabled(), true, "a second Sign in");
    answer();
    await page.getByTestId("signed-in").filter({ hasText: "Signed in as Dora" }).waitFor();
    await send.and(page.locator(":enabled")).waitFor();
    await page.context().close();
  });

  it("lets an operator sign in on the desk and answer under their own name, recorded in the conversation", async () => {
    const cleo = await signedIn("Cleo");
    await send(cleo, "I want to talk to a person");
    await cleo.getByText("A person at support-desk will answer here.").waitFor();
    const id = await cleo.evaluate(() => (JSON.parse(localStorage.getItem("handoff-chat:dev:cleo") ?? "{}") as { id: string }).id);

    const desk = await signedIn("Olga", "/operator.html", true);
    assert.equal(await desk.getByTestId("signed-in").textContent(), "Signed in as Olga (operator)");
    // Signed in, there is no key to paste and no name to type.
    assert.equal(await desk.getByLabel("Name shown to the customer").isVisible(), false);
    const waiting = desk.getByTestId("waiting").locator(`button[data-conversation="${id}"]`);
    await waiting.click();
    await desk.getByLabel("Answer").fill("Hi, Olga here. How can I help?");
    await desk.getByRole("button", { name: "Send answer" }).click();
    await cleo.locator(".assistant.person").filter({ hasText: "Hi, Olga here." }).waitFor();
    assert.match((await cleo.locator(".assistant.person .who").first().textContent()) ?? "", /support-desk \(Olga\)/);
    await desk.getByTestId("held").locator(`button[data-conversation="${id}"]`).filter({ hasText: "Olga" }).waitFor();
    await desk.screenshot({ path: "test-artifacts/operator-signed-in.png", fullPage: true });

    // The conversation records who answered, and when.
    const activity = await cleo.evaluate(async (conversationId) => {
      const { token } = JSON.parse(localStorage.getItem("handoff-account") ?? "{}") as { token: string };
      const view = await (await fetch(`/v1/conversations/${conversationId}`, { headers: { authorization: `Bearer ${token}` } })).json();
      return view.activity as Array<{ kind: string; by: { id: string; name: string } }>;
    }, id);
    assert.deepEqual(
      activity.map((a) => [a.kind, a.by]),
      [["answered", { id: "dev:olga", name: "Olga" }]],
    );
    await cleo.screenshot({ path: "test-artifacts/chat-person-signed-in.png", fullPage: true });
  });
});
