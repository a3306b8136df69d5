/**
 * Every documented variable works in a Worker made with `createHandoffWorker`, whether or not its
 * network reads the environment: the default model, the budgets, compaction and the approvals'
 * deadline apply beneath the network's own options (an option the network sets wins).
 */
import { describe, expect, it } from "vitest";
import { networkWithEnvironment } from "../../src/cloudflare/index.ts";
import { Agent, Network } from "../../src/runtime/index.ts";

const env = {
  OPENAI_MODEL: "env-model",
  TURN_BUDGET: JSON.stringify({ modelCalls: 3 }),
  CONVERSATION_BUDGET: JSON.stringify({ inputTokens: 9000 }),
  CONTEXT_BUDGET: "8000",
  COMPACTION_KEEP_TURNS: "6",
  APPROVAL_EXPIRES_IN: "30m",
};

describe("the environment beneath a network's own options", () => {
  it("applies to a network that reads none of it", () => {
    const triage = new Agent({ name: "triage", instructions: "Route." });
    const network = networkWithEnvironment(new Network(triage, { defaultModel: "network-model" }), { ...env, OPENAI_MODEL: undefined });
    expect(network.options).toMatchObject({
      defaultModel: "network-model",
      budgets: { perTurn: { modelCalls: 3 }, perConversation: { inputTokens: 9000 } },
      compaction: { contextBudget: 8000, keepTurns: 6 },
      approvalExpiresIn: "30m",
    });
    expect(network.modelFor(triage)).toBe("network-model");
  });

  it("gives the network's own options the last word, field by field, and keeps agents linked later", () => {
    const billing = new Agent({ name: "billing", instructions: "Bill.", model: "billing-model" });
    const triage = new Agent({ name: "triage", instructions: "Route." });
    const late = new Agent({ name: "late", instructions: "Late." });
    const own = new Network(triage, {
      defaultModel: "own-model",
      agents: [billing],
      budgets: { perTurn: { toolCalls: 5 } },
      compaction: { keepTurns: 2 },
      approvalExpiresIn: "1h",
    }).register(late);
    const network = networkWithEnvironment(own, env);
    expect(network.options).toMatchObject({
      defaultModel: "own-model",
      budgets: { perTurn: { modelCalls: 3, toolCalls: 5 }, perConversation: { inputTokens: 9000 } },
      compaction: { contextBudget: 8000, keepTurns: 2 },
      approvalExpiresIn: "1h",
    });
    expect([...network.agents.keys()].sort()).toEqual(["billing", "late", "triage"]);
    expect(network.modelFor(billing)).toBe("billing-model");
  });

  it("gives a network without a default model the environment's, and returns the same network when the environment adds nothing", () => {
    const solo = new Agent({ name: "solo", instructions: "Alone.", model: "solo-model" });
    const plain = new Network(solo, { compaction: { keepTurns: 4 } });
    expect(networkWithEnvironment(plain, {})).toBe(plain);
    const helper = new Agent({ name: "helper", instructions: "Help." });
    const withHelper = new Network(new Agent({ name: "lead", instructions: "Lead.", model: "lead-model", handoffs: [helper] }), {
      defaultModel: "x",
    });
    expect(networkWithEnvironment(withHelper, { OPENAI_MODEL: "env-model" }).modelFor(helper)).toBe("x");
  });
});
