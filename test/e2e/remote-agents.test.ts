/**
 * Remote agents under `wrangler dev`, Node compatibility off, two Workers in one `wrangler dev`:
 * the front Worker's triage hands a billing question to the billing Worker through a service
 * binding (its A2A interface, behind its API key) and a parcel question to a partner's agent served
 * by `@a2a-js/sdk/server` in this process; a follow-up reaches the partner's same context; a partner
 * that fails gives the conversation back to triage; and `wrangler dev` killed (SIGKILL) while the
 * partner streams leaves a conversation that answers its next message.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { startA2ARemote } from "../node/a2a-remote-server.ts";
import { chat, freePort, type SseEvent, startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const persistTo = mkdtempSync(join(tmpdir(), "handoff-remote-"));
const configs = ["test/e2e/fixtures/remote/front.toml", "test/e2e/fixtures/remote/billing.toml"];
let partner: Awaited<ReturnType<typeof startA2ARemote>>;
let dev: WranglerDev;
let port: number;

const start = () => startWranglerDev({ persistTo, port, config: configs, vars: { PARTNER_A2A_URL: partner.url } });

before(async () => {
  partner = await startA2ARemote();
  port = await freePort();
  dev = await start();
});

after(async () => {
  await dev?.stop();
  await partner?.close();
  rmSync(persistTo, { recursive: true, force: true });
});

const said = (events: SseEvent[]) => events.map((e) => (e.type === "text-delta" ? String(e.delta) : "")).join("");
const handoffs = (events: SseEvent[]) => events.filter((e) => e.type === "handoff").map((e) => `${e.kind}:${e.from}→${e.to}`);

it("hands a billing question to the billing Worker through its service binding, with its API key, which stays secret", async () => {
  const id = crypto.randomUUID();
  const events = await chat(dev.url, id, "I was charged twice for my order");
  assert.deepEqual(handoffs(events), ["transfer:triage→billing"], JSON.stringify(events));
  const done = events.at(-1)!;
  assert.equal(done.type, "done", JSON.stringify(done));
  assert.equal(done.agent, "billing");
  assert.ok(said(events).length > 0, "the billing Worker's answer streams as billing's text");
  const view = await (await fetch(`${dev.url}/v1/conversations/${id}`)).text();
  assert.ok(view.includes(said(events).slice(0, 20)), "the answer is billing's message in the history");
  assert.ok(!view.includes("41d7-secret") && !JSON.stringify(events).includes("41d7-secret"), "the key is redacted");
});

it("hands a parcel question to the partner's agent by URL, and the follow-up reaches the same remote context", async () => {
  const id = crypto.randomUUID();
  const first = await chat(dev.url, id, "where is my parcel?");
  assert.deepEqual(handoffs(first), ["transfer:triage→shipping"], JSON.stringify(first));
  assert.match(said(first), /^Billing here: you said/);
  const context = partner.executor.received.at(-1)!.contextId;
  const second = await chat(dev.url, id, "it was due on Monday");
  assert.equal(said(second), 'Billing here: you said "it was due on Monday".');
  assert.equal(partner.executor.received.at(-1)!.contextId, context);
});

it("gives the conversation back to triage when the partner fails, and triage answers in the same turn", async () => {
  const id = crypto.randomUUID();
  const events = await chat(dev.url, id, "where is my parcel? this will fail");
  assert.deepEqual(handoffs(events), ["transfer:triage→shipping", "hand-back:shipping→triage"], JSON.stringify(events));
  assert.equal(events.find((e) => e.type === "warning")?.code, "remote_failed");
  assert.equal(events.at(-1)!.type, "done");
  assert.equal(events.at(-1)!.agent, "triage");
});

it("survives wrangler dev killed while the partner streams: the next message is answered", async () => {
  const id = crypto.randomUUID();
  await chat(dev.url, id, "where is my parcel?");
  const cut = fetch(`${dev.url}/v1/conversations/${id}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: "please hang on" }),
  }).then(
    (r) => r.text().catch(() => ""),
    () => "",
  );
  const deadline = Date.now() + 10_000;
  while (!partner.executor.received.some((r) => r.text === "please hang on") && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  await dev.stop("SIGKILL");
  await cut;
  dev = await start();
  const after = await chat(dev.url, id, "any news?");
  assert.equal(after.at(-1)!.type, "done", JSON.stringify(after));
  assert.equal(said(after), 'Billing here: you said "any news?".');
  const view = (await (await fetch(`${dev.url}/v1/conversations/${id}`)).json()) as { messages: Array<{ role: string; content: string }> };
  // The message the crash cut off is kept once, and so is the one after.
  assert.equal(view.messages.filter((m) => m.role === "user" && m.content === "please hang on").length, 1);
  assert.equal(view.messages.filter((m) => m.role === "user" && m.content === "any news?").length, 1);
});
