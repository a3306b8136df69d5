/**
 * A conversation's files (src/conversation/files/conversation-files.ts) over its own SQLite and the FILES bucket, in
 * workerd: a tool's save held to the same checks as an upload (it meets no HTTP limit first), a file whose bytes or row
 * are gone, a message's references, the sweep's next time, and a Worker with no bucket.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ConversationFiles } from "../../../src/conversation/files/conversation-files.ts";

/** How long an upload waits for its message here (FILE_ORPHAN_AFTER's default: an hour). */
const UPLOAD_KEPT_MS = 60 * 60_000;
import { ConversationStore } from "../../../src/conversation/storage/conversation-store.ts";
import { Redactor } from "../../../src/runtime/redact.ts";
import type { FileRef, Message } from "../../../src/runtime/messages.ts";

const limits = { maxBytes: 64, perMessage: 2, perConversation: 70 };
const text = (words: string) => new TextEncoder().encode(words);

/** A conversation's files with the FILES bucket (or none), on a fresh object's storage. */
function withFiles<T>(
  run: (files: ConversationFiles, store: ConversationStore, id: string) => Promise<T>,
  { bucket = env.FILES }: { bucket?: R2Bucket | null } = {},
): Promise<T> {
  const id = `files-unit-${crypto.randomUUID()}`;
  return runInDurableObject(env.CONVERSATIONS.getByName(id), async (_instance, state) => {
    const store = new ConversationStore(state.storage);
    store.create(id, "shipping", "grant");
    const files = new ConversationFiles({
      ledger: store.files,
      bucket: bucket ?? undefined,
      limits,
      redactor: new Redactor(["s3cret-token"]),
      conversationId: () => id,
      keptMs: UPLOAD_KEPT_MS,
    });
    return run(files, store, id);
  });
}

