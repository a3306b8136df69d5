/**
 * @module
 * The agent network this Worker serves, with the run options its configuration sets.
 */
import { type Config, runSettings } from "../config.ts";
import type { Network } from "../runtime/index.ts";
import { createSupportNetwork } from "./network.ts";

export { DemoModel } from "./demo-model.ts";
export { createSupportNetwork, DEFAULT_MODEL } from "./network.ts";

/** The network as configured: its model, budgets and compaction come from the Worker's environment. */
export function configuredNetwork(config: Config): Network {
  const { defaultModel, ...options } = runSettings(config).network;
  return createSupportNetwork(defaultModel, options);
}
