/**
 * MCP servers for agents, through the official MCP TypeScript client. A Worker reaches them when
 * it is given `mcp: mcpClient()` (`createHandoffWorker`); elsewhere `new McpConnections({ env })`
 * is the `McpPort` that `runTurn` takes as `mcp`. Only a Worker that imports this entry bundles the MCP SDK.
 */
import { McpConnections, type McpConnectionsOptions } from "./mcp-connections.ts";
import type { McpClient } from "./tool-lists.ts";

export {
  DEFAULT_MCP_CACHE_TTL_MS,
  DEFAULT_MCP_TIMEOUT_MS,
  IDEMPOTENCY_META_KEY,
  McpConnections,
  type McpConnectionsOptions,
} from "./mcp-connections.ts";
export {
  type CachedToolList,
  knownToolList,
  type McpClient,
  type McpHost,
  MemoryToolListCache,
  type ToolListCache,
} from "./tool-lists.ts";

/**
 * The MCP client a Worker gives `createHandoffWorker` as `mcp`: each conversation reaches its
 * agents' MCP servers through it, its tool lists kept in the conversation's storage. `now` is for tests.
 */
export function mcpClient(options: Pick<McpConnectionsOptions, "now"> = {}): McpClient {
  return (host) => new McpConnections({ ...host, ...options });
}
// Every type of the run loop, as `handoff-runtime` exports them: the types this entry's signatures use among them.
export type * from "../runtime/index.ts";
