/**
 * @module
 * The example network this repository's Worker serves, its tools, and the offline demo model that
 * knows its agents.
 */
export { DemoModel } from "./demo-model.ts";
export { createSupportNetwork, DEFAULT_MODEL, DEMO_TRACKING_SERVER, type SupportNetworkOptions } from "./network.ts";
export { serveTrackingMcp } from "./tracking-mcp.ts";
