import fc from "fast-check";
import { z } from "zod";
import { Agent, handoff, Network, type NetworkOptions, type Tool, tool, type TransferStyle } from "../../src/runtime/index.ts";

/** The tools random agents draw from: valid, failing, schema-checked, approval-gated. */
export const TOOLS: Record<string, Tool> = {
  echo: tool({ name: "echo", description: "Echo.", parameters: z.object({ text: z.string() }), execute: ({ text }) => text }),
  explode: tool({ name: "explode", description: "Throws.", parameters: z.object({}), execute: () => { throw new Error("boom"); } }),
  strict: tool({ name: "strict", description: "Needs a number.", parameters: z.object({ n: z.number() }), execute: ({ n }) => n * 2 }),
  gated: tool({ name: "gated", description: "Needs approval.", parameters: z.object({}), needsApproval: true, execute: () => "approved work" }),
};

export const AGENTS = ["alpha", "beta", "gamma"] as const;

export interface NetworkSpec {
  /** Tree form (seed 003): alpha is the parent of beta and gamma, with optional restrictions. */
  tree: { disallowParent: boolean; disallowPeers: boolean } | undefined;
  tools: Array<Array<keyof typeof TOOLS>>;
  edges: Array<[number, number, boolean]>;
  style: TransferStyle;
  scope: "network" | "declared";
  extraTransfers: "answer" | "drop";
  systemPrompt: "replace" | "append";
  allowRevisit: boolean;
  maxHandoffs: number | undefined;
  maxHandoffsPerTurn: number;
  maxSteps: number;
}

export const networkSpec: fc.Arbitrary<NetworkSpec> = fc.record({
  tree: fc.option(fc.record({ disallowParent: fc.boolean(), disallowPeers: fc.boolean() }), { nil: undefined }),
  tools: fc.array(fc.subarray(Object.keys(TOOLS) as Array<keyof typeof TOOLS>), { minLength: 3, maxLength: 3 }),
  // [from, to, enabled]: cycles, self-links (ignored) and disabled handoffs included.
  edges: fc.array(fc.tuple(fc.nat({ max: 2 }), fc.nat({ max: 2 }), fc.boolean()), { maxLength: 6 }),
  style: fc.constantFrom<TransferStyle>("per-target", "single", "named"),
  scope: fc.constantFrom("network" as const, "declared" as const),
  extraTransfers: fc.constantFrom("answer" as const, "drop" as const),
  systemPrompt: fc.constantFrom("replace" as const, "append" as const),
  allowRevisit: fc.boolean(),
  maxHandoffs: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
  maxHandoffsPerTurn: fc.integer({ min: 0, max: 3 }),
  maxSteps: fc.integer({ min: 1, max: 5 }),
});

export function buildNetwork(spec: NetworkSpec): Network {
  const children = AGENTS.slice(1).map(
    (name, i) =>
      new Agent({
        name,
        instructions: `You are ${name}.`,
        tools: spec.tools[i + 1]!.map((t) => TOOLS[t]!),
        disallowTransferToParent: spec.tree?.disallowParent ?? false,
        disallowTransferToPeers: spec.tree?.disallowPeers ?? false,
      }),
  );
  const root = new Agent({ name: AGENTS[0], instructions: `You are ${AGENTS[0]}.`, tools: spec.tools[0]!.map((t) => TOOLS[t]!), ...(spec.tree ? { subAgents: children } : {}) });
  const agents = [root, ...children];
  for (const [from, to, enabled] of spec.edges) {
    if (from !== to) agents[from]!.addHandoff(handoff(agents[to]!, { isEnabled: enabled }));
  }
  const options: NetworkOptions = {
    defaultModel: "m",
    register: agents.slice(1),
    toolStyle: spec.style,
    transferScope: spec.scope,
    extraTransfers: spec.extraTransfers,
    systemPrompt: spec.systemPrompt,
    allowRevisit: spec.allowRevisit,
    ...(spec.maxHandoffs === undefined ? {} : { maxHandoffs: spec.maxHandoffs }),
  };
  return new Network(agents[0]!, options);
}

/** One call a random model makes. */
export type CallSpec =
  | { kind: "tool"; name: keyof typeof TOOLS; args: string }
  | { kind: "unknown-tool" }
  | { kind: "transfer"; target: string };

export const callSpec: fc.Arbitrary<CallSpec> = fc.oneof(
  fc.record({ kind: fc.constant("tool" as const), name: fc.constantFrom(...(Object.keys(TOOLS) as Array<keyof typeof TOOLS>)), args: fc.constantFrom('{"text":"hi"}', '{"n":3}', '{"n":"three"}', "{not json", "{}", "") }),
  fc.constant({ kind: "unknown-tool" as const }),
  fc.record({ kind: fc.constant("transfer" as const), target: fc.constantFrom(...AGENTS, "nobody") }),
);

/** One model step: text, calls, or a fault before or after the first byte. */
export type StepSpec = { text: string; calls: CallSpec[] } | { fault: "before" | "after" };

export const stepSpec: fc.Arbitrary<StepSpec> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ text: fc.constantFrom("", "ok", "thinking about it"), calls: fc.array(callSpec, { maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ fault: fc.constantFrom("before" as const, "after" as const) }) },
);

/** What the client does between turns. */
export type Operation = { kind: "message" } | { kind: "decide"; approve: boolean } | { kind: "decide-unknown" };

export const operations: fc.Arbitrary<Operation[]> = fc.array(
  fc.oneof({ weight: 4, arbitrary: fc.constant({ kind: "message" as const }) }, { weight: 2, arbitrary: fc.record({ kind: fc.constant("decide" as const), approve: fc.boolean() }) }, { weight: 1, arbitrary: fc.constant({ kind: "decide-unknown" as const }) }),
  { minLength: 1, maxLength: 6 },
);

/** The arguments of a transfer call in the network's style. */
export function transferCall(network: Network, target: string): { name: string; arguments: string } {
  switch (network.options.toolStyle) {
    case "single":
      return { name: "transfer_to_agent", arguments: JSON.stringify({ agent_name: target }) };
    case "named":
      return { name: "handoff", arguments: JSON.stringify({ name: target, reason: "r" }) };
    default:
      return { name: network.transferToolName(target) ?? `transfer_to_${target}`, arguments: "{}" };
  }
}
