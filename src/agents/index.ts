/**
 * @module
 * The agent network this Worker serves, with the run options its configuration sets.
 */
import type { Config } from "../config.ts";
import type { Network } from "../runtime/index.ts";
import { createSupportNetwork } from "./network.ts";

export { createSupportNetwork, DEFAULT_MODEL } from "./network.ts";

/** The network as configured: budgets and compaction come from the Worker's environment. */
export function configuredNetwork(config: Config): Network {
  return createSupportNetwork(config.OPENAI_MODEL, {
    ...(config.TURN_BUDGET || config.CONVERSATION_BUDGET
      ? { budgets: { ...(config.TURN_BUDGET ? { perTurn: config.TURN_BUDGET } : {}), ...(config.CONVERSATION_BUDGET ? { perConversation: config.CONVERSATION_BUDGET } : {}) } }
      : {}),
    compaction: { keepTurns: config.COMPACTION_KEEP_TURNS, ...(config.CONTEXT_BUDGET ? { contextBudget: config.CONTEXT_BUDGET } : {}) },
  });
}
