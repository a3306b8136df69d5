import fc from "fast-check";
import { z } from "zod";
import {
  Agent,
  handoff,
  Network,
  type NetworkOptions,
  type RouteDecision,
  type Router,
  type RouteRequest,
  type Tool,
  tool,
} from "../../src/runtime/index.ts";
import type { TransferStyle } from "../../src/runtime/handoff/transfer-tools.ts";

/** The tools random agents draw from: valid, failing, schema-checked, approval-gated. */
export const TOOLS: Record<string, Tool> = {
  echo: tool({ name: "echo", description: "Echo.", parameters: z.object({ text: z.string() }), execute: ({ text }) => text }),
  explode: tool({
    name: "explode",
    description: "Throws.",
    parameters: z.object({}),
    execute: () => {
      throw new Error("boom");
    },
  }),
  strict: tool({ name: "strict", description: "Needs a number.", parameters: z.object({ n: z.number() }), execute: ({ n }) => n * 2 }),
  gated: tool({
    name: "gated",
    description: "Needs approval.",
    parameters: z.object({}),
    needsApproval: true,
    execute: () => "approved work",
  }),
  /** Approval decided by a function of the arguments: `n` over 2 waits for a person. */
  costly: tool({
    name: "costly",
    description: "Needs approval when n > 2.",
    parameters: z.object({ n: z.number() }),
    needsApproval: ({ n }) => n > 2,
    execute: ({ n }) => n,
  }),
};

/** Arguments each tool succeeds with: a call that runs and answers without error. */
export const GOOD_ARGS: Record<string, string> = {
  echo: '{"text":"hi"}',
  explode: "{}",
  strict: '{"n":3}',
  gated: "{}",
  costly: '{"n":5}',
};

export const AGENTS = ["alpha", "beta", "gamma"] as const;

export interface NetworkSpec {
  /** Tree form: alpha is the parent of beta and gamma, with optional restrictions. */
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
  /** A router on the network (for its entry agent) or on one agent, or none. */
  router: RouterSpec | undefined;
}

/** What a random router answers, in order, one answer each time it is asked (then abstains). */
export type RouterAnswer = { agent: string; confidence: number } | "abstain" | "throw";

export interface RouterSpec {
  on: "network" | 0 | 1 | 2;
  threshold: number;
  answers: RouterAnswer[];
}

const routerAnswer: fc.Arbitrary<RouterAnswer> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      agent: fc.constantFrom(...AGENTS, "nobody"),
      // Sure answers made common, so routed handoffs (and the limits refusing them) are too.
      confidence: fc.oneof(fc.constantFrom(0.99, 1), fc.double({ min: 0, max: 1, noNaN: true })),
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom("abstain" as const, "throw" as const) },
);

const routerSpec: fc.Arbitrary<RouterSpec> = fc.record({
  on: fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom("network" as const, 0 as const) },
    { weight: 1, arbitrary: fc.constantFrom(1 as const, 2 as const) },
  ),
  // Thresholds from always sure to never (0 takes every named target, 1 only a certain one), and at a common answer.
  threshold: fc.oneof(fc.constantFrom(0, 0.5, 0.99, 1), fc.double({ min: 0, max: 1, noNaN: true })),
  answers: fc.array(routerAnswer, { minLength: 1, maxLength: 6 }),
});

/** A router that plays its answers in order and keeps what it was asked and what it answered. */
export class ScriptedRouter implements Router {
  readonly asked: Array<{ request: RouteRequest; answer: RouterAnswer }> = [];
  constructor(readonly spec: RouterSpec) {}

  route(request: RouteRequest): RouteDecision | null {
    const answer = this.spec.answers[this.asked.length] ?? "abstain";
    this.asked.push({ request, answer });
    if (answer === "throw") throw new Error("router down");
    return answer === "abstain" ? null : answer;
  }

  /** Whether the runtime must take this answer as a handoff: sure enough, and a target it was offered. */
  takes(answer: RouterAnswer, request: RouteRequest): answer is { agent: string; confidence: number } {
    return typeof answer === "object" && answer.confidence >= this.spec.threshold && request.targets.includes(answer.agent);
  }
}

export const networkSpec: fc.Arbitrary<NetworkSpec> = fc.record({
  tree: fc.option(fc.record({ disallowParent: fc.boolean(), disallowPeers: fc.boolean() }), { nil: undefined }),
  // Every agent can echo and has calls that wait for a person; failing and strict tools vary.
  tools: fc.array(
    fc.subarray(["explode", "strict"]).map((more) => ["echo", "gated", "costly", ...more]),
    { minLength: 3, maxLength: 3 },
  ),
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
  router: fc.option(routerSpec, { nil: undefined, freq: 8 }),
});

