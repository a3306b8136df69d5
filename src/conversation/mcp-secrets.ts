import { secretForms } from "../config.ts";
import { type McpHostEnv, mcpHeaders } from "../runtime/ports/mcp.ts";
import type { Network } from "../runtime/network.ts";

/**
 * Every value the network's MCP servers are sent as a header (and a bearer token without its
 * scheme): secrets by their values, wherever they came from, so none reaches an event, a stored
 * row, a log line or a trace.
 */
export function mcpHeaderValues(network: Network, env: object): string[] {
  const values: string[] = [];
  for (const agent of network.agents.values()) {
    for (const server of agent.mcpServers) {
      for (const value of Object.values(mcpHeaders(server, env as McpHostEnv))) {
        values.push(...secretForms(value));
      }
    }
  }
  return values;
}
