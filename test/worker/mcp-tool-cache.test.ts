/**
 * The conversation's MCP tool lists in its SQLite: a list kept survives the object (a new cache
 * over the same storage reads it back), and a list the server said changed is forgotten both in
 * memory and in storage, so the next turn, before or after a restart, lists the tools again.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { SqlToolListCache } from "../../src/conversation/storage/mcp-tool-cache.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";

const listed = {
  url: "https://mcp.test/tracking",
  tools: [{ name: "track_parcel", description: "Where a parcel is.", inputSchema: { type: "object" as const } }],
  listedAt: 1_700_000_000_000,
};

describe("the stored MCP tool lists", () => {
  it("are read back by a cache over the same storage, and a forgotten list is gone from both", async () => {
    await runInDurableObject(env.CONVERSATIONS.getByName(`mcp-cache-${crypto.randomUUID()}`), (_instance, state) => {
      new ConversationStore(state.storage);
      const cache = new SqlToolListCache(state.storage.sql);
      cache.set("tracking", listed);
      cache.set("billing", { ...listed, url: "https://mcp.test/billing" });
      expect(new SqlToolListCache(state.storage.sql).get("tracking")).toEqual(listed);

      cache.delete("tracking");
      expect(cache.get("tracking")).toBeUndefined();
      const restarted = new SqlToolListCache(state.storage.sql);
      expect(restarted.get("tracking")).toBeUndefined();
      expect(restarted.get("billing")).toMatchObject({ url: "https://mcp.test/billing" });
    });
  });
});
