/**
 * What a remote handoff adds: the same turn (triage hands "billing" the conversation, billing
 * answers in two chunks) with billing a local agent (a scripted model) and with billing a remote
 * A2A agent served by the official SDK's server on loopback, reached through `A2ARemotes`.
 * Interleaved, side by side in one run; prints the median and p95 of whole-turn time and of the
 * time to billing's first text, and the ratio. `npm run bench:remote-handoff [-- turns]`
 */
import { A2ARemotes } from "../src/a2a/client/a2a-remote.ts";
import { Agent, handoff, Network, newConversation, remoteAgent, runTurn } from "../src/runtime/index.ts";
import { MemoryStore, ScriptedModel } from "../src/testing/index.ts";
import { startA2ARemote } from "../test/node/a2a-remote-server.ts";

const TURNS = Number(process.argv[2] ?? 200);
const remote = await startA2ARemote();

function network(billing: Agent): Network {
  const triage = new Agent({ name: "triage", description: "Routes.", instructions: "You route.", handoffs: [handoff(billing)] });
  return new Network(triage, { defaultModel: "m", transferScope: "declared" });
}
const local = network(new Agent({ name: "billing", description: "Billing.", instructions: "You do billing." }));
const remoteNet = network(remoteAgent({ name: "billing", description: "Billing.", url: `${remote.url}/.well-known/agent-card.json` }));
const port = new A2ARemotes({});
const transfer = { toolCalls: [{ name: "transfer_to_billing", args: { reason: "billing" } }] };

async function turn(net: Network, steps: ConstructorParameters<typeof ScriptedModel>[0]): Promise<{ total: number; first: number }> {
  const store = new MemoryStore("triage");
  const started = performance.now();
  let first = 0;
  let seenHandoff = false;
  for await (const event of runTurn({
    conversationId: "bench",
    network: net,
    model: new ScriptedModel(steps),
    store,
    remote: port,
    conversation: newConversation("triage"),
    input: { kind: "message", text: "I was charged twice" },
  })) {
    if (event.type === "handoff") seenHandoff = true;
    if (event.type === "text-delta" && seenHandoff && !first) first = performance.now() - started;
    if (event.type === "error") throw new Error(event.message);
  }
  return { total: performance.now() - started, first };
}

const sides = { local: [] as Array<{ total: number; first: number }>, remote: [] as Array<{ total: number; first: number }> };
for (let i = 0; i < 20; i++) await turn(remoteNet, [transfer]);
for (let i = 0; i < TURNS; i++) {
  sides.local.push(await turn(local, [transfer, { text: "Billing here: " }]));
  sides.remote.push(await turn(remoteNet, [transfer]));
}
await remote.close();

const pct = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;
const row = (name: string, pick: (s: { total: number; first: number }) => number) => {
  const [l, r] = [sides.local.map(pick), sides.remote.map(pick)];
  const f = (v: number) => `${v.toFixed(2)} ms`;
  console.log(
    `| ${name} | ${f(pct(l, 50))} / ${f(pct(l, 95))} | ${f(pct(r, 50))} / ${f(pct(r, 95))} | +${f(pct(r, 50) - pct(l, 50))} | ${(pct(r, 50) / pct(l, 50)).toFixed(2)}× |`,
  );
};
console.log(`${TURNS} turns each, interleaved (remote: the SDK's server on loopback, Node ${process.version})`);
console.log("| | local p50 / p95 | remote p50 / p95 | added at p50 | ratio |\n|---|---|---|---|---|");
row("whole turn", (s) => s.total);
row("billing's first text", (s) => s.first);
