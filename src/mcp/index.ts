/**
 * MCP servers for agents, through the official MCP TypeScript client: `new McpConnections({ env })`
 * is the `McpPort` that `runTurn` takes as `mcp`. The Cloudflare entry wires it for you.
 */
export {
  type CachedToolList,
  DEFAULT_MCP_CACHE_TTL_MS,
  DEFAULT_MCP_TIMEOUT_MS,
  IDEMPOTENCY_META_KEY,
  knownToolList,
  McpConnections,
  type McpConnectionsOptions,
  MemoryToolListCache,
  type ToolListCache,
} from "./mcp-connections.ts";
// Every type of the run loop, as `handoff-runtime` exports them: the types this entry's signatures use among them.
export type * from "../runtime/index.ts";
