/**
 * A user's inbox object on its own (the Durable Object each conversation tells its entry to): pages
 * exact at their edges, ties of one millisecond told apart by id, an older cursor of a time alone,
 * what a write costs when nothing changed, a conversation shown running only until it is next told,
 * searches of words that are no words, and an inbox started again over its own tables.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Inbox, type InboxEntry, inboxOf } from "../../src/inbox/inbox.ts";

const anInbox = () => env.INBOXES!.getByName(`inbox-test-${crypto.randomUUID()}`);
const entry = (id: string, updatedAt: number, more: Partial<InboxEntry> = {}): InboxEntry => ({
  id,
  title: `title ${id}`,
  createdAt: 1,
  updatedAt,
  holder: "triage",
  status: "completed",
  snippet: `snippet ${id}`,
  archived: false,
  ...more,
});

describe("an inbox object", () => {
  it("pages exactly: a full last page has no next cursor, one more entry makes one, and entries of one millisecond are told apart by id", async () => {
    const inbox = anInbox();
    for (const e of [entry("a", 10), entry("b", 20), entry("c", 20), entry("d", 30)]) await inbox.record(e);
    const first = await inbox.list({ limit: 2 });
    expect([first.conversations.map((e) => e.id), first.next]).toEqual([["d", "c"], "20.c"]);
    const second = await inbox.list({ limit: 2, before: first.next! });
    expect([second.conversations.map((e) => e.id), second.next]).toEqual([["b", "a"], null]);
    const all = await inbox.list({ limit: 4 });
    expect([all.conversations.map((e) => e.id), all.next]).toEqual([["d", "c", "b", "a"], null]);
  });

  it("pages a search as it pages the list: exact at the edge, ties told apart by id", async () => {
    const inbox = anInbox();
    for (const e of [entry("a", 10), entry("b", 20), entry("c", 20), entry("x", 30)])
      await inbox.record(e, 0, e.id === "x" ? "other" : "parcel");
    const first = await inbox.list({ limit: 2, q: "parcel" });
    expect([first.conversations.map((e) => e.id), first.next]).toEqual([["c", "b"], "20.b"]);
    const second = await inbox.list({ limit: 2, q: "parcel", before: first.next! });
    expect([second.conversations.map((e) => e.id), second.next]).toEqual([["a"], null]);
    expect((await inbox.list({ limit: 3, q: "parcel" })).next).toBeNull();
  });

  it("finds an entry told no words by its title and snippet only", async () => {
    const inbox = anInbox();
    await inbox.record(entry("a", 10, { title: "Lost card", snippet: "it was here yesterday" }));
    await inbox.record(entry("b", 11, { title: "Refund", snippet: "please" }));
    expect((await inbox.list({ limit: 5, q: "here" })).conversations.map((e) => e.id)).toEqual(["a"]);
    expect((await inbox.list({ limit: 5, q: "refund" })).conversations.map((e) => e.id)).toEqual(["b"]);
  });

  it("takes a running mark for a conversation it has not been told of yet", async () => {
    const inbox = anInbox();
    await expect(inbox.markRunning("not-told-yet", 5)).resolves.toBeUndefined();
    expect((await inbox.list({ limit: 5 })).conversations).toEqual([]);
  });

  it("reads an older cursor of a time alone as everything before that millisecond", async () => {
    const inbox = anInbox();
    for (const e of [entry("a", 10), entry("b", 20), entry("c", 20)]) await inbox.record(e);
    expect((await inbox.list({ limit: 5, before: "20" })).conversations.map((e) => e.id)).toEqual(["c", "b", "a"]);
    expect((await inbox.list({ limit: 5, before: "19" })).conversations.map((e) => e.id)).toEqual(["a"]);
  });

  it("keeps archived entries apart, and searches only the words asked for", async () => {
    const inbox = anInbox();
    await inbox.record(entry("a", 10), 0, "parcel depot");
    await inbox.record(entry("b", 20, { archived: true }), 0, "parcel refund");
    expect((await inbox.list({ limit: 5, q: "parc" })).conversations.map((e) => e.id)).toEqual(["a"]);
    expect((await inbox.list({ limit: 5, q: "parcel", archived: true })).conversations.map((e) => e.id)).toEqual(["b"]);
    expect((await inbox.list({ limit: 5, q: "refund" })).conversations).toEqual([]);
    // Punctuation alone is no word: nothing matches, and nothing breaks.
    expect((await inbox.list({ limit: 5, q: "?!" })).conversations).toEqual([]);
  });

  it("finds an entry by its new words once they change, and no longer by the old ones", async () => {
    const inbox = anInbox();
    await inbox.record(entry("a", 10), 0, "parcel");
    expect((await inbox.list({ limit: 5, q: "parcel" })).conversations.map((e) => e.id)).toEqual(["a"]);
    await inbox.record(entry("a", 11), 0, "invoice");
    expect((await inbox.list({ limit: 5, q: "parcel" })).conversations).toEqual([]);
    expect((await inbox.list({ limit: 5, q: "invoice" })).conversations.map((e) => e.id)).toEqual(["a"]);
    await inbox.record(entry("a", 12, { snippet: "a snippet of new words" }), 0, "invoice");
    expect((await inbox.list({ limit: 5, q: "snippet new" })).conversations.map((e) => e.id)).toEqual(["a"]);
  });

  it("shows a conversation running from a turn started after its entry, until the entry is next told", async () => {
    const inbox = anInbox();
    await inbox.record(entry("a", 100));
    await inbox.markRunning("a", 100);
    expect((await inbox.list({ limit: 5 })).conversations[0]!.status).toBe("completed");
    await inbox.markRunning("a", 101);
    expect((await inbox.list({ limit: 5 })).conversations[0]!.status).toBe("running");
    await inbox.record(entry("a", 102));
    expect((await inbox.list({ limit: 5 })).conversations[0]!.status).toBe("completed");
  });

  it("is the user's own object, by a hash of their id: the same user's inbox holds what was told to it", async () => {
    const user = `user-${crypto.randomUUID()}`;
    await (await inboxOf(env, user))!.record(entry("mine", 10), 0, "parcel");
    expect((await (await inboxOf(env, user))!.list({ limit: 5 })).conversations.map((e) => e.id)).toEqual(["mine"]);
    expect((await (await inboxOf(env, `${user}-other`))!.list({ limit: 5 })).conversations).toEqual([]);
    expect(await inboxOf({}, user)).toBeUndefined();
    // Found by its own words only: a word it never had finds nothing.
    expect((await (await inboxOf(env, user))!.list({ limit: 5, q: "here" })).conversations).toEqual([]);
  });

  it("starts again over its own tables, and still finds what it indexed", async () => {
    const stub = anInbox();
    await stub.record(entry("a", 10), 0, "parcel");
    await stub.list({ limit: 5, q: "parcel" });
    await runInDurableObject(stub, async (_instance, state) => {
      const again = new Inbox(state, {});
      expect((await again.list({ limit: 5, q: "parcel" })).conversations.map((e) => e.id)).toEqual(["a"]);
    });
  });

  it("marks an entry for the search index again only when its title, snippet or words changed", async () => {
    const stub = anInbox();
    await stub.record(entry("a", 10), 0, "parcel");
    await stub.list({ limit: 5, q: "parcel" });
    const indexed = () =>
      runInDurableObject(
        stub,
        (_instance, state) => state.storage.sql.exec<{ indexed: number }>("SELECT indexed FROM inbox").one().indexed,
      );
    expect(await indexed()).toBe(1);
    await stub.record(entry("a", 11), 0, "parcel");
    expect(await indexed()).toBe(1);
    for (const changed of [entry("a", 12, { title: "new title" }), entry("a", 13, { snippet: "new snippet" })]) {
      await stub.record(changed, 0, "parcel");
      expect(await indexed()).toBe(0);
      await stub.list({ limit: 5, q: "parcel" });
    }
    await stub.record(entry("a", 14, { snippet: "new snippet", title: "new title" }), 0, "depot");
    expect(await indexed()).toBe(0);
  });
});
