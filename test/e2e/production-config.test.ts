/**
 * End to end against the real `wrangler dev` and the production wrangler.toml (no nodejs_compat):
 * the offline demo model, and the `openai` client talking to a fake provider over HTTP.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { startFakeOpenAI, type FakeOpenAI } from "../node/fake-openai-server.ts";
import { chat, startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const persistTo = mkdtempSync(join(tmpdir(), "handoff-e2e-"));
let fake: FakeOpenAI;
let demo: WranglerDev;
let provider: WranglerDev;

before(async () => {
  fake = await startFakeOpenAI();
  [demo, provider] = await Promise.all([
    startWranglerDev({ persistTo: join(persistTo, "demo") }),
    startWranglerDev({ persistTo: join(persistTo, "provider"), vars: { OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: "sk-e2e" } }),
  ]);
});

after(async () => {
  await Promise.all([demo?.stop(), provider?.stop()]);
  await fake?.close();
  rmSync(persistTo, { recursive: true, force: true });
});

describe("wrangler dev with the production configuration", () => {
  it("never allows anonymous use, the development sign-in or the offline model from wrangler.toml: only `npm start`'s command line does", () => {
    assert.doesNotMatch(readFileSync("wrangler.toml", "utf8"), /ALLOW_ANONYMOUS|DEV_SIGN_IN|OFFLINE_MODEL/);
    assert.match(JSON.parse(readFileSync("package.json", "utf8")).scripts.start, /--var ALLOW_ANONYMOUS:true --var DEV_SIGN_IN:true/);
  });

  it("answers with the offline demo model: triage hands a double charge to billing", async () => {
    const events = await chat(demo.url, "e2e-demo", "I was charged twice for order A1001");
    assert.equal(events[0]?.type, "run-start");
    assert.equal(events[0]?.demo, true);
    const handoff = events.find((e) => e.type === "handoff");
    assert.deepEqual([handoff?.from, handoff?.to, handoff?.reason], ["triage", "billing", "double charge"]);
    assert.ok(events.some((e) => e.type === "tool-call" && e.name === "lookup_order"));
    assert.equal(events.at(-1)?.type, "done");
    const state = (await (await fetch(`${demo.url}/v1/conversations/e2e-demo`)).json()) as { activeAgent: string; handoffCount: number };
    assert.deepEqual([state.activeAgent, state.handoffCount], ["billing", 1]);
  });

  it("talks to an OpenAI-compatible server through the openai package and keeps the active agent", async () => {
    const id = "scne2eprovider";
    await fetch(`${fake.url}/__scenarios`, {
      method: "POST",
      body: JSON.stringify({
        id,
        answers: [
          { toolCalls: [{ id: "c1", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "a charge" }) }] },
          { toolCalls: [{ id: "c2", name: "lookup_order", arguments: JSON.stringify({ orderId: "A1001" }) }] },
          { text: "Charged twice." },
          { text: "Still billing." },
        ],
      }),
    });
    const first = await chat(provider.url, "e2e-provider", `Was I charged twice? [${id}]`);
    assert.deepEqual(
      first.map((e) => e.id),
      first.map((_, i) => first[0]!.id + i),
      "event ids increase by one",
    );
    assert.equal((first.find((e) => e.type === "tool-result" && e.name === "lookup_order")?.result as { charges?: number })?.charges, 2);
    assert.equal(first.at(-1)?.type, "done");
    const second = await chat(provider.url, "e2e-provider", "thanks");
    assert.equal(second[0]?.agent, "billing");
    assert.ok(second[0]!.id > first.at(-1)!.id, "ids keep increasing across turns");
    const sent = (await (await fetch(`${fake.url}/__scenarios/${id}`)).json()) as {
      requests: Array<{ messages: Array<{ role: string; content: string }> }>;
    };
    assert.match(sent.requests[3]!.messages[0]!.content, /^You are the billing specialist/);
  });
});
