/** Driving the chat page in Chromium as a user does: a window of a size, a message sent and its turn waited for. */
import { createRequire } from "node:module";
import type { Browser, Page } from "playwright-core";

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

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

/** A development sign-in token for an operator named `name` (the Worker must offer that sign-in, as `npm start` does). */
export async function operatorToken(url: string, name = "Sam"): Promise<string> {
  const response = await fetch(`${url}/v1/dev/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, operator: true }),
  });
  if (!response.ok) throw new Error(`The development sign-in answered ${response.status}.`);
  return ((await response.json()) as { token: string }).token;
}

/** The operator desk in a window of its own, its operator signed in as the desk's sign-in keeps them (a browser of their own). */
export async function openDesk(browser: Browser, url: string, size: { width: number; height: number }): Promise<Page> {
  const token = await operatorToken(url);
  const context = await browser.newContext({ viewport: { width: size.width, height: size.height } });
  await context.addInitScript(
    (account) => localStorage.setItem("handoff-account", account),
    JSON.stringify({ token, name: "Sam", operator: true }),
  );
  const page = await context.newPage();
  await page.goto(`${url}/operator.html`);
  return page;
}

/** Clicks the header action `name` (Trace, What I remember, New conversation), opening the menu a narrow screen keeps them in. */
export async function headerAction(page: Page, name: string): Promise<void> {
  const action = page.locator("#actions").getByRole("button", { name });
  if (!(await action.isVisible())) await page.getByRole("button", { name: "Menu" }).click();
  await action.click();
}

/** axe-core's serious and critical findings on the page as it is (its context must bypass the page's CSP to add it). */
export async function axeFindings(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    type Result = { violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> };
    const result = await (window as unknown as { axe: { run: () => Promise<Result> } }).axe.run();
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(" ")) }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id}: ${v.targets.join(", ")}`);
}