export function buildNetwork(spec: NetworkSpec, router?: ScriptedRouter): Network {
  const routerOptions = router && spec.router ? { router, threshold: spec.router.threshold, name: "scripted" } : undefined;
  const routerOn = (i: number) => (routerOptions && spec.router?.on === i ? { router: routerOptions } : {});
  const children = AGENTS.slice(1).map(
    (name, i) =>
      new Agent({
        name,
        instructions: `You are ${name}.`,
        tools: spec.tools[i + 1]!.map((t) => TOOLS[t]!),
        disallowTransferToParent: spec.tree?.disallowParent ?? false,
        disallowTransferToPeers: spec.tree?.disallowPeers ?? false,
        ...routerOn(i + 1),
      }),
  );
  const root = new Agent({
    name: AGENTS[0],
    instructions: `You are ${AGENTS[0]}.`,
    tools: spec.tools[0]!.map((t) => TOOLS[t]!),
    ...(spec.tree ? { subAgents: children } : {}),
    ...routerOn(0),
  });
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
    ...(routerOptions && spec.router?.on === "network" ? { router: routerOptions } : {}),
  };
  return new Network(agents[0]!, options);
}

/** One call a random model makes. */
export type CallSpec =
  | { kind: "tool"; name: keyof typeof TOOLS; args: string }
  | { kind: "unknown-tool" }
  | { kind: "transfer"; target: string };

const toolName = fc.constantFrom(...(Object.keys(TOOLS) as Array<keyof typeof TOOLS>));

export const callSpec: fc.Arbitrary<CallSpec> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("tool" as const),
      name: toolName,
      args: fc.constantFrom('{"text":"hi"}', '{"n":3}', '{"n":1}', '{"n":"three"}', "{not json", "{}", ""),
    }),
  },
  // A call with arguments its tool accepts, so steps where a tool succeeds are common.
  { weight: 2, arbitrary: toolName.map((name) => ({ kind: "tool" as const, name, args: GOOD_ARGS[name]! })) },
  { weight: 1, arbitrary: fc.constant({ kind: "unknown-tool" as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("transfer" as const), target: fc.constantFrom(...AGENTS, "nobody") }) },
);

/**
 * One model step: text, calls, or a fault before the first byte, after some text, or after a
 * tool call was streamed (the call must never run).
 */
export type StepSpec = { text: string; calls: CallSpec[] } | { fault: "before" | "after" | "after-call" };

const transferTo = fc.constantFrom(...AGENTS).map((target) => ({ kind: "transfer" as const, target }));

export const stepSpec: fc.Arbitrary<StepSpec> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ text: fc.constantFrom("", "ok", "thinking about it"), calls: fc.array(callSpec, { maxLength: 4 }) }),
  },
  // The cases that matter most, made common: a transfer beside a tool that succeeds, two transfers.
  {
    weight: 4,
    arbitrary: transferTo.map((transfer) => ({
      text: "",
      calls: [{ kind: "tool" as const, name: "echo", args: GOOD_ARGS.echo! }, transfer],
    })),
  },
  { weight: 2, arbitrary: fc.tuple(transferTo, transferTo).map(([a, b]) => ({ text: "", calls: [a, b] })) },
  // Two calls that wait for a person (one by a flag, one by a function), maybe beside a transfer.
  {
    weight: 4,
    arbitrary: fc.option(transferTo, { nil: undefined }).map((transfer) => ({
      text: "",
      calls: [
        { kind: "tool" as const, name: "gated", args: "{}" },
        { kind: "tool" as const, name: "costly", args: '{"n":5}' },
        ...(transfer ? [transfer] : []),
      ],
    })),
  },
  { weight: 2, arbitrary: fc.record({ fault: fc.constantFrom("before" as const, "after" as const) }) },
  { weight: 2, arbitrary: fc.constant({ fault: "after-call" as const }) },
);

/** What the client does between turns; `approve` holds a decision per pending call, in order. */
export type Operation = { kind: "message" } | { kind: "decide"; approve: boolean[] } | { kind: "decide-unknown" };

export const operations: fc.Arbitrary<Operation[]> = fc.array(
  fc.oneof(
    { weight: 4, arbitrary: fc.constant({ kind: "message" as const }) },
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant("decide" as const), approve: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }) }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: "decide-unknown" as const }) },
  ),
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
