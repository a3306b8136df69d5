import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Agent, Network, RuntimeError, tool } from "../../src/runtime/index.ts";
import { supportLike } from "../support/networks.ts";
import { ofType, playTurn } from "../support/run.ts";

describe("tool context", () => {
  it("gives every call a stable idempotency key: the conversation and the call id", async () => {
    const keys: string[] = [];
    const charge = tool({
      name: "charge",
      description: "Charges.",
      parameters: z.object({}),
      execute: (_args, ctx) => keys.push(ctx.idempotencyKey),
    });
    const network = new Network(new Agent({ name: "solo", instructions: "x", tools: [charge] }), { defaultModel: "m" });
    await playTurn(network, "go", [
      {
        toolCalls: [
          { id: "call-1", name: "charge" },
          { id: "call-2", name: "charge" },
        ],
      },
      { text: "ok" },
    ]);
    expect(keys).toEqual(["c1:call-1", "c1:call-2"]);
  });
});

describe("tool failures", () => {
  it("are error results the model sees, and the loop continues", async () => {
    let executed = 0;
    const strict = tool({
      name: "strict",
      description: "Needs a number.",
      parameters: z.object({ n: z.number() }),
      execute: ({ n }) => {
        executed++;
        return n * 2;
      },
    });
    const network = new Network(new Agent({ name: "solo", instructions: "x", tools: [strict] }), { defaultModel: "m" });
    const { events, model } = await playTurn(network, "go", [
      {
        toolCalls: [
          { id: "a", name: "nope" },
          { id: "b", name: "strict", rawArgs: "{not json" },
          { id: "c", name: "strict", args: { n: "seven" } },
          { id: "d", name: "strict", args: { n: 4 } },
        ],
      },
      { text: "ok" },
    ]);
    const results = ofType(events, "tool-result");
    expect(results.map((r) => r.isError)).toEqual([true, true, true, false]);
    expect(results[0]!.result).toBe("Unknown tool 'nope'. Available tools: strict.");
    expect(results[1]!.result).toMatch(/^Arguments are not valid JSON/);
    expect(results[2]!.result).toMatch(/^Invalid arguments for 'strict':[\s\S]*n/);
    expect(results[3]!.result).toBe(8);
    expect(executed).toBe(1);
    expect(model.requests[1]!.messages.filter((m) => m.role === "tool").map((m) => m.content)).toContain("8");
    expect(ofType(events, "tool-call")[1]!.args).toBe("{not json");
  });

  it("end the turn with too_many_tool_errors after three steps of only errors", async () => {
    const boom = { toolCalls: [{ name: "explode" }] };
    const { events } = await playTurn(supportLike(), "x", [boom, boom, boom]);
    expect(events.at(-1)).toMatchObject({ type: "error", code: "too_many_tool_errors" });
    expect(ofType(events, "tool-result").every((r) => r.isError && r.result === "Tool 'explode' failed: boom")).toBe(true);
  });

  it("do not count refused transfers, and a success resets the count", async () => {
    const boom = { toolCalls: [{ name: "explode" }] };
    const refused = { toolCalls: [{ name: "transfer_to_nowhere" }] };
    const fine = { toolCalls: [{ name: "echo", args: { text: "ok" } }] };
    const { events } = await playTurn(supportLike(), "x", [boom, boom, refused, refused, fine, boom, boom, { text: "survived" }]);
    expect(events.at(-1)).toMatchObject({ type: "done", text: "survived" });
  });

  it("match names the model pads with whitespace", async () => {
    const { events } = await playTurn(supportLike(), "x", [{ toolCalls: [{ name: " echo\n", args: { text: "t" } }] }, { text: "ok" }]);
    expect(ofType(events, "tool-result")[0]).toMatchObject({ name: "echo", isError: false });
  });
});

describe("maxSteps", () => {
  it("ends the turn with max_steps and leaves a valid history", async () => {
    const again = { toolCalls: [{ name: "echo", args: { text: "again" } }] };
    const { events, store } = await playTurn(supportLike(), "x", [again, again, again], { limits: { maxSteps: 3 } });
    expect(events.at(-1)).toMatchObject({ type: "error", code: "max_steps" });
    expect(store.history.at(-1)!.role).toBe("tool");
  });

  it("is fresh for each agent after an accepted transfer", async () => {
    const again = { toolCalls: [{ name: "echo", args: { text: "again" } }] };
    const { events } = await playTurn(
      supportLike(),
      "x",
      [again, { toolCalls: [{ name: "transfer_to_billing" }] }, again, { text: "billing finished" }],
      { limits: { maxSteps: 2 } },
    );
    expect(events.at(-1)).toMatchObject({ type: "done", agent: "billing", text: "billing finished" });
  });
});

describe("model failures", () => {
  it("end the turn with the error's code and commit nothing of the failed step", async () => {
    const { events, store } = await playTurn(supportLike(), "x", [
      { toolCalls: [{ id: "e", name: "echo", args: { text: "kept" } }] },
      { throws: new RuntimeError("model_rate_limited", "The model provider answered 429: slow down") },
    ]);
    expect(events.at(-1)).toEqual({ type: "error", code: "model_rate_limited", message: "The model provider answered 429: slow down" });
    expect(store.history.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  });
});
