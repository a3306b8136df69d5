/**
 * @module
 * This repository's Worker: the example support network, served the way a team's own Worker is,
 * through the package's entry points only (`handoff-runtime/cloudflare` and `handoff-runtime`).
 */
import { createSupportNetwork, DemoModel } from "./agents/index.ts";
import { createHandoffWorker, networkOptionsFromEnv, type WorkerVars } from "./cloudflare/index.ts";

/** The variables of this Worker: the package's, and the demo model's pace (`npm start` sets 25 ms a word). */
type ExampleVars = WorkerVars & { DEMO_DELAY_MS?: string };

const worker = createHandoffWorker<ExampleVars>({
  network: (env) => {
    const { defaultModel, ...options } = networkOptionsFromEnv(env);
    return createSupportNetwork(defaultModel, options);
  },
  // With no provider configured, the offline demo model answers (`npm start`).
  offlineModel: (env) => new DemoModel({ delayMs: Math.min(2000, Number(env.DEMO_DELAY_MS) || 0) }),
});

export const Conversation = worker.Conversation;
export default worker.app;
