/**
 * What a Worker knows of MCP without the MCP client: tool lists kept between turns, the lists this
 * isolate has seen (for `GET /v1/agents`), and the `McpClient` a Worker is given to reach servers
 * (`mcpClient()` from `handoff-runtime/mcp`). A Worker that is given none bundles no MCP SDK.
 */
import type { McpPort, McpServerConfig, McpToolInfo } from "../runtime/ports/mcp-port.ts";

/** A server's listed tools, as kept between turns. */
export interface CachedToolList {
  url: string;
  tools: McpToolInfo[];
  listedAt: number;
}

/** Where tool lists are kept between turns: a Durable Object's SQLite, or memory. */
export interface ToolListCache {
  get(server: string): CachedToolList | undefined;
  set(server: string, entry: CachedToolList): void;
  delete(server: string): void;
}

/** A cache in memory, for hosts without storage (and tests). */
export class MemoryToolListCache implements ToolListCache {
  readonly #entries = new Map<string, CachedToolList>();
  get(server: string): CachedToolList | undefined {
    return this.#entries.get(server);
  }
  set(server: string, entry: CachedToolList): void {
    this.#entries.set(server, entry);
  }
  delete(server: string): void {
    this.#entries.delete(server);
  }
}

/**
 * The latest tool list of each server (by name and URL) that this isolate has seen, from any
 * conversation: what `GET /v1/agents` shows without listing anything itself.
 */
const seenToolLists = new Map<string, CachedToolList>();

/** The tool list this isolate last saw for a server, if any. */
export function knownToolList(server: Pick<McpServerConfig, "name" | "url">): CachedToolList | undefined {
  return seenToolLists.get(`${server.name} ${server.url}`);
}

/** Keeps a server's latest list for `knownToolList`. */
export function rememberToolList(server: Pick<McpServerConfig, "name" | "url">, list: CachedToolList): void {
  seenToolLists.set(`${server.name} ${server.url}`, list);
}

/** What a conversation gives its MCP client: the environment `headers` functions read, its tool-list cache, its log. */
export interface McpHost {
  env: object;
  cache: ToolListCache;
  /** Notes on what happened (a fallback, a lost session); never a header value. */
  log: (message: string) => void;
}

/** Makes a conversation's MCP port: `mcpClient()` from `handoff-runtime/mcp`, given to `createHandoffWorker` as `mcp`. */
export type McpClient = (host: McpHost) => McpPort;

const NO_CLIENT =
  'this Worker has no MCP client: give createHandoffWorker `mcp: mcpClient()` (import { mcpClient } from "handoff-runtime/mcp")';

/** The port of a Worker given no MCP client: a server an agent names is a warning saying what to add, never a crash. */
export const noMcpClient: McpPort = {
  listTools: () => Promise.reject(new Error(NO_CLIENT)),
  callTool: () => Promise.reject(new Error(NO_CLIENT)),
  checkArguments: () => NO_CLIENT,
};
