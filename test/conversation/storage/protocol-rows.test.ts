/**
 * What protocols keep in a conversation (protocol-rows.ts): each protocol's rows apart from every other's, by turn and
 * key, as storage holds them (a fresh store reads the same), through a replace, a removal and an erase. Schema 19 moved
 * A2A's push configs there and gave an outbox message's destination the headers it is sent with, losing nothing.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ConversationStore } from "../../../src/conversation/storage/conversation-store.ts";
import { migrate } from "../../../src/conversation/storage/schema.ts";

describe("a protocol's rows in a conversation", () => {
  it("are its own: by turn and key, read back by a fresh store, replaced, removed and erased", async () => {
    await runInDurableObject(env.CONVERSATIONS.getByName(`rows-${crypto.randomUUID()}`), async (_instance, state) => {
      const store = new ConversationStore(state.storage);
      const a2a = store.protocolRows.of("a2a");
      const other = store.protocolRows.of("other");
      const fresh = (protocol: string, turn: number) => new ConversationStore(state.storage).protocolRows.of(protocol).list(turn);
      expect(a2a.list(3)).toEqual([]);
      a2a.set(3, "p2", { url: "https://b.example" });
      a2a.set(3, "p1", { url: "https://a.example" });
      other.set(3, "p1", { mine: true });
      expect(a2a.list(3)).toEqual([
        { key: "p1", value: { url: "https://a.example" } },
        { key: "p2", value: { url: "https://b.example" } },
      ]);
      expect(other.list(3)).toEqual([{ key: "p1", value: { mine: true } }]);
      expect(a2a.list(4)).toEqual([]);
      expect(fresh("a2a", 3)).toHaveLength(2);
      a2a.set(3, "p1", { url: "https://c.example" });
      expect(a2a.get(3, "p1")).toEqual({ url: "https://c.example" });
      expect(a2a.remove(3, "p1")).toBe(true);
      expect(a2a.remove(3, "p1")).toBe(false);
      expect(a2a.get(3, "p1")).toBeUndefined();
      expect(other.get(3, "p1")).toEqual({ mine: true });
      expect(fresh("a2a", 3)).toEqual([{ key: "p2", value: { url: "https://b.example" } }]);
      await store.erase();
      expect(a2a.list(3)).toEqual([]);
      expect(other.get(3, "p1")).toBeUndefined();
    });
  });
});

describe("schema 19", () => {
  it("moves schema 18's push configs to A2A's rows, and an outbox message's A2A fields to the headers they are sent as", async () => {
    await runInDurableObject(env.CONVERSATIONS.getByName(`rows-${crypto.randomUUID()}`), async (_instance, state) => {
      await state.storage.deleteAll();
      const sql = state.storage.sql;
      migrate(sql, 18);
      const config = { id: "p1", url: "https://hooks.example/a2a", token: "tok", authentication: { scheme: "Bearer", credentials: "c" } };
      sql.exec(`INSERT INTO push_configs (turn, id, data) VALUES (2, 'p1', ?)`, JSON.stringify(config));
      const { id: _, ...target } = config;
      sql.exec(`INSERT INTO outbox (id, due_at, attempt, body, target) VALUES ('m1', 1, 0, '{}', ?)`, JSON.stringify(target));
      sql.exec(`INSERT INTO outbox (id, due_at, attempt, body, target) VALUES ('m2', 1, 0, '{}', '{"url":"https://bare.example"}')`);
      sql.exec(`INSERT INTO outbox (id, due_at, attempt, body, target) VALUES ('m3', 1, 0, '{"to":"app"}', NULL)`);

      const store = new ConversationStore(state.storage);
      expect(store.protocolRows.of("a2a").list(2)).toEqual([{ key: "p1", value: config }]);
      expect(store.outbox.due(2).map((m) => m.target ?? null)).toEqual([
        { url: "https://hooks.example/a2a", headers: { "x-a2a-notification-token": "tok", authorization: "Bearer c" } },
        { url: "https://bare.example", headers: {} },
        null,
      ]);
      expect(sql.exec(`SELECT name FROM sqlite_master WHERE name = 'push_configs'`).toArray()).toEqual([]);
    });
  });
});
