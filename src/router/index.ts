/**
 * @module
 * Routers that hand a conversation on before any model call: the lexical router (train it on
 * labelled examples or eval cases, bundle its JSON, load it once) and `lexicalRouter`, which makes
 * one into the `router` option of an agent or a network.
 */
import type { Agent } from "../runtime/agent.ts";
import { Network } from "../runtime/network.ts";
import type { RouterOptions } from "../runtime/ports/router-port.ts";
import { LexicalRouter, type LexicalRouterModel, type RouterExample, trainLexicalRouter } from "./lexical-router.ts";

export {
  LexicalRouter,
  type LexicalRoute,
  type LexicalRouterModel,
  type RouterExample,
  type TrainOptions,
  trainLexicalRouter,
} from "./lexical-router.ts";
// The runtime's types these signatures name (Agent, Message, RouterOptions …), as the evals entry has them.
export type * from "../runtime/index.ts";

/**
 * A trained lexical router as an agent's or a network's `router`: it names the agent its top label
 * is, when that agent is one the holder may hand to now, and abstains otherwise.
 */
export function lexicalRouter(
  model: LexicalRouterModel | LexicalRouter,
  options: { threshold?: number; name?: string } = {},
): RouterOptions {
  const router = model instanceof LexicalRouter ? model : new LexicalRouter(model);
  return {
    router: {
      route: ({ message, targets }) => {
        const { label, confidence } = router.route(message);
        return targets.includes(label) ? { agent: label, confidence } : null;
      },
    },
    threshold: options.threshold ?? 0.9,
    name: options.name ?? "lexical",
  };
}

/** Examples from the agents' own `examples` (each labelled with its agent's name), to train a router on. */
export function examplesOf(agents: Iterable<Agent>): RouterExample[] {
  return [...agents].flatMap((agent) => agent.examples.map((text) => ({ text, label: agent.name })));
}

/** A lexical router trained on the agents' own examples, for a network whose agents have them. */
export function routerFromExamples(agents: Iterable<Agent>, options: { threshold?: number; name?: string } = {}): RouterOptions {
  return lexicalRouter(trainLexicalRouter(examplesOf(agents)), options);
}

/** The same network, its entry agent given the router. */
export function withRouter(network: Network, router: RouterOptions): Network {
  return new Network(network.entry, { ...network.options, defaultModel: network.defaultModel, router });
}
