import type { CachedToolList, ToolListCache } from "../../mcp/tool-lists.ts";
import * as z from "zod";
import { exactly } from "../../runtime/schema/exactly.ts";
import type { McpToolInfo } from "../../runtime/ports/mcp-port.ts";
import { readRow } from "./row-schemas.ts";

/** A server's tools as listed. */
const ToolListSchema = exactly<McpToolInfo[]>()(
  z.lazy(() =>
    z.array(
      z.object({
        name: z.string(),
        description: z.string().optional(),
        inputSchema: z.record(z.string(), z.unknown()),
        outputSchema: z.record(z.string(), z.unknown()).optional(),
      }),
    ),
  ),
);

/**
 * MCP tool lists in the conversation's SQLite (one row per server), so a Durable Object that was
 * evicted lists nothing again until the TTL runs out or the server says its list changed.
 */
export class SqlToolListCache implements ToolListCache {
  readonly #sql: SqlStorage;
  readonly #memory = new Map<string, CachedToolList | null>();

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  get(server: string): CachedToolList | undefined {
    if (!this.#memory.has(server)) {
      const row = this.#sql
        .exec<{ url: string; tools: string; listed_at: number }>(`SELECT url, tools, listed_at FROM mcp_tools WHERE server = ?`, server)
        .toArray()[0];
      this.#memory.set(
        server,
        row ? { url: row.url, tools: readRow(ToolListSchema, row.tools, "MCP server's tool list"), listedAt: row.listed_at } : null,
      );
    }
    return this.#memory.get(server) ?? undefined;
  }

  set(server: string, entry: CachedToolList): void {
    this.#sql.exec(
      `INSERT OR REPLACE INTO mcp_tools (server, url, tools, listed_at) VALUES (?, ?, ?, ?)`,
      server,
      entry.url,
      JSON.stringify(entry.tools),
      entry.listedAt,
    );
    this.#memory.set(server, entry);
  }

  delete(server: string): void {
    this.#sql.exec(`DELETE FROM mcp_tools WHERE server = ?`, server);
    this.#memory.set(server, null);
  }
}