/** Files of these words, stored as one message's: their references. */
async function stored(files: ConversationFiles, ...words: string[]): Promise<FileRef[]> {
  const result = await files.store(words.map((w) => ({ bytes: text(w) })));
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

describe("a tool's save", () => {
  it("stores a file as an upload is stored (its name redacted), and refuses what an upload would be refused, as the tool's error", () =>
    withFiles(async (files, store, id) => {
      const saved = await files.save({ bytes: text("claim form"), mediaType: "text/plain", name: "claim s3cret-token.txt" });
      expect(saved).toMatchObject({ name: "claim [redacted].txt", mediaType: "text/plain", size: 10 });
      expect(store.files.get(saved.id)).toEqual(saved);
      expect(new TextDecoder().decode(await files.read(saved))).toBe("claim form");
      expect(await env.FILES!.head(`holders/${saved.id}/${id}`)).not.toBeNull();
      for (const [file, code, words] of [
        [{ bytes: new Uint8Array(0), mediaType: "text/plain", name: "empty.txt" }, "internal_error", "is empty"],
        [{ bytes: text("x".repeat(65)), mediaType: "text/plain", name: "big.txt" }, "internal_error", "at most 64"],
        [{ bytes: text("words"), mediaType: "image/png", name: "fake.png" }, "internal_error", "declared image/png"],
        [{ bytes: text("x".repeat(64)), mediaType: "text/plain", name: "full.txt" }, "internal_error", "at most 70 bytes"],
      ] as const)
        await expect(files.save(file)).rejects.toMatchObject({ code, message: expect.stringContaining(words) });
      expect(store.files.all()).toEqual([saved]);
    }));

  it("in a Worker with no FILES bucket, is the tool's error that no file can be kept; an upload says what to bind", () =>
    withFiles(
      async (files) => {
        expect(files.unavailable()).toEqual({
          ok: false,
          error: {
            code: "files_not_configured",
            message: "This Worker binds no FILES (an R2 bucket for the conversations' files): bind it in wrangler.toml.",
          },
        });
        expect(await files.store([{ bytes: text("notes") }])).toMatchObject({ ok: false, error: { code: "files_not_configured" } });
        await expect(files.save({ bytes: text("notes"), mediaType: "text/plain", name: "n.txt" })).rejects.toMatchObject({
          code: "file_not_found",
        });
      },
      { bucket: null },
    ));
});

describe("a conversation's files, read and referred to", () => {
  it("reads only files it holds whose bytes are there; a message refers to at most its limit of them, each by an id it holds", () =>
    withFiles(async (files, _store, id) => {
      const [one, two] = await stored(files, "one", "two");
      const [three] = await stored(files, "three");
      expect(files.references([one!.id, two!.id])).toEqual({ ok: true, value: [one, two] });
      expect(files.references([one!.id, two!.id, three!.id])).toEqual({
        ok: false,
        error: { code: "too_many_files", message: "A message carries at most 2 files; this one has 3." },
      });
      expect(files.references(["nope"])).toEqual({
        ok: false,
        error: { code: "file_not_found", message: "No file 'nope' was uploaded to this conversation: upload it first, then send its id." },
      });
      // Gone from the bucket (after the read that followed its upload), or never this conversation's: the tool reads an
      // error naming the file.
      expect(new TextDecoder().decode(await files.read(one!))).toBe("one");
      await env.FILES!.delete(`files/${one!.id}`);
      await expect(files.read(one!)).rejects.toMatchObject({
        code: "file_not_found",
        message: `The file '${one!.name}' (${one!.id}) is not stored.`,
      });
      await expect(files.read({ ...two!, id: "elsewhere" })).rejects.toMatchObject({ code: "file_not_found" });
      // Let go of: its row and its holder go, and its bytes with the last holder.
      await files.release([two!]);
      expect(files.get(two!.id)).toBeUndefined();
      expect(await env.FILES!.head(`files/${two!.id}`)).toBeNull();
      expect(await env.FILES!.head(`holders/${three!.id}/${id}`)).not.toBeNull();
    }));

  it("reads what this instance just stored from memory once, then from the bucket; a file let go of is not read from memory", () => {
    const gets: string[] = [];
    const counted = new Proxy(env.FILES!, {
      get: (bucket, key) =>
        key === "get"
          ? (name: string) => {
              gets.push(name);
              return bucket.get(name);
            }
          : Reflect.get(bucket, key).bind(bucket),
    });
    return withFiles(
      async (files) => {
        const [photo, note] = await stored(files, "photo bytes", "a note");
        expect(new TextDecoder().decode(await files.read(photo!))).toBe("photo bytes");
        expect(gets).toEqual([]);
        expect(new TextDecoder().decode(await files.read(photo!))).toBe("photo bytes");
        expect(gets).toEqual([`files/${photo!.id}`]);
        await files.release([note!]);
        await expect(files.read(note!)).rejects.toMatchObject({ code: "file_not_found" });
        expect(gets).toEqual([`files/${photo!.id}`]);
      },
      { bucket: counted },
    );
  });

  it("sweeps the uploads no message sent within the hour, keeps those a message or a tool's result sent, and says when to look next", () =>
    withFiles(async (files, store) => {
      const [sent, orphan] = await stored(files, "sent", "orphan");
      const toolSaved = await files.save({ bytes: text("form"), mediaType: "text/plain", name: "form.txt" });
      const history: Message[] = [
        { role: "user", content: "photo", files: [sent!] },
        { role: "tool", toolCallId: "c", name: "open_claim", content: "{}", isError: false, files: [toolSaved] },
      ];
      const created = Date.now();
      // Not yet an hour: nothing goes, and the next look is an hour after the orphan came.
      const next = await files.sweep(history, created);
      expect(next).toBeGreaterThanOrEqual(created - 1000 + UPLOAD_KEPT_MS);
      expect(next).toBeLessThanOrEqual(created + UPLOAD_KEPT_MS);
      expect(store.files.all()).toHaveLength(3);
      // An hour on: the orphan goes; nothing else waits for a sweep.
      expect(await files.sweep(history, created + UPLOAD_KEPT_MS + 1)).toBeNull();
      expect(
        store.files
          .all()
          .map((f) => f.id)
          .sort(),
      ).toEqual([sent!.id, toolSaved.id].sort());
      expect(await env.FILES!.head(`files/${orphan!.id}`)).toBeNull();
    }));

  it("keeps an orphan's row while its bytes could not be deleted, so the next sweep lets go of them: no bytes left unnamed", async () => {
    let failing = true;
    const flaky = new Proxy(env.FILES!, {
      get: (bucket, key) =>
        key === "delete"
          ? (keys: string | string[]) => (failing ? Promise.reject(new Error("R2 is unavailable")) : bucket.delete(keys))
          : Reflect.get(bucket, key).bind(bucket),
    });
    await withFiles(
      async (files, store) => {
        const [orphan] = await stored(files, "orphan");
        const later = Date.now() + UPLOAD_KEPT_MS + 1;
        await expect(files.sweep([], later)).rejects.toThrow(/R2 is unavailable/);
        expect(store.files.get(orphan!.id)).toEqual(orphan);
        expect(await env.FILES!.head(`files/${orphan!.id}`)).not.toBeNull();
        failing = false;
        expect(await files.sweep([], later)).toBeNull();
        expect(store.files.get(orphan!.id)).toBeUndefined();
        expect(await env.FILES!.head(`files/${orphan!.id}`)).toBeNull();
      },
      { bucket: flaky },
    );
  });
});
