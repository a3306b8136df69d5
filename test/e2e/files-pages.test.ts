/**
 * Files on the pages (issue 66), in Debian's Chromium at 1280 px and at 390 px against the real
 * `wrangler dev` on the demo, with R2 local: a photo attached, pasted or dropped waits in a tray,
 * goes with the message, shows as a thumbnail that opens large, and the demo's shipping opens a
 * damage claim with it and gives back its form; a large file shows its upload's progress; the
 * operator desk shows the customer's photo; a reload shows them all again.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { crc32, deflateSync } from "node:zlib";
import { type Browser, chromium, type Page } from "playwright-core";
import { openDesk } from "./chat-page-driver.ts";
import { startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const CHROMIUM = "/usr/bin/chromium";
const persistTo = mkdtempSync(join(tmpdir(), "handoff-files-pages-"));
const WIDTHS = [
  { name: "desktop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 800 },
] as const;
let dev: WranglerDev;
let browser: Browser;

before(async () => {
  dev = await startWranglerDev({ persistTo, vars: { DEMO_DELAY_MS: "5" } });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
  mkdirSync("test-artifacts", { recursive: true });
});

after(async () => {
  await browser?.close();
  await dev?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

/** A real PNG of one colour (a box's brown), `padding` bytes after its end (decoders stop at IEND): a large file that still shows. */
function png(width = 160, height = 120, padding = 0): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => [150, 110, 60]).flat())]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk("IHDR", header), chunk("IDAT", pixels), chunk("IEND", Buffer.alloc(0)), Buffer.alloc(padding)]);
}

async function open(size: (typeof WIDTHS)[number], path = "/"): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: size.width, height: size.height } });
  const page = await context.newPage();
  await page.goto(`${dev.url}${path}`);
  await page.getByTestId("active-agent").filter({ hasText: "triage" }).waitFor();
  return page;
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByLabel("Message").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
  await page.locator(".user").filter({ hasText: text }).waitFor();
  await page.getByRole("button", { name: "Stop" }).waitFor({ state: "hidden" });
}

/** Whether an image in the log has loaded (a thumbnail read with the page's credential). */
const shown = (page: Page, scope: string) =>
  page.waitForFunction(
    (s) => Array.from(document.querySelectorAll<HTMLImageElement>(`${s} img.thumb`)).some((img) => img.naturalWidth > 0),
    scope,
  );

