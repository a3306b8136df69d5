/**
 * The AI SDK's own React client against the Worker: a small page on `useChat` from @ai-sdk/react
 * (test/e2e/fixtures/use-chat/app.ts, bundled here with esbuild: no build step for the user) in
 * Debian's Chromium, against wrangler dev and the demo model. Handoff, approve, deny, regenerate(),
 * Stop then send, and a reload seeded from /ui-messages. Screenshots go to test-artifacts/.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { build } from "esbuild";
import { type Browser, chromium, type Page } from "playwright-core";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const CHROMIUM = "/usr/bin/chromium";
const persistTo = mkdtempSync(join(tmpdir(), "handoff-use-chat-"));
let dev: WranglerDev;
let browser: Browser;
let bundle: string;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Debian's chromium is needed at ${CHROMIUM}: apt-get install -y chromium`);
  const built = await build({
    entryPoints: [new URL("./fixtures/use-chat/app.ts", import.meta.url).pathname],
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    define: { "process.env.NODE_ENV": '"production"' },
    logLevel: "silent",
  });
  bundle = built.outputFiles[0]!.text;
  dev = await startWranglerDev({ persistTo, vars: { DEMO_DELAY_MS: "40" } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
});

after(async () => {
  await browser?.close();
  await dev?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

/** The page, served from the Worker's origin (so its requests are same-origin) by intercepting two paths. */
async function open(id: string, query = "", ready = true, setup?: (page: Page) => Promise<unknown>): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 900, height: 800 } });
  await setup?.(page);
  await page.route(`${dev.url}/use-chat/index.html*`, (route) =>
    route.fulfill({
      contentType: "text/html",
      body: '<!doctype html><div id="root"></div><script type="module" src="/use-chat/app.js"></script>',
    }),
  );
  await page.route(`${dev.url}/use-chat/app.js`, (route) => route.fulfill({ contentType: "text/javascript", body: bundle }));
  await page.goto(`${dev.url}/use-chat/index.html?id=${id}${query}`);
  if (ready) await page.locator("#status").filter({ hasText: "ready" }).waitFor();
  return page;
}

async function send(page: Page, text: string): Promise<void> {
  await page.locator("#input").fill(text);
  await page.locator("#send").click();
}

async function stored(
  id: string,
): Promise<{ status: string; activeAgent: string; messages: Array<{ role: string; content: string | null }> }> {
  return (await (await fetch(`${dev.url}/v1/conversations/${id}`)).json()) as never;
}

describe("useChat from @ai-sdk/react", () => {
  it("shows the handoff, takes an approval, and a reload seeded from /ui-messages shows the same conversation", async () => {
    const page = await open("usechat-approve");
    await send(page, "I was charged twice for order A1001");
    await page.locator(".handoff").filter({ hasText: "triage → billing" }).waitFor();
    await page.locator('.tool[data-state="approval-requested"]').getByRole("button", { name: "Approve" }).click();
    await page.locator(".text").filter({ hasText: "is refunded to your card" }).waitFor();
    await page.locator("#status").filter({ hasText: "ready" }).waitFor();
    assert.equal(await page.locator('.tool[data-state="output-available"]').filter({ hasText: "refund" }).count(), 1);
    mkdirSync("test-artifacts", { recursive: true });
    await page.screenshot({ path: "test-artifacts/use-chat.png", fullPage: true });
    await page.close();

    const reloaded = await open("usechat-approve", "&seed=1");
    await reloaded.locator(".handoff").filter({ hasText: "triage → billing" }).waitFor();
    assert.equal(await reloaded.locator(".message.user").count(), 1);
    assert.equal(await reloaded.locator('.tool[data-state="output-available"]').filter({ hasText: "refund" }).count(), 1);
    assert.equal(await reloaded.locator(".text").filter({ hasText: "is refunded to your card" }).count(), 1);
    await reloaded.close();
  });

  it("shows a denied approval as a refusal", async () => {
    const page = await open("usechat-deny");
    await send(page, "I was charged twice for order A1001");
    await page.locator('.tool[data-state="approval-requested"]').getByRole("button", { name: "Deny" }).click();
    await page.locator('.tool[data-state="output-denied"]').filter({ hasText: "refund" }).waitFor();
    await page.close();
  });

  it("regenerate() leaves one user message and one answer for the turn, on the page and on the server", async () => {
    const page = await open("usechat-regenerate");
    await send(page, "hello there");
    await page.locator(".message.assistant .text").first().waitFor();
    await page.locator("#status").filter({ hasText: "ready" }).waitFor();
    await page.locator("#regenerate").click();
    await page.locator("#status").filter({ hasText: "ready" }).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator(".message.user").count(), 1);
    assert.equal(await page.locator(".message.assistant").count(), 1);
    assert.deepEqual(
      (await stored("usechat-regenerate")).messages.map((m) => m.role),
      ["user", "assistant"],
    );
    await page.close();
  });

  it("edits the newest message: the server's turn is replaced, not added to", async () => {
    const page = await open("usechat-edit");
    await send(page, "hello there");
    await page.locator(".message.assistant .text").first().waitFor();
    await page.locator("#status").filter({ hasText: "ready" }).waitFor({ timeout: 30_000 });
    await page.locator("#input").fill("I was charged twice for order A1001");
    await page.locator("#edit").click();
    await page.locator(".handoff").filter({ hasText: "triage → billing" }).waitFor();
    assert.deepEqual(await page.locator(".message.user").allTextContents(), ["I was charged twice for order A1001"]);
    const view = await stored("usechat-edit");
    assert.deepEqual(
      view.messages.filter((m) => m.role === "user").map((m) => m.content),
      ["I was charged twice for order A1001"],
    );
    await page.close();
  });

  it("resumes a turn that is still running in a page opened during it", async () => {
    const first = await open("usechat-resume");
    // useChat({ resume: true }) asks /chat/stream for the running turn, from its start, as the page
    // mounts. A loaded machine can take longer to mount a page than the demo takes to answer, so the
    // page mounts first and its ask is let through once the turn is known to be running.
    let letThrough = (): void => undefined;
    const running = new Promise<void>((resolve) => {
      letThrough = resolve;
    });
    const resumed = await open("usechat-resume", "&resume=1", false, (page) =>
      page.route(`${dev.url}/v1/conversations/usechat-resume/chat/stream`, async (route) => {
        await running;
        await route.continue();
      }),
    );
    await send(first, "hello there");
    await first.locator(".message.assistant .text").first().waitFor();
    letThrough();
    await resumed.locator(".message.assistant .text").filter({ hasText: "offline demo model" }).waitFor();
    await resumed.locator("#status").filter({ hasText: "ready" }).waitFor({ timeout: 30_000 });
    await first.close();
    await resumed.close();
  });

  it("Stop cancels the turn on the server, and the next message is answered", async () => {
    const page = await open("usechat-stop");
    await send(page, "hello there");
    await page.locator(".message.assistant .text").first().waitFor();
    await page.locator("#stop").click();
    for (let i = 0; i < 100 && (await stored("usechat-stop")).status !== "cancelled"; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal((await stored("usechat-stop")).status, "cancelled");
    await send(page, "I was charged twice for order A1001");
    await page.locator(".handoff").filter({ hasText: "triage → billing" }).waitFor();
    await page.screenshot({ path: "test-artifacts/use-chat-stop.png", fullPage: true });
    await page.close();
  });
});
