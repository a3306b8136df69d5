/**
 * A network of one model agent, triage, and a remote A2A agent, billing (served by the SDK's server
 * in Node: test/node/a2a-remote-server.ts), reached with a bearer token read from the environment.
 */
import { createHandoffWorker, type WorkerVars } from "../../../src/cloudflare/index.ts";
import { Agent, handoff, Network, remoteAgent } from "../../../src/runtime/index.ts";

interface Env extends WorkerVars {
  REMOTE_A2A_URL: string;
  BILLING_AGENT_TOKEN: string;
}

const worker = createHandoffWorker<Env>({
  network: (env) => {
    const billing = remoteAgent({
      name: "billing",
      description: "Billing questions, answered by the billing team's agent.",
      url: `${env.REMOTE_A2A_URL}/.well-known/agent-card.json`,
      headers: (vars) => ({ authorization: `Bearer ${String(vars.BILLING_AGENT_TOKEN)}` }),
      timeoutMs: 2_000,
    });
    const triage = new Agent({ name: "triage", description: "Routes.", instructions: "You route.", handoffs: [handoff(billing)] });
    return new Network(triage, { defaultModel: "gpt-4o-mini", transferScope: "declared" });
  },
});

export const Conversation = worker.Conversation;
export default worker.app;
