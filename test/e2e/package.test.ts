/**
 * The package, proven from the outside as the README tells a first user to use it: a clone (this
 * tree's files) runs the README's commands for the package (`npm install && npm pack`), then an
 * empty folder gets the README's own-Worker files exactly as the README shows them (package.json,
 * tsconfig.json, wrangler.toml, .dev.vars, the network, the Worker, its test), with the one change
 * the README tells: package.json's `handoff-runtime` is its `file:` line, at the clone's path. Then
 * 1. the README's steps, literally, under Node 22: `npm install` (the toolchain fresh from the
 *    registry, at the ranges the README pins), `npm test` (tsc, then the consumer's vitest file),
 *    and `npm run dev`, where the README's `curl` line is answered by the offline model with a
 *    handoff; on Node 20 (where the machine has it), wrangler refuses to start as the README says;
 * 2. the package's public types type-check beside it, and it bundles with no Node built-in;
 * 3. under `wrangler dev` against a fake provider, a conversation with a handoff goes on with the
 *    agent that holds it;
 * 4. whole, with Node compatibility off: a user signs in, their inbox lists and searches their
 *    conversations, a cancellation waits for approval and resumes, the daily budget refuses a user
 *    who spent it, an agent calls an MCP server's tools with a secret header, and the package's
 *    pages are served: the chat page and the operator desk in Chromium, a guest handed to a person
 *    whose card shows who waits and until when, answered from the desk.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { SignJWT } from "jose";
import { type Browser, chromium } from "playwright-core";
import { startFakeOpenAI } from "../node/fake-openai-server.ts";
import { MCP_TEST_TOKEN, type McpTestServer, startMcpTestServer } from "../node/mcp-test-server.ts";
import { chat, parseSse, startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";
import { readmeFiles } from "../support/readme-files.ts";
import { budgets, measure, overBudget, uncalled, writeMinimalWorker } from "../../bench/bundle-readme.ts";

const CHROMIUM = "/usr/bin/chromium";
/** The machine's own Node when it is 20 (Debian's), to show what the README says of Node 20. */
const NODE_20 = ["/usr/bin/node", "/usr/local/bin/node"].find(
  (path) => existsSync(path) && spawnSync(path, ["--version"], { encoding: "utf8" }).stdout.startsWith("v20."),
);

const repo = fileURLToPath(new URL("../..", import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "handoff-package-"));
const consumer = join(scratch, "consumer");

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" } });
  const output = `${result.stdout}\n${result.stderr}`;
  assert.equal(result.status, 0, `${command} ${args.join(" ")} failed in ${cwd}:\n${output}`);
  return output;
}

const readme = readFileSync(join(repo, "README.md"), "utf8");
const files = readmeFiles(readme);

/**
 * The README's way to the package before it is published, as written: in a clone (this tree's
 * files, committed or not), its commands; it returns the README's `package.json` line, its
 * `/path/to/` being the clone.
 */
