/**
 * What a conversation tells its owner's inbox: its entry (the last thing said, not a tool's output
 * or a note; its status) and the words its owner's search finds (newest first, each once, secrets
 * redacted before the split, at most SEARCH_WORDS_CHARS of them).
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { InboxLink, SEARCH_WORDS_CHARS, searchWords } from "../../src/conversation/inbox-link.ts";
import { ConversationStore } from "../../src/conversation/storage/conversation-store.ts";
import type { Message } from "../../src/runtime/messages.ts";
import { Redactor } from "../../src/runtime/redact.ts";

const none = new Redactor([]);

describe("a conversation's inbox entry", () => {
  it("shows the last thing the user or an agent said, not a tool's output, a note or a call with no text; its status is its turn's", async () => {
    const id = `entry-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const store = new ConversationStore(state.storage);
      const link = new InboxLink(store, none, env);
      expect(link.entry(store.create(id, "triage", "grant", "ada"))).toMatchObject({ status: "idle", snippet: "", holder: "triage" });
      store.beginTurn("where is A1002?");
      const turn: Message[] = [
        { role: "user", content: "where is A1002?" },
        {
          role: "assistant",
          agent: "triage",
          content: "Let me get shipping.",
          toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: "{}" }],
        },
        { role: "tool", toolCallId: "t", name: "transfer_to_shipping", content: '{"transferred":"shipping"}', isError: false },
        { role: "assistant", agent: "shipping", content: null, toolCalls: [{ id: "l", name: "lookup_order", arguments: "{}" }] },
        { role: "tool", toolCallId: "l", name: "lookup_order", content: '{"status":"at the depot"}', isError: false },
        { role: "system", agent: "shipping", content: "A note for the agent." },
      ];
      store.commitStep({ messages: turn }, []);
      store.endTurn({ status: "completed" }, []);
      expect(link.entry(store.state()!)).toMatchObject({ status: "completed", snippet: "Let me get shipping.", title: "where is A1002?" });
      // A retry rewinds the turn before it begins the next: in between, the list shows it idle, not "rewound".
      store.rewindLastTurn();
      expect(store.turns.record(store.state()!.turn)?.status).toBe("rewound");
      expect(link.entry(store.state()!)).toMatchObject({ status: "idle", snippet: "" });
    });
  });

  it("says a conversation a person handed back is no longer waiting for a person", async () => {
    const id = `entry-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const store = new ConversationStore(state.storage);
      const link = new InboxLink(store, none, env);
      store.create(id, "triage", "grant", "ada");
      store.beginTurn("a person, please");
      const holding = { ...store.state()!.holding, activeAgent: "support-desk" };
      store.commitStep(
        {
          messages: [{ role: "user", content: "a person, please" }],
          holding,
          handoff: { kind: "transfer", from: "triage", to: "support-desk", toolCallId: "t", stepIndex: 0 },
        },
        [],
      );
      store.endTurn({ status: "awaiting_human" }, []);
      expect(link.entry(store.state()!)).toMatchObject({ status: "awaiting_human", holder: "support-desk" });
      const back = { kind: "hand-back" as const, from: "support-desk", to: "triage", note: "sorted" };
      store.commitStep({ messages: [], holding: { ...holding, activeAgent: "triage" }, handoff: back }, []);
      expect(link.entry(store.state()!)).toMatchObject({ status: "completed", holder: "triage" });
    });
  });

  it("shows the user's message when it is the last thing said (a person has not answered yet)", async () => {
    const id = `entry-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => {
      const store = new ConversationStore(state.storage);
      store.create(id, "support-desk", "grant", "ada");
      store.beginTurn("is anyone there?");
      store.commitStep({ messages: [{ role: "user", content: "is anyone there?" }] }, []);
      expect(new InboxLink(store, none, env).entry(store.state()!)).toMatchObject({ snippet: "is anyone there?", status: "running" });
    });
  });

  it("leaves an inbox alone when the Worker binds none: deleting a signed-in user's conversation still succeeds", async () => {
    const id = `entry-${crypto.randomUUID()}`;
    await runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
      const store = new ConversationStore(state.storage);
      const owned = store.create(id, "triage", "grant", "ada");
      await expect(new InboxLink(store, none, {}).forget(owned)).resolves.toBeUndefined();
    });
  });
});

describe("a conversation's search words", () => {
  it("are the user's and agents' words, newest message first, each once, lowercased; tools and notes stay out", () => {
    const messages: Message[] = [
      { role: "user", content: "Parcel LATE, parcel lost" },
      { role: "tool", toolCallId: "x", name: "lookup_order", content: "depot warehouse", isError: false },
      { role: "system", agent: "shipping", content: "internal note" },
      { role: "assistant", agent: "shipping", content: "Found your parcel: Überweisung 42" },
    ];
    expect(searchWords(messages, none)).toBe("found your parcel überweisung 42 late lost");
  });

  it("are none for messages of no letters or digits", () => {
    expect(searchWords([{ role: "user", content: "?! …" }], none)).toBe("");
  });

  it("are redacted before they are split, so a secret is not found by its pieces", () => {
    const secret = "sk-live-4f9a-secret";
    const words = searchWords([{ role: "user", content: `my key is ${secret} oops` }], new Redactor([secret]));
    expect(words).not.toMatch(/4f9a|live/);
    expect(words.split(" ")).toEqual(expect.arrayContaining(["my", "key", "oops"]));
  });

  it.each([
    // Each word and its space: 8 characters, so exactly SEARCH_WORDS_CHARS / 8 fit.
    [7, SEARCH_WORDS_CHARS / 8],
    // 9 each: the last that fits leaves 8 characters, one short of the next word.
    [8, Math.floor(SEARCH_WORDS_CHARS / 9)],
  ])("keep as many %i-letter words as SEARCH_WORDS_CHARS holds, the newest first", (letters, fit) => {
    const word = (i: number) => `w${String(i).padStart(letters - 1, "0")}`;
    const older = { role: "user" as const, content: Array.from({ length: fit + 10 }, (_, i) => word(i)).join(" ") };
    // Said fifty times, counted once.
    const newest = { role: "user" as const, content: Array.from({ length: 50 }, () => word(fit + 100)).join(" ") };
    const words = searchWords([older, newest], none).split(" ");
    expect(words).toHaveLength(fit);
    expect(words[0]).toBe(word(fit + 100));
    expect(words.at(-1)).toBe(word(fit - 2));
  });
});
