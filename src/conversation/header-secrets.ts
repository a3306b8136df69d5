import { secretForms } from "../config.ts";
import { headersFor, type HostEnv } from "../runtime/ports/host-env.ts";
import type { Network } from "../runtime/network.ts";

/**
 * Every value the network's MCP servers and remote agents are sent as a header (and a bearer token without its
 * scheme): secrets by their values, wherever they came from, so none reaches an event, a stored
 * row, a log line or a trace.
 */
export function headerValues(network: Network, env: object): string[] {
  const values: string[] = [];
  for (const agent of network.agents.values()) {
    const sets = agent.mcpServers.map((server) => headersFor(server, env as HostEnv));
    if (agent.remote) sets.push(headersFor(agent.remote, env as HostEnv));
    for (const value of sets.flatMap((headers) => Object.values(headers))) values.push(...secretForms(value));
  }
  return values;
}
