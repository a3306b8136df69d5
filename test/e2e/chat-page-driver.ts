/** Driving the chat page in Chromium as a user does: a window of a size, a message sent and its turn waited for. */
import type { Browser, Page } from "playwright-core";

/** A new window of `size` on `path` of the Worker at `url`. */
export async function openPage(browser: Browser, url: string, size: { width: number; height: number }, path = "/"): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: size.width, height: size.height } });
  const page = await context.newPage();
  await page.goto(`${url}${path}`);
  return page;
}

export const sendButton = (page: Page) => page.getByRole("button", { name: "Send" }).and(page.locator(":enabled"));

/** Sends a message and waits for its turn's end (Send free again, or a request card holding it). */
export async function turn(page: Page, text: string): Promise<void> {
  await sendButton(page).waitFor();
  const before = await page.locator("#log > *").count();
  await page.getByLabel("Message").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
  await page.waitForFunction((count) => document.querySelectorAll("#log > *").length > count + 1, before);
  await page.getByRole("button", { name: "Stop" }).waitFor({ state: "hidden" });
}
