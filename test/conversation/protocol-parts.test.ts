/**
 * A protocol's part in each conversation (src/conversation/protocol-parts.ts), with a protocol defined here and named
 * nowhere in src/: its rows are its own, its operations are answered through the object's one entry, and what it says
 * of each turn's move goes out through the outbox, redacted by the configured secrets' values, with its headers.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createSupportNetwork } from "../../src/agents/network.ts";
import { readConfig } from "../../src/config.ts";
import { assembleConversation } from "../../src/conversation/conversation-parts.ts";
import type { ConversationPart } from "../../src/conversation/protocol-parts.ts";
import type { WorkerVars } from "../../src/worker-vars.ts";
import type { StoredEvent } from "../../src/wire/sse.ts";

/** A protocol of this test's own: it keeps where to send, and sends each turn's outcome there. */
const watcher: ConversationPart = {
  name: "watcher",
  call: (op, { rows, turn }) => {
    const url = (op as { watch?: unknown }).watch;
    if (typeof url !== "string") return { ok: false, error: { code: "invalid_request", message: "Say what to watch: `watch`." } };
    rows.set(turn, "hook", url);
    return { ok: true, value: { watching: url, turn } };
  },
  turnMoved: ({ turn, outcome, holder }, { rows, conversationId }) => {
    const url = rows.get(turn, "hook");
    const said = `${conversationId} ${outcome} by ${holder} (key ${env.OPENAI_API_KEY})`;
    return typeof url === "string" ? [{ body: { turn, outcome, said }, to: { url, headers: { "x-watcher": "1" } } }] : [];
  },
};

describe("a protocol's part in a conversation", () => {
  it("keeps its rows, answers its operations, and sends what it says of each turn's move through the outbox, redacted", async () => {
    const id = `parts-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      const vars = env as unknown as WorkerVars;
      const { store, protocols, events } = assembleConversation(state, vars, readConfig(vars), {
        network: createSupportNetwork(),
        parts: [watcher],
      });
      store.create(id, "triage", "grant");
      const turn = store.beginTurn("hello");
      expect(protocols.call("watcher", { watch: "https://watcher.example/hook" })).toEqual({
        ok: true,
        value: { watching: "https://watcher.example/hook", turn: 1 },
      });
      expect(protocols.call("watcher", { nothing: true })).toMatchObject({ ok: false, error: { code: "invalid_request" } });
      // A protocol the Worker was not given keeps nothing here.
      expect(protocols.call("a2a", { kind: "list", turn: 1 })).toMatchObject({ ok: false, error: { code: "invalid_configuration" } });
      store.commitStep({ messages: [{ role: "user", content: "hello" }] }, [
        { id: 1, type: "run-start", conversationId: turn.conversationId, agent: "triage", model: "m" },
      ]);
      const done: StoredEvent = { id: 2, type: "done", status: "completed", text: "", agent: "triage", handoffs: [], handoffCount: 0 };
      store.endTurn({ status: "completed" }, [done]);
      await events.settled();
      const sent = state.storage.sql.exec<{ body: string; target: string }>(`SELECT body, target FROM outbox`).toArray();
      expect(sent.map((row) => ({ body: JSON.parse(row.body), to: JSON.parse(row.target) }))).toEqual([
        {
          body: { turn: 1, outcome: "completed", said: `${id} completed by triage (key [redacted])` },
          to: { url: "https://watcher.example/hook", headers: { "x-watcher": "1" } },
        },
      ]);
      // Not delivered: watcher.example is nowhere.
      state.storage.sql.exec(`DELETE FROM outbox`);
    });
  });
});
