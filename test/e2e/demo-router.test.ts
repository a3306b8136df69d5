/**
 * `npm start`'s router (DEMO_ROUTER=on, no provider): triage's routing starts with a lexical router
 * trained on the example network's own examples, under `wrangler dev` with Node compatibility off.
 * A message it is sure of is handed on with no model call (the handoff says so); one it is not
 * sure of goes to the demo model, which routes it by its keywords as before.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { chat, startWranglerDev, type WranglerDev } from "./wrangler-dev.ts";

const persistTo = mkdtempSync(join(tmpdir(), "handoff-demo-router-"));
let dev: WranglerDev;

before(async () => {
  dev = await startWranglerDev({ persistTo, vars: { DEMO_ROUTER: "on" } });
});

after(async () => {
  await dev?.stop();
  rmSync(persistTo, { recursive: true, force: true });
});

it("hands a message the router is sure of on with no model call, and leaves the rest to the demo model", async () => {
  const sure = await chat(dev.url, crypto.randomUUID(), "I was charged twice for order A1001");
  const routed = sure.find((e) => e.type === "handoff");
  assert.deepEqual([routed?.from, routed?.to, (routed?.router as { name?: string } | undefined)?.name], ["triage", "billing", "examples"]);
  assert.ok(Number((routed?.router as { confidence: number }).confidence) >= 0.9, JSON.stringify(routed));
  const unsure = await chat(dev.url, crypto.randomUUID(), "Where is order A1002?");
  const byModel = unsure.find((e) => e.type === "handoff");
  assert.equal(byModel?.to, "shipping", JSON.stringify(unsure));
  assert.equal(byModel?.router, undefined, "the demo model made this one");
});
