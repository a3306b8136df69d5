/**
 * @module
 * This repository's Worker: the example support network, served the way a team's own Worker is,
 * through the package's entry points only (`handoff-runtime/cloudflare` and `handoff-runtime`).
 */
import { createSupportNetwork, DEMO_TRACKING_SERVER, DemoModel, serveTrackingMcp } from "./agents/index.ts";
import { a2a, agUi, createHandoffWorker, networkOptionsFromEnv, type WorkerVars } from "./cloudflare/index.ts";
import { mcpClient } from "./mcp/index.ts";
import type { Duration, Network, RouterOptions } from "./runtime/index.ts";
import { routerFromExamples, withRouter } from "./router/index.ts";

/**
 * The variables of this Worker: the package's, the demo model's pace (`npm start` sets 25 ms a
 * word) and router, and a tracking MCP server of your own in place of the demo's (its token a secret).
 */
type ExampleVars = WorkerVars & {
  DEMO_DELAY_MS?: string;
  /** `on` (as `npm start` sets it): offline, a router trained on the agents' examples routes before the demo model. */
  DEMO_ROUTER?: string;
  TRACKING_MCP_URL?: string;
  TRACKING_MCP_TOKEN?: string;
  /** How long the support desk has to answer (`30m`, `2h`) before triage takes the conversation back. */
  SUPPORT_DESK_ANSWER_WITHIN?: Duration;
};

const worker = createHandoffWorker<ExampleVars>({
  network: (env) => {
    const { defaultModel, ...options } = networkOptionsFromEnv(env);
    const tracking = env.TRACKING_MCP_URL
      ? {
          name: "tracking",
          url: env.TRACKING_MCP_URL,
          headers: (vars: ExampleVars): Record<string, string> =>
            vars.TRACKING_MCP_TOKEN ? { authorization: `Bearer ${vars.TRACKING_MCP_TOKEN}` } : {},
          needsApproval: ["cancel_shipment"],
        }
      : DEMO_TRACKING_SERVER;
    const network = createSupportNetwork(defaultModel, { ...options, tracking, supportDeskAnswerWithin: env.SUPPORT_DESK_ANSWER_WITHIN });
    // Offline under `npm start` (DEMO_ROUTER=on), triage's routing starts with a router trained on the agents' own examples;
    // the demo model decides what it is unsure of.
    const offline = !env.OPENAI_API_KEY && !env.OPENAI_BASE_URL;
    return offline && env.DEMO_ROUTER === "on" ? withRouter(network, demoRouter(network)) : network;
  },
  // With no provider configured, the offline demo model answers (`npm start`).
  offlineModel: (env) => new DemoModel({ delayMs: Math.min(2000, Number(env.DEMO_DELAY_MS) || 0) }),
  // The demo shows every way in: its tracking MCP server, A2A and AG-UI beside the chat API.
  mcp: mcpClient(),
  protocols: [a2a(), agUi()],
});

let trained: RouterOptions | undefined;
/** The demo's router, trained once per isolate on the example network's examples. */
function demoRouter(network: Network): RouterOptions {
  trained ??= routerFromExamples(network.agents.values(), { threshold: 0.9, name: "examples" });
  return trained;
}

// The demo's tracking MCP server, for any MCP client (the demo network calls it in-process).
worker.app.all("/mcp/tracking", (c) => serveTrackingMcp(c.req.raw));

export const Conversation = worker.Conversation;
export const OperatorDesk = worker.OperatorDesk;
export const Inbox = worker.Inbox;
export const UserMemory = worker.UserMemory;
export default worker.app;
