/**
 * A picture costs once a leg: every step of a leg sends the whole history, its files with it; the leg reads each file's
 * bytes once and the adapters encode them once (`readRequestFiles`, what the OpenAI adapters call per request), kept for
 * the leg's steps and let go of at its end, bounded in bytes. A tool reading the same file shares the read. And a
 * network that sends only its latest images (`imagesSent`) names the older ones in words.
 */
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { type InlineData, readRequestFiles } from "../../src/models/file-parts.ts";
import { readOnceALeg } from "../../src/runtime/ports/files-port.ts";
import {
  Agent,
  type FilePort,
  type FileRef,
  type Model,
  type ModelEvent,
  type ModelRequest,
  keepLatestImages,
  type Message,
  Network,
  runTurn,
  tool,
} from "../../src/runtime/index.ts";
import { MemoryFiles, MemoryStore } from "../../src/testing/index.ts";

/** The test's file store, counting the reads that reach it. */
class CountingFiles implements FilePort {
  readonly inner = new MemoryFiles();
  reads = 0;
  async read(file: FileRef): Promise<Uint8Array> {
    this.reads++;
    return this.inner.read(file);
  }
}

/** Reads the request's files as an adapter does, then calls `look` twice and answers. */
class LookingModel implements Model {
  readonly contents: unknown[] = [];
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const files = await readRequestFiles(request);
    this.contents.push([...files.values()][0]);
    const looked = request.messages.filter((m) => m.role === "tool").length;
    if (looked < 2) {
      yield { type: "tool-call", call: { id: `look-${looked}`, name: "look", arguments: "{}" } };
      yield { type: "finish", finishReason: "tool_calls" };
      return;
    }
    yield { type: "text-delta", delta: "A dented box." };
    yield { type: "finish", finishReason: "stop" };
  }
}

const look = tool({
  name: "look",
  description: "Looks at the photo again.",
  parameters: z.object({}),
  execute: async (_args, ctx) => (await ctx.files.read("file-1")).byteLength,
});

async function leg(files: CountingFiles, model: LookingModel, store: MemoryStore, photo?: FileRef): Promise<void> {
  const network = new Network(new Agent({ name: "shipping", instructions: "You ship.", tools: [look] }), { defaultModel: "m" });
  const input = photo ? { kind: "message" as const, text: "my parcel", files: [photo] } : { kind: "message" as const, text: "again" };
  for await (const _event of runTurn({ conversationId: "c", network, model, store, conversation: store.conversation(), input, files }));
}

describe("a leg's files", () => {
  it("are read once and encoded once for all the leg's steps and its tools; the next leg reads them again, once", async () => {
    const files = new CountingFiles();
    const photo = await files.inner.add({ bytes: new Uint8Array(1024).fill(7), mediaType: "image/png", name: "box.png" });
    const model = new LookingModel();
    const store = new MemoryStore("shipping");
    await leg(files, model, store, photo);
    // Three model calls and two tool reads: one read of the bytes, one encoding the three requests share.
    expect(model.contents).toHaveLength(3);
    expect(files.reads).toBe(1);
    expect(new Set(model.contents).size).toBe(1);
    expect(model.contents[0]).toMatchObject({ kind: "image", url: { mediaType: "image/png" } });
    expect(new TextDecoder().decode((model.contents[0] as { url: InlineData }).url.base64)).toBe(`${"BwcH".repeat(341)}Bw==`);
    await leg(files, model, store);
    expect(files.reads).toBe(2);
    expect(new Set(model.contents).size).toBe(2);
  });

  it("keep at most their bound: a file past it is read each time it is asked for", async () => {
    const files = new CountingFiles();
    const big = await files.inner.add({ bytes: new Uint8Array(2048), mediaType: "image/png", name: "big.png" });
    const small = await files.inner.add({ bytes: new Uint8Array(100), mediaType: "image/png", name: "small.png" });
    const port = readOnceALeg(files, 1000);
    for (let i = 0; i < 3; i++) await Promise.all([port.read(big), port.read(small)]);
    expect(files.reads).toBe(4);
  });

  it("do not keep a read that failed: the next ask reads again", async () => {
    const files = new CountingFiles();
    const port = readOnceALeg(files);
    const gone: FileRef = { id: "gone", mediaType: "image/png", name: "gone.png", size: 10, sha256: "" };
    await expect(port.read(gone)).rejects.toThrow(/No file 'gone'/);
    await expect(port.read(gone)).rejects.toThrow(/No file 'gone'/);
    expect(files.reads).toBe(2);
  });
});

describe("a network that sends only its latest images", () => {
  it("sends the latest in full and names the older ones where they were; other files are sent as they are", async () => {
    const files = new MemoryFiles();
    const add = (name: string, mediaType = "image/png") => files.add({ bytes: new Uint8Array(64), mediaType, name });
    const [first, pdf, second, third] = [
      await add("first.png"),
      await add("order.pdf", "application/pdf"),
      await add("second.png"),
      await add("third.png"),
    ];
    const seen: ModelRequest[] = [];
    const model: Model = {
      async *stream(request) {
        seen.push(request);
        yield { type: "text-delta", delta: "Seen." };
        yield { type: "finish", finishReason: "stop" };
      },
    };
    const network = new Network(new Agent({ name: "shipping", instructions: "You ship." }), { defaultModel: "m", imagesSent: 1 });
    const store = new MemoryStore("shipping");
    for (const [text, sent] of [
      ["one", [first!, pdf!]],
      ["two", [second!]],
      ["three", [third!]],
    ] as const)
      for await (const _event of runTurn({
        conversationId: "c",
        network,
        model,
        store,
        conversation: store.conversation(),
        input: { kind: "message", text, files: [...sent] },
        files,
      }));
    const users = seen.at(-1)!.messages.filter((m): m is Extract<Message, { role: "user" }> => m.role === "user");
    expect(users.map((m) => [m.content, (m.files ?? []).map((f) => f.name)])).toEqual([
      ['one\n[File "first.png", image/png, 64 bytes, sent earlier]', ["order.pdf"]],
      ['two\n[File "second.png", image/png, 64 bytes, sent earlier]', []],
      ["three", ["third.png"]],
    ]);
    expect([...(await readRequestFiles(seen.at(-1)!)).keys()].sort()).toEqual([pdf!.id, third!.id].sort());
    // The stored history keeps them all.
    expect(
      store
        .conversation()
        .history.flatMap((m) => (m.role === "user" ? (m.files ?? []) : []))
        .map((f) => f.name),
    ).toEqual(["first.png", "order.pdf", "second.png", "third.png"]);
  });

  it("is also a history filter a handoff can take: keep none, and every image is named", () => {
    const photo: FileRef = { id: "p", mediaType: "image/webp", name: "dent.webp", size: 5, sha256: "" };
    const messages: Message[] = [{ role: "user", content: "", files: [photo] }];
    expect(keepLatestImages(0)(messages)).toEqual([{ role: "user", content: '[File "dent.webp", image/webp, 5 bytes, sent earlier]' }]);
  });
});