for (const size of WIDTHS) {
  describe(`files on the chat page at ${size.name} width (${size.width} px)`, () => {
    it("attaches a photo, shows it, opens it large, and the demo opens a damage claim with it and gives back its form", async () => {
      const page = await open(size);
      await page.locator("#picker").setInputFiles({ name: "crushed-box.png", mimeType: "image/png", buffer: png() });
      await page.getByTestId("pending-file").filter({ hasText: "crushed-box.png" }).waitFor();
      await send(page, "My parcel arrived damaged, here is a photo");
      assert.equal(await page.getByTestId("pending-file").count(), 0, "the tray is empty once sent");
      await shown(page, ".bubble.user");
      await page.locator(".bubble").filter({ hasText: "Which order is it?" }).waitFor();
      await send(page, "A1002");
      const answer = page.locator(".bubble.assistant").filter({ hasText: /opened damage claim DC-A1002-\d{5} .* "crushed-box\.png"/ });
      await answer.waitFor();
      const form = page.locator("a.file").filter({ hasText: /^claim-DC-A1002-\d{5}\.txt \(\d+ B\)$/ });
      await form.waitFor();
      // The newest message stays above the composer, thumbnails and all.
      const hidden = await page.evaluate(() => {
        const last = document.querySelector("#log")!.lastElementChild!.getBoundingClientRect();
        return last.bottom > document.querySelector("#dock")!.getBoundingClientRect().top + 1;
      });
      assert.equal(hidden, false);
      await page.screenshot({ path: `test-artifacts/files-claim-${size.name}.png` });
      await page.getByRole("button", { name: "Open crushed-box.png" }).first().click();
      await page.getByTestId("lightbox").waitFor();
      await page.screenshot({ path: `test-artifacts/files-lightbox-${size.name}.png` });
      await page.keyboard.press("Escape");
      await page.getByTestId("lightbox").waitFor({ state: "detached" });
      // A reload draws the photo and the claim form again, from the stored references.
      await page.reload();
      await shown(page, ".bubble.user");
      await form.waitFor();
      await page.context().close();
    });

    it("takes a pasted image and a dropped file into the tray, and shows a large upload's progress", async () => {
      const page = await open(size);
      const small = png().toString("base64");
      await page.getByLabel("Message").focus();
      await page.evaluate(async (base64) => {
        const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
        const pasted = new DataTransfer();
        pasted.items.add(new File([bytes], "", { type: "image/png" }));
        document
          .querySelector("#message")!
          .dispatchEvent(new ClipboardEvent("paste", { clipboardData: pasted, bubbles: true, cancelable: true }));
        const dropped = new DataTransfer();
        dropped.items.add(new File(["order A1001, charged twice"], "notes.txt", { type: "text/plain" }));
        const column = document.querySelector("#chat-column")!;
        column.dispatchEvent(new DragEvent("dragover", { dataTransfer: dropped, bubbles: true, cancelable: true }));
        column.dispatchEvent(new DragEvent("drop", { dataTransfer: dropped, bubbles: true, cancelable: true }));
      }, small);
      await page.getByTestId("pending-file").filter({ hasText: "pasted image" }).waitFor();
      await page.getByTestId("pending-file").filter({ hasText: "notes.txt" }).waitFor();
      await page.getByRole("button", { name: "Remove notes.txt" }).click();
      assert.equal(await page.getByTestId("pending-file").count(), 1);
      // A 3 MB photo: its upload shows a progress bar while it goes (held back here, as a slow network would).
      await page.locator("#picker").setInputFiles({ name: "big.png", mimeType: "image/png", buffer: png(160, 120, 3 * 1024 * 1024) });
      await page.route("**/files?name=big.png", async (route) => {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        await route.continue();
      });
      await page.getByRole("button", { name: "Send" }).click();
      await page.getByTestId("upload-progress").waitFor();
      await page.screenshot({ path: `test-artifacts/files-progress-${size.name}.png` });
      await page.getByTestId("upload-progress").waitFor({ state: "detached" });
      await page.getByRole("button", { name: "Stop" }).waitFor({ state: "hidden" });
      assert.equal(await page.locator(".bubble.user").last().locator("img.thumb").count(), 2, "both photos went with the message");
      await page.context().close();
    });

    it("says in words when a file is not taken, and keeps nothing of it", async () => {
      const page = await open(size);
      await page
        .locator("#picker")
        .setInputFiles({ name: "page.png", mimeType: "image/png", buffer: Buffer.from("<html><script>1</script></html>") });
      await page.getByLabel("Message").fill("look");
      await page.getByRole("button", { name: "Send" }).click();
      await page
        .locator(".error-line")
        .filter({ hasText: "That kind of file cannot be sent here. Send a photo (PNG, JPEG, WebP or GIF), a PDF or a text file." })
        .waitFor();
      assert.equal(await page.locator(".bubble.user").count(), 0);
      await page.context().close();
    });
  });
}

describe("the operator desk", () => {
  it("shows the customer's photo in a conversation handed to a person", async () => {
    const page = await open(WIDTHS[0]);
    await page.locator("#picker").setInputFiles({ name: "receipt.png", mimeType: "image/png", buffer: png(120, 160) });
    await send(page, "I want to talk to a person");
    await page.locator("#status").filter({ hasText: "A person at support-desk will answer here." }).waitFor();
    const id = await page.evaluate(() => (JSON.parse(localStorage.getItem("handoff-chat") ?? "{}") as { id: string }).id);
    // The desk is for a signed-in operator: in a browser of their own.
    const desk = await openDesk(browser, dev.url, WIDTHS[0]);
    await desk.getByTestId("waiting").locator(`button[data-conversation="${id}"]`).click();
    await shown(desk, "#desk-log");
    await desk.screenshot({ path: "test-artifacts/files-desk-desktop.png" });
    await desk.context().close();
    await page.context().close();
  });
});