function packFromClone(): string {
  const told = /from a clone of this repository \(`([^`]+)` there writes `([^`]+)`\) and put `([^`]+)` in the `package\.json` below/.exec(
    readme,
  );
  assert.ok(told, "the README says how to build the package from a clone");
  const [, commands, tarball, line] = told;
  const clone = join(scratch, "clone");
  for (const file of run("git", ["ls-files", "--cached", "--others", "--exclude-standard"], repo).trim().split("\n")) {
    if (!existsSync(join(repo, file))) continue;
    mkdirSync(dirname(join(clone, file)), { recursive: true });
    copyFileSync(join(repo, file), join(clone, file));
  }
  for (const command of commands!.split(" && ")) {
    const [name, ...args] = command.split(" ");
    run(name!, args, clone);
  }
  assert.ok(existsSync(join(clone, tarball!)), `${commands} writes ${tarball}`);
  return line!.replace("/path/to/", `${clone}/`);
}

before(() => {
  const dependency = packFromClone();
  for (const [file, text] of files) {
    mkdirSync(dirname(join(consumer, file)), { recursive: true });
    writeFileSync(join(consumer, file), text);
  }
  const manifest = join(consumer, "package.json");
  const pinned = readFileSync(manifest, "utf8");
  assert.match(pinned, /"handoff-runtime": "\^0\.1\.0"/);
  writeFileSync(manifest, pinned.replace(/"handoff-runtime": "[^"]+"/, dependency));
});

after(() => rmSync(scratch, { recursive: true, force: true }));

describe("the README's own Worker, step by step as written", () => {
  it("has its seven files: package.json, tsconfig.json, wrangler.toml, .dev.vars, the network, the Worker and its test", () => {
    assert.deepEqual([...files.keys()].sort(), [
      ".dev.vars",
      "package.json",
      "src/network.ts",
      "src/worker.ts",
      "test/network.test.ts",
      "tsconfig.json",
      "wrangler.toml",
    ]);
  });

  it("npm install under Node 22 installs the toolchain the README pins, fresh from the registry", () => {
    assert.match(run("node", ["--version"], consumer), /^v2[2-9]\./);
    run("npm", ["install", "--no-audit", "--no-fund"], consumer);
    const wrangler = JSON.parse(readFileSync(join(consumer, "node_modules/wrangler/package.json"), "utf8")) as { version: string };
    const [major, minor] = wrangler.version.split(".").map(Number);
    assert.ok(major === 4 && minor === 156, `wrangler ${wrangler.version} is the one package.json pins (~4.156.2)`);
  });

  it("on Node 20, wrangler refuses to start with the words the README quotes", { skip: !NODE_20 && "no Node 20 here" }, () => {
    const quoted = /wrangler refuses to start \("([^"]+)"\)/.exec(readme)?.[1];
    assert.ok(quoted, "the README quotes wrangler's refusal");
    const refused = spawnSync(NODE_20!, [join(consumer, "node_modules/wrangler/bin/wrangler.js"), "--version"], { encoding: "utf8" });
    assert.notEqual(refused.status, 0);
    assert.ok(`${refused.stdout}${refused.stderr}`.includes(quoted), `wrangler on Node 20 says:\n${refused.stdout}${refused.stderr}`);
  });

  it("npm test type-checks the Worker and runs its vitest file", () => {
    assert.match(run("npm", ["test"], consumer), /4 passed/);
  });

  it("npm run dev answers the README's curl line offline from .dev.vars: the concierge hands it to bookings", async () => {
    const dev = await startWranglerDev({
      persistTo: join(scratch, "offline"),
      cwd: consumer,
      command: ["npm", "run", "dev", "--"],
      npmStartVars: false,
    });
    try {
      const line = /^curl -N http:\/\/127\.0\.0\.1:8787\/.*$/m.exec(readme)?.[0];
      assert.ok(line, "the README has a curl line for its Worker");
      const sent = spawnSync("sh", ["-c", line.replace("http://127.0.0.1:8787", dev.url)], { cwd: consumer, encoding: "utf8" });
      assert.equal(sent.status, 0, sent.stderr);
      const events = parseSse(sent.stdout);
      assert.deepEqual(events[0], { ...events[0], type: "run-start", agent: "concierge", demo: true });
      assert.deepEqual(
        events.filter((e) => e.type === "handoff").map((e) => [e.from, e.to]),
        [["concierge", "bookings"]],
      );
      assert.deepEqual(events.at(-1), { ...events.at(-1), type: "done", status: "completed", agent: "bookings" });
      const page = await fetch(dev.url);
      assert.equal(page.status, 200);
      assert.match(await page.text(), /<title>/);
    } finally {
      await dev.stop();
    }
  });
});

it("type-checks the package's public types beside the Worker under strict TypeScript", () => {
  copyFileSync(new URL("./fixtures/consumer-types/public-types.ts", import.meta.url), join(consumer, "test/public-types.ts"));
  run(process.execPath, [join(consumer, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], consumer);
});

it("stays within its bundle budget (bench/bundle-budget.json), built as npm run deploy ships it", () => {
  const { readme } = budgets();
  assert.deepEqual(overBudget("the README's Worker", measure(consumer), readme), []);
});

it("a Worker of the runtime and the SSE API alone bundles no MCP SDK, A2A or AG-UI, within its own budget", () => {
  const minimal = join(consumer, "minimal");
  writeMinimalWorker(minimal);
  const figures = measure(minimal);
  assert.deepEqual(uncalled(figures), []);
  assert.deepEqual(overBudget("the runtime-and-SSE Worker", figures, budgets().minimal), []);
});

it("bundles it for production with no Node built-in", () => {
  const output = run(process.execPath, [join(repo, "scripts/check-bundle.ts"), join(consumer, "wrangler.toml")], repo);
  assert.match(output, /bundle check: no Node built-ins/);
});

it("holds a conversation with a handoff under wrangler dev, and the next message goes to the agent that holds it", async () => {
  const fake = await startFakeOpenAI();
  const persistTo = join(scratch, "state");
  const dev = await startWranglerDev({
    persistTo,
    cwd: consumer,
    vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-e2e" },
  });
  try {
    await fetch(`${fake.url}/__scenarios`, {
      method: "POST",
      body: JSON.stringify({
        id: "pkgconsumer",
        answers: [
          { toolCalls: [{ id: "t1", name: "transfer_to_bookings", arguments: JSON.stringify({ reason: "a booking" }) }] },
          { toolCalls: [{ id: "c1", name: "check_availability", arguments: JSON.stringify({ date: "Friday" }) }] },
          { text: "Friday at 19:00 or 21:30?" },
          { text: "Booked for 19:00." },
        ],
      }),
    });
    const first = await chat(dev.url, "guest-1", "a table for two on Friday [pkgconsumer]");
    assert.deepEqual(
      first.filter((e) => e.type === "handoff").map((e) => [e.from, e.to]),
      [["concierge", "bookings"]],
    );
    const lookup = first.find((e) => e.type === "tool-result" && e.name === "check_availability");
    assert.deepEqual(lookup, { ...lookup, isError: false, result: { date: "Friday", free: ["19:00", "21:30"] } });
    assert.equal(first.at(-1)?.type, "done");
    const second = await chat(dev.url, "guest-1", "19:00 please [pkgconsumer]");
    assert.deepEqual(second[0], { ...second[0], type: "run-start", agent: "bookings" });
    assert.deepEqual(second.at(-1), { ...second.at(-1), type: "done", status: "completed", agent: "bookings", text: "Booked for 19:00." });
  } finally {
    await dev.stop();
    await fake.close();
  }
});

describe("the README's Worker, whole, under wrangler dev with Node compatibility off", () => {
  const SECRET = "consumer-hs256-secret-of-32-chars!!";
  const BUDGET = 1000;
  let fake: Awaited<ReturnType<typeof startFakeOpenAI>>;
  let mcp: McpTestServer;
  let dev: WranglerDev;
  let browser: Browser;

  before(async () => {
    fake = await startFakeOpenAI();
    mcp = await startMcpTestServer();
    dev = await startWranglerDev({
      persistTo: join(scratch, "whole"),
      cwd: consumer,
      vars: {
        OPENAI_BASE_URL: `${fake.url}/v1`,
        OPENAI_API_KEY: "sk-e2e",
        AUTH_JWT_SECRET: SECRET,
        USER_DAILY_TOKENS: String(BUDGET),
        RESERVATIONS_MCP_URL: `${mcp.url}/secured/reservations/mcp`,
        RESERVATIONS_MCP_TOKEN: MCP_TEST_TOKEN,
      },
      // With sign-in configured nothing is open without a credential.
      ready: "/v1/openapi.json",
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"] });
  });

  after(async () => {
    await browser?.close();
    await dev?.stop();
    await mcp?.close();
    await fake?.close();
  });

  const script = (id: string, answers: unknown[]) =>
    fetch(`${fake.url}/__scenarios`, { method: "POST", body: JSON.stringify({ id, answers }) });
  const signIn = (sub: string, name: string, claims: Record<string, unknown> = {}) =>
    new SignJWT({ sub, name, ...claims })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(SECRET));
  const call = async (path: string, token: string, init: { method?: string; body?: unknown } = {}) => {
    const res = await fetch(`${dev.url}${path}`, {
      method: init.method ?? "GET",
      headers: { authorization: `Bearer ${token}`, ...(init.body ? { "content-type": "application/json" } : {}) },
      ...(init.body ? { body: JSON.stringify(init.body) } : {}),
    });
    return { status: res.status, body: res.headers.get("content-type")?.includes("json") ? await res.json() : await res.text() };
  };
  const args = (value: unknown) => JSON.stringify(value);

  it("signs a user in, lists and searches their inbox, approves a cancellation, and refuses them once USER_DAILY_TOKENS is spent", async () => {
    const ada = await signIn("ada", "Ada");
    await script("pkgmine", [
      { toolCalls: [{ id: "t1", name: "transfer_to_bookings", arguments: args({ reason: "a booking" }) }] },
      { toolCalls: [{ id: "c1", name: "cancel_booking", arguments: args({ bookingId: "B7" }) }] },
      { text: "Booking B7 is cancelled." },
    ]);
    const { body: created } = await call("/v1/conversations", ada, { method: "POST" });
    // Named by the user first, so no title call is made (and the words searched are in the messages only).
    assert.equal((await call(`/v1/conversations/${created.id}`, ada, { method: "PATCH", body: { title: "Friday" } })).status, 200);
    const first = await chat(dev.url, created.id, "please cancel my anniversary booking B7 [pkgmine]", { authorization: `Bearer ${ada}` });
    assert.deepEqual(first.at(-1), { ...first.at(-1), type: "done", status: "awaiting_approval", agent: "bookings" });
    const approved = await call(`/v1/conversations/${created.id}/approvals`, ada, {
      method: "POST",
      body: { decisions: [{ toolCallId: "c1", approved: true }] },
    });
    assert.equal(approved.status, 200);
    assert.match(approved.body, /"isError":false/);
    assert.match(approved.body, /Booking B7 is cancelled\./);
    // The inbox lists it, and search finds it by a word only the user wrote (the agent answered last).
    const { status, body: inbox } = await call("/v1/conversations", ada);
    assert.equal(status, 200);
    assert.deepEqual(
      inbox.conversations.map((c: { id: string; holder: string }) => [c.id, c.holder]),
      [[created.id, "bookings"]],
    );
    const found = await call("/v1/conversations?q=annivers", ada);
    assert.deepEqual(
      found.body.conversations.map((c: { id: string }) => c.id),
      [created.id],
    );
    assert.deepEqual((await call("/v1/conversations?q=parcel", ada)).body.conversations, []);
    // Another user spends their day's tokens in one turn: their next message is refused, naming when it resets.
    const bea = await signIn("bea", "Bea");
    // The second answer is the title's, made after her first turn.
    await script("pkgspend", [{ text: "A long answer.", usage: { promptTokens: BUDGET, completionTokens: 10 } }, { text: "Greetings" }]);
    const { body: hers } = await call("/v1/conversations", bea, { method: "POST" });
    await chat(dev.url, hers.id, "hello [pkgspend]", { authorization: `Bearer ${bea}` });
    const refused = await call(`/v1/conversations/${hers.id}/messages`, bea, { method: "POST", body: { message: "again [pkgspend]" } });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.error.code, "user_budget_exhausted");
    assert.equal(refused.body.error.details.budget, BUDGET);
    assert.equal((await call("/v1/conversations?q=hello", ada)).body.conversations.length, 0, "Bea's conversation is not Ada's");
  });

  it("gives an agent an MCP server's tools with its secret header, redacted from what is stored and streamed", async () => {
    await script("pkgmcp", [
      { toolCalls: [{ id: "t1", name: "transfer_to_bookings", arguments: args({ reason: "a report" }) }] },
      { toolCalls: [{ id: "m1", name: "reservations_report", arguments: args({ region: "north" }) }] },
      { text: "12 parcels, 1 late." },
    ]);
    const dan = await signIn("dan", "Dan");
    const { body: created } = await call("/v1/conversations", dan, { method: "POST" });
    const events = await chat(dev.url, created.id, "a report for the north [pkgmcp]", { authorization: `Bearer ${dan}` });
    const result = events.find((e) => e.type === "tool-result" && e.name === "reservations_report");
    assert.deepEqual(result, { ...result, isError: false, result: { region: "north", parcels: 12, late: 1 } });
    const stored = JSON.stringify((await call(`/v1/conversations/${created.id}`, dan)).body);
    assert.ok(!JSON.stringify(events).includes(MCP_TEST_TOKEN) && !stored.includes(MCP_TEST_TOKEN), "the MCP token is never shown");
  });

  it("serves the package's chat page and operator desk: a signed-in user asks for a person, who answers from the desk", async () => {
    await script("pkgdesk", [
      { toolCalls: [{ id: "p1", name: "transfer_to_front_desk", arguments: args({ reason: "wants a person" }) }] },
      { text: "Wedding table" },
    ]);
    const cleo = await signIn("cleo", "Cleo");
    const guest = await browser.newContext({ viewport: { width: 1000, height: 760 } });
    await guest.addInitScript((token) => localStorage.setItem("handoff-account", JSON.stringify({ token })), cleo);
    const user = await guest.newPage();
    await user.goto(dev.url);
    await user.getByTestId("signed-in").filter({ hasText: "Cleo" }).waitFor();
    await user.getByTestId("active-agent").filter({ hasText: "concierge" }).waitFor();
    await user.getByLabel("Message").fill("our table for the wedding, can someone help [pkgdesk]");
    await user.getByRole("button", { name: "Send" }).click();
    await user.getByText("A person at front-desk will answer here.").waitFor();
    // Her sidebar lists it: titled by its first message, then by the title made after the turn.
    await user
      .getByTestId("inbox")
      .locator(".title")
      .filter({ hasText: /Wedding table|our table for the wedding/ })
      .waitFor();
    await user.screenshot({ path: join(repo, "test-artifacts/consumer-chat.png") });

    // The operator signs in with the operator role: the desk needs no key.
    const olga = await signIn("olga", "Olga", { roles: ["operator"] });
    const operator = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    await operator.addInitScript((token) => localStorage.setItem("handoff-account", JSON.stringify({ token })), olga);
    const desk = await operator.newPage();
    await desk.goto(`${dev.url}/operator.html`);
    const card = desk.getByTestId("waiting").locator("button").filter({ hasText: "our table for the wedding" });
    await card.waitFor();
    // A time today is its clock time; one on another day (a deadline past midnight) has its date first.
    const clock = String.raw`(\d{1,2}/\d{1,2}/\d{4} )?\d{1,2}:\d\d(\s?[AP]M)?`;
    assert.match((await card.getByTestId("desk-card-meta").textContent()) ?? "", new RegExp(`^Cleo · for front-desk · since ${clock}$`));
    assert.match((await card.getByTestId("desk-card-deadline").textContent()) ?? "", new RegExp(`^answer by ${clock}$`));
    await desk.screenshot({ path: join(repo, "test-artifacts/consumer-desk.png") });
    await card.click();
    await desk.getByLabel("Answer").fill("Hello Cleo, I can help with the wedding table.");
    await desk.getByRole("button", { name: "Send answer" }).click();
    await user.getByText("Hello Cleo, I can help with the wedding table.").waitFor();
    await guest.close();
    await operator.close();
  });
});
