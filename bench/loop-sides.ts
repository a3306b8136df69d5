/**
 * One side of the loop-overhead benchmark, in its own process: `runtime` or `sdk`, then the
 * number of turns. Prints one JSON line of figures.
 */
import { PerformanceObserver } from "node:perf_hooks";
import { z } from "zod";
import * as sdk from "@openai/agents";
import { Agent, Network, newConversation, type ModelEvent, type ModelRequest, runTurn, tool } from "../src/runtime/index.ts";

const [side, turnsArg] = process.argv.slice(2);
const turns = Number(turnsArg);
const gc = (globalThis as { gc?: () => void }).gc!;
const ORDER = { orderId: "A1001", item: "Mechanical keyboard", amountUsd: 129, charges: 2 };

/** This runtime: triage → billing; billing calls lookup_order twice in one step, then answers. */
function runtimeTurn(): () => Promise<void> {
  const lookup = tool({
    name: "lookup_order",
    description: "Fetch an order.",
    parameters: z.object({ orderId: z.string() }),
    execute: () => ORDER,
  });
  const billing = new Agent({ name: "billing", instructions: "You are billing.", tools: [lookup] });
  const shipping = new Agent({ name: "shipping", instructions: "You are shipping.", tools: [lookup] });
  const triage = new Agent({ name: "triage", instructions: "You route.", handoffs: [billing, shipping] });
  billing.addHandoff(triage);
  shipping.addHandoff(triage);
  const network = new Network(triage, { defaultModel: "scripted" });
  const model = {
    async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
      const last = request.messages.at(-1)!;
      if (request.agent === "triage") {
        yield { type: "tool-call", call: { id: "t", name: "transfer_to_billing", arguments: '{"reason":"double charge"}' } };
      } else if (last.role === "tool" && last.name === "lookup_order") {
        yield { type: "text-delta", delta: "Refunded." };
      } else {
        yield { type: "tool-call", call: { id: "l1", name: "lookup_order", arguments: '{"orderId":"A1001"}' } };
        yield { type: "tool-call", call: { id: "l2", name: "lookup_order", arguments: '{"orderId":"A1002"}' } };
      }
      yield { type: "finish", finishReason: "stop", usage: { inputTokens: 1, outputTokens: 1 } };
    },
  };
  return async () => {
    for await (const event of runTurn({
      conversationId: "b",
      network,
      model,
      // RECORD_CALLS=1: a store that keeps the calls written ahead of each step's tools, as the Durable Object's does.
      store: { commitStep: () => {}, ...(process.env.RECORD_CALLS ? { recordCalls: () => {} } : {}) },
      conversation: newConversation("triage"),
      input: { kind: "message", text: "charged twice" },
    })) {
      if (event.type === "error") throw new Error(event.message);
    }
  };
}

/** The OpenAI Agents SDK: the same network and script through its Runner and an equivalent scripted Model. */
function sdkTurn(): () => Promise<void> {
  const lookup = sdk.tool({
    name: "lookup_order",
    description: "Fetch an order.",
    parameters: z.object({ orderId: z.string() }),
    execute: async () => ORDER,
  });
  const response = (output: unknown[]) => ({ usage: new sdk.Usage(), output: output as sdk.ModelResponse["output"] });
  const call = (callId: string, name: string, args: string) => ({
    type: "function_call",
    callId,
    name,
    arguments: args,
    status: "completed",
    id: callId,
  });
  const model: sdk.Model = {
    async getResponse(request) {
      const input = Array.isArray(request.input) ? request.input : [];
      const last = input.at(-1) as { type?: string; callId?: string } | undefined;
      if (request.systemInstructions === "You route.") return response([call("t", "transfer_to_billing", '{"reason":"double charge"}')]);
      if (last?.type === "function_call_result" && last.callId === "l2") {
        return response([
          { type: "message", role: "assistant", status: "completed", id: "m", content: [{ type: "output_text", text: "Refunded." }] },
        ]);
      }
      return response([call("l1", "lookup_order", '{"orderId":"A1001"}'), call("l2", "lookup_order", '{"orderId":"A1002"}')]);
    },
    async *getStreamedResponse() {
      throw new Error("not used");
    },
  };
  const billing = new sdk.Agent({ name: "billing", instructions: "You are billing.", tools: [lookup], model });
  const shipping = new sdk.Agent({ name: "shipping", instructions: "You are shipping.", tools: [lookup], model });
  const triage = sdk.Agent.create({ name: "triage", instructions: "You route.", handoffs: [billing, shipping], model });
  billing.handoffs = [triage];
  shipping.handoffs = [triage];
  const runner = new sdk.Runner({ tracingDisabled: true });
  return async () => {
    const result = await runner.run(triage, "charged twice");
    if (result.finalOutput !== "Refunded.") throw new Error(`unexpected output ${String(result.finalOutput)}`);
  };
}

sdk.setTracingDisabled(true);
const turn = side === "sdk" ? sdkTurn() : runtimeTurn();
for (let i = 0; i < 200; i++) await turn();
// CPU over all measured turns; allocation over small batches that fit in the young generation,
// keeping only batches no GC ran in, so the heap's growth is what the turns allocated.
let gcs = 0;
const observer = new PerformanceObserver((list) => (gcs += list.getEntries().length));
observer.observe({ entryTypes: ["gc"] });
const BATCH = 25;
const allocations: number[] = [];
let gcDuringRun = 0;
let cpuUs = 0;
for (let done = 0; done < turns; done += BATCH) {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 0));
  const gcsBefore = gcs;
  const heapBefore = process.memoryUsage().heapUsed;
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < BATCH; i++) await turn();
  const cpu = process.cpuUsage(cpuBefore);
  const heapAfter = process.memoryUsage().heapUsed;
  await new Promise((resolve) => setTimeout(resolve, 0));
  cpuUs += cpu.user + cpu.system;
  if (gcs === gcsBefore) allocations.push((heapAfter - heapBefore) / BATCH);
  else gcDuringRun++;
}
observer.disconnect();
allocations.sort((a, b) => a - b);
const bytesPerTurn = allocations[Math.floor(allocations.length / 2)] ?? Number.NaN;
console.log(JSON.stringify({ side, cpuUsPerTurn: cpuUs / turns, bytesPerTurn, gcDuringRun }));
