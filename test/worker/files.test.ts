/**
 * Files in a conversation, through the Worker in workerd with its R2 bucket: a message carries an
 * image (a data URL, or an upload's id) and the fake provider receives it in its wire format; the
 * conversation stores references only (the bytes are in FILES); refusals (type by signature, size,
 * count) store nothing; a file reads back with its type and name; deleting a conversation deletes
 * its files, a fork shares them until both are gone, and an upload no message sent is swept.
 */
import { env, exports } from "cloudflare:workers";
import { type BaseEvent, HttpAgent } from "@ag-ui/client";
import { createExecutionContext, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { createSupportNetwork } from "../../src/agents/index.ts";
import { a2a, agUi, type ConversationObject } from "../../src/cloudflare/index.ts";
import { sentFile } from "../../src/conversation/files/sent-files.ts";
import { createApp } from "../../src/http/app.ts";
import { describe, expect, it } from "vitest";
import { TestChat } from "../support/ai-chat.ts";
import { call, chat, scenario } from "../support/worker.ts";
import { parseSse } from "../support/sse.ts";
import { openSocket } from "../support/socket.ts";

const json = { "content-type": "application/json" };

/** A PNG's signature and a few bytes: the checks go by the signature. */
function png(size = 64): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let i = 8; i < size; i++) bytes[i] = i % 251;
  return bytes;
}

function dataUrl(type: string, bytes: Uint8Array): string {
  return `data:${type};base64,${btoa(String.fromCharCode(...bytes))}`;
}

function send(id: string, body: unknown): Promise<Response> {
  return call(`/v1/conversations/${id}/messages`, { method: "POST", headers: json, body: JSON.stringify(body) });
}

type Part = { type: string; text?: string; image_url?: { url: string }; file?: { filename: string; file_data: string } };

/** What the conversation keeps of its files: the reference rows, and the objects in the bucket. */
async function keptFiles(id: string): Promise<{ rows: number; objects: string[]; messageBytes: number }> {
  const rows = await runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) => ({
    count: state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM files`).one().n,
    messageBytes: state.storage.sql.exec<{ n: number | null }>(`SELECT sum(length(data)) AS n FROM messages`).one().n ?? 0,
  }));
  const objects = (await env.FILES!.list({ prefix: "files/" })).objects.map((o) => o.key);
  return { rows: rows.count, objects, messageBytes: rows.messageBytes };
}

describe("a message with files", () => {
  it("sends an image as a data URL: the provider gets an image_url part, the conversation keeps a reference, the bytes are in R2", async () => {
    const s = await scenario([{ text: "I see a damaged parcel." }]);
    const image = png(4096);
    const res = await send(s.conversationId, {
      message: s.tag("here is a photo"),
      files: [{ url: dataUrl("image/png", image), name: "parcel.png" }],
    });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text());
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed", text: "I see a damaged parcel." });
    const { requests } = await s.sent();
    const user = requests[0]!.messages.find((m) => m.role === "user") as unknown as { content: Part[] };
    expect(user.content).toEqual([
      { type: "text", text: s.tag("here is a photo") },
      { type: "image_url", image_url: { url: dataUrl("image/png", image) } },
    ]);
    // The body (a Blob of the JSON and the picture's bytes) goes with its length, never chunked.
    const framing = requests[0] as unknown as { contentLength: string | null; bodyBytes: number };
    expect(framing.contentLength).toBe(String(framing.bodyBytes));
    const view = (await (await call(`/v1/conversations/${s.conversationId}`)).json()) as {
      messages: Array<{ role: string; files?: unknown[] }>;
      files: Array<{ id: string; name: string; mediaType: string; size: number; sha256: string }>;
    };
    const [file] = view.files;
    expect(file).toMatchObject({ name: "parcel.png", mediaType: "image/png", size: 4096 });
    expect(file!.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(view.messages[0]).toMatchObject({ role: "user", files: [file] });
    // The object stores the reference, not the bytes (4096 bytes would be some 5.5 kB as base64).
    const kept = await keptFiles(s.conversationId);
    expect(kept.rows).toBe(1);
    expect(kept.objects).toContain(`files/${file!.id}`);
    expect(kept.messageBytes).toBeLessThan(1500);
    // Read back with its type and name, never sniffed, shown in place.
    const read = await call(`/v1/conversations/${s.conversationId}/files/${file!.id}`);
    expect(read.status).toBe(200);
    expect(new Uint8Array(await read.arrayBuffer())).toEqual(image);
    expect(Object.fromEntries(read.headers)).toMatchObject({
      "content-type": "image/png",
      "content-disposition": `inline; filename="parcel.png"; filename*=UTF-8''parcel.png`,
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
    });
  });

  it("takes a message and the files it sends in one call to the conversation's object, in the order sent", async () => {
    const s = await scenario([{ text: "I see both photos and the invoice." }]);
    const pdf = new TextEncoder().encode("%PDF-1.4\n%%EOF\n");
    const upload = await call(`/v1/conversations/${s.conversationId}/files?name=invoice.pdf`, {
      method: "POST",
      headers: { "content-type": "application/pdf" },
      body: pdf,
    });
    const uploaded = ((await upload.json()) as { file: { id: string } }).file;
    // The Worker's own call: a data URL's bytes as a stream beside an upload's id, over RPC.
    const object = env.CONVERSATIONS.getByName(s.conversationId) as unknown as Pick<ConversationObject, "sendMessage">;
    const [first, second] = [png(100), png(200)];
    const requester = { conversationId: s.conversationId };
    const files = [sentFile({ bytes: first, name: "first.png" }), uploaded.id, sentFile({ bytes: second, name: "second.png" })];
    const result = await object.sendMessage(requester, s.tag("two photos and the invoice"), { files });
    if (!result.ok) throw new Error(result.error.message);
    expect(parseSse(await new Response(result.value.events).text()).at(-1)).toMatchObject({ type: "done", status: "completed" });
    const user = (await s.sent()).requests[0]!.messages.find((m) => m.role === "user") as unknown as { content: Part[] };
    expect(user.content.slice(1)).toEqual([
      { type: "image_url", image_url: { url: dataUrl("image/png", first) } },
      { type: "file", file: { filename: "invoice.pdf", file_data: dataUrl("application/pdf", pdf) } },
      { type: "image_url", image_url: { url: dataUrl("image/png", second) } },
    ]);
    const kept = await keptFiles(s.conversationId);
    expect(kept.rows).toBe(3);
    // Refused in the same call (an id this conversation never stored): the bytes it stored first are let go of.
    const refused = await object.sendMessage(requester, s.tag("and this"), { files: [sentFile({ bytes: png() }), "no-such-file"] });
    expect(refused).toMatchObject({ ok: false, error: { code: "file_not_found" } });
    expect(await keptFiles(s.conversationId)).toEqual(kept);
  });

  it("sends an uploaded file by its id; a PDF goes as a file part and plain text as text; a handoff carries them on", async () => {
    const s = await scenario([
      { toolCalls: [{ id: "t", name: "transfer_to_billing", arguments: JSON.stringify({ reason: "an invoice" }) }] },
      { text: "Billing here: I read your invoice." },
    ]);
    const upload = (body: BodyInit, type: string, name: string) =>
      call(`/v1/conversations/${s.conversationId}/files?name=${encodeURIComponent(name)}`, {
        method: "POST",
        headers: { "content-type": type },
        body,
      });
    const pdf = new TextEncoder().encode("%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n");
    const uploaded = await upload(pdf, "application/pdf", "invoice 42.pdf");
    expect(uploaded.status).toBe(201);
    const { file } = (await uploaded.json()) as { file: { id: string; name: string } };
    expect(file).toMatchObject({ name: "invoice 42.pdf", mediaType: "application/pdf", size: pdf.byteLength });
    const notes = (await (await upload("order A1001, charged twice", "text/plain", "notes.txt")).json()) as { file: { id: string } };
    const events = await (
      await send(s.conversationId, {
        message: s.tag("the invoice I was charged on"),
        files: [{ fileId: file.id }, { fileId: notes.file.id }],
      })
    ).text();
    expect(parseSse(events).at(-1)).toMatchObject({ type: "done", agent: "billing" });
    const { requests } = await s.sent();
    // Both requests, before and after the handoff, carry the files with the history.
    for (const request of requests) {
      const user = request.messages.find((m) => m.role === "user") as unknown as { content: Part[] };
      expect(user.content.slice(1)).toEqual([
        { type: "file", file: { filename: "invoice 42.pdf", file_data: dataUrl("application/pdf", pdf) } },
        { type: "text", text: `[File "notes.txt", text/plain, 26 bytes]:\norder A1001, charged twice` },
      ]);
    }
  });

  it("refuses what it does not take, and stores nothing of a refusal", async () => {
    const s = await scenario([{ text: "Hello." }]);
    await chat(s.conversationId, s.tag("hello"));
    const before = await keptFiles(s.conversationId);
    const refusals: Array<[unknown, number, string]> = [
      // Declared an image, but its bytes are HTML: the signature decides.
      [
        { message: "x", files: [{ url: dataUrl("image/png", new TextEncoder().encode("<html><script>alert(1)</script>")) }] },
        415,
        "unsupported_media_type",
      ],
      [{ message: "x", files: [{ url: dataUrl("image/png", new TextEncoder().encode("just words")) }] }, 415, "unsupported_media_type"],
      [{ message: "x", files: Array.from({ length: 11 }, () => ({ url: dataUrl("image/png", png()) })) }, 400, "too_many_files"],
      [{ message: "x", files: [{ url: "data:image/png;base64,@@@" }] }, 400, "invalid_file"],
      [{ message: "x", files: [{ url: "https://example.com/cat.png" }] }, 400, "invalid_request"],
      [{ message: "x", files: [{ fileId: "no-such-file" }] }, 404, "file_not_found"],
    ];
    for (const [body, status, code] of refusals) {
      const res = await send(s.conversationId, body);
      const text = await res.text();
      expect([res.status, JSON.parse(text).error.code], text).toEqual([status, code]);
    }
    // Over FILE_MAX_BYTES (10 MB): the upload's body is refused before it is read whole.
    const big = await call(`/v1/conversations/${s.conversationId}/files`, {
      method: "POST",
      headers: { "content-type": "image/png" },
      body: png(10 * 1024 * 1024 + 1),
    });
    expect([big.status, ((await big.json()) as { error: { code: string } }).error.code]).toEqual([413, "file_too_large"]);
    // A message with files sent while approvals wait is refused after its inline files were stored: they are let go of.
    const after = await keptFiles(s.conversationId);
    expect(after).toEqual(before);
    const view = (await (await call(`/v1/conversations/${s.conversationId}`)).json()) as { messages: unknown[]; files: unknown[] };
    expect([view.messages.length, view.files]).toEqual([2, []]);
  });

  it("lets go of inline files whose message is refused after they were stored (a turn running)", async () => {
    const s = await scenario([{ text: "Hello there, this takes a while.", delayMs: 150 }]);
    const running = send(s.conversationId, { message: s.tag("hello") });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const refused = await send(s.conversationId, { message: s.tag("and this"), files: [{ url: dataUrl("image/png", png()) }] });
    expect(refused.status).toBe(409);
    await (await running).text();
    expect((await keptFiles(s.conversationId)).rows).toBe(0);
  });
});

/** Bytes that begin with `head` (ASCII, or byte values), padded to `size`. */
function bytesOf(head: Array<string | number[]>, size = 48): Uint8Array {
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const part of head) {
    const values = typeof part === "string" ? [...part].map((c) => c.charCodeAt(0)) : part;
    bytes.set(values, at);
    at += values.length;
  }
  for (let i = at; i < size; i++) bytes[i] = (i * 7) % 256;
  return bytes;
}

const riff = (form: string) => bytesOf(["RIFF", [40, 0, 0, 0], form, "fmt ", [16, 0, 0, 0]]);

/** One file of each type a conversation takes, by its signature. */
const EACH_TYPE: Array<{ type: string; bytes: Uint8Array; name: string; shown: "inline" | "attachment"; contentType?: string }> = [
  { type: "image/png", bytes: png(), name: "a.png", shown: "inline" },
  { type: "image/jpeg", bytes: bytesOf([[0xff, 0xd8, 0xff, 0xe0]]), name: "b.jpg", shown: "inline" },
  { type: "image/webp", bytes: bytesOf(["RIFF", [40, 0, 0, 0], "WEBPVP8 "]), name: "c.webp", shown: "inline" },
  { type: "image/gif", bytes: bytesOf(["GIF89a"]), name: "d.gif", shown: "inline" },
  { type: "application/pdf", bytes: new TextEncoder().encode("%PDF-1.4\n%%EOF\n"), name: "e.pdf", shown: "attachment" },
  {
    type: "text/plain",
    bytes: new TextEncoder().encode("order A1001\tcharged twice\r\n"),
    name: "f.txt",
    shown: "inline",
    contentType: "text/plain; charset=utf-8",
  },
];

function upload(conversationId: string, body: BodyInit, type: string, name = "file"): Promise<Response> {
  return call(`/v1/conversations/${conversationId}/files?name=${encodeURIComponent(name)}`, {
    method: "POST",
    headers: { "content-type": type },
    body,
  });
}

const errorCode = async (res: Response) => [res.status, ((await res.json()) as { error: { code: string } }).error.code];

describe("an upload's body", () => {
  it("arrives byte for byte when it is sent as a stream with no length, and an empty one is refused", async () => {
    const s = await scenario([]);
    const bytes = png(300_000);
    // Three pieces, no Content-Length: the body limit reads it, then it goes to the conversation's object as a stream.
    const pieces = [bytes.subarray(0, 1000), bytes.subarray(1000, 200_000), bytes.subarray(200_000)];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = pieces.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    const res = await upload(s.conversationId, body, "image/png", "streamed.png");
    const { file } = (await res.json()) as { file: { id: string; size: number } };
    expect([res.status, file.size]).toEqual([201, 300_000]);
    const back = await call(`/v1/conversations/${s.conversationId}/files/${file.id}`);
    expect(new Uint8Array(await back.arrayBuffer())).toEqual(bytes);
    const empty = await upload(s.conversationId, new Uint8Array(0), "image/png", "empty.png");
    expect([empty.status, await empty.json()]).toEqual([
      400,
      { error: { code: "invalid_file", message: "File 1 ('empty.png') is empty." } },
    ]);
  });
});

describe("what a file is, by its bytes", () => {
  it("refuses bytes that begin like one format but are another: a RIFF that is not WebP, a cut signature", async () => {
    const s = await scenario([]);
    const refused: Array<[Uint8Array, string]> = [
      [riff("WAVE"), "image/webp"],
      [riff("AVI "), "image/webp"],
      [riff("WAVE"), "application/octet-stream"],
      [bytesOf([[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x00]]), "image/png"],
      [bytesOf([[0xff, 0xd8, 0x00]]), "image/jpeg"],
      [bytesOf(["GIF88a"]), "image/gif"],
      [bytesOf(["%PDF", [0x00]]), "application/pdf"],
    ];
    for (const [bytes, type] of refused)
      expect(await errorCode(await upload(s.conversationId, bytes, type)), type).toEqual([415, "unsupported_media_type"]);
    // Text with markup a browser would run, in its middle as at its start, is refused as docs/files.md says.
    for (const markup of ["Hello <script>alert(document.cookie)</script>", "Hi <img src=x onerror=alert(1)> there"]) {
      const res = await upload(s.conversationId, new TextEncoder().encode(markup), "text/plain", "note.txt");
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect([res.status, error.code], markup).toEqual([415, "unsupported_media_type"]);
      expect(error.message).toContain("markup a browser would run");
    }
    // Each kind it takes is told by its signature, declared or not (a type that says nothing).
    for (const { type, bytes } of EACH_TYPE)
      for (const declared of [type, "application/octet-stream"]) {
        const res = await upload(s.conversationId, bytes, declared);
        expect(res.status, `${type} declared ${declared}`).toBe(201);
        expect(((await res.json()) as { file: { mediaType: string } }).file.mediaType).toBe(type);
      }
  });

  it("serves each type with its own headers: PDFs as a download, images and text in place, all never sniffed, in a sandbox", async () => {
    const s = await scenario([]);
    for (const { type, bytes, name, shown, contentType } of EACH_TYPE) {
      const { file } = (await (await upload(s.conversationId, bytes, type, name)).json()) as { file: { id: string; sha256: string } };
      const read = await call(`/v1/conversations/${s.conversationId}/files/${file.id}`);
      expect(read.status).toBe(200);
      expect(new Uint8Array(await read.arrayBuffer())).toEqual(bytes);
      expect(Object.fromEntries(read.headers), type).toMatchObject({
        "content-type": contentType ?? type,
        "content-length": String(bytes.byteLength),
        "content-disposition": `${shown}; filename="${name}"; filename*=UTF-8''${name}`,
        "x-content-type-options": "nosniff",
        "content-security-policy": "default-src 'none'; sandbox",
        "cache-control": "private, max-age=3600",
        etag: `"${file.sha256}"`,
      });
    }
  });
});

describe("the file routes' refusals", () => {
  it("an upload with no type says what to send; a file whose bytes are gone, or whose Worker lost its bucket, says so", async () => {
    const s = await scenario([]);
    const untyped = await call(`/v1/conversations/${s.conversationId}/files`, { method: "POST", body: png() });
    expect(await untyped.json()).toEqual({
      error: {
        code: "unsupported_media_type",
        message:
          "Send the file's bytes as the body and its type as Content-Type (image/png, image/jpeg, image/webp, image/gif, application/pdf, text/plain).",
      },
    });
    expect(untyped.status).toBe(415);
    const { file } = (await (await upload(s.conversationId, png(), "image/png", 'reçu "2".png')).json()) as { file: { id: string } };
    const path = `/v1/conversations/${s.conversationId}/files/${file.id}`;
    // A name beyond ASCII (its quotes dropped when it was stored): a plain fallback, and the whole name encoded.
    expect((await call(path)).headers.get("content-disposition")).toBe(
      `inline; filename="re_u 2.png"; filename*=UTF-8''${encodeURIComponent("reçu 2.png")}`,
    );
    const noBucket = await createApp(() => createSupportNetwork(), [a2a(), agUi()]).fetch(
      new Request(`https://chat.test${path}`),
      { ...env, FILES: undefined },
      createExecutionContext(),
    );
    expect([noBucket.status, await noBucket.json()]).toEqual([
      503,
      { error: { code: "files_not_configured", message: "This Worker binds no FILES (an R2 bucket): bind it in wrangler.toml." } },
    ]);
    // The type an upload declares is checked against its bytes.
    const mismatch = await upload(s.conversationId, png(), "image/gif", "photo.gif");
    expect([mismatch.status, ((await mismatch.json()) as { error: { message: string } }).error.message]).toEqual([
      415,
      "File 1 ('photo.gif') is declared image/gif, but its bytes are image/png: declare what it is.",
    ]);
    await env.FILES!.delete(`files/${file.id}`);
    const gone = await call(path);
    expect([gone.status, await gone.json()]).toEqual([
      404,
      { error: { code: "file_not_found", message: `The file '${file.id}' is gone from the bucket.` } },
    ]);
  });
});

describe("a file a tool saved", () => {
  it("is kept by the sweep and shared with a fork, as a user's file is", async () => {
    const s = await scenario([]);
    const photo = await upload(s.conversationId, png(200), "image/png", "dent.png");
    const { file } = (await photo.json()) as { file: { id: string } };
    await s.rescript([
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "a damaged parcel" }) }] },
      { toolCalls: [{ id: "dc1", name: "open_damage_claim", arguments: JSON.stringify({ orderId: "A1001", photoId: file.id }) }] },
      { text: "I have opened your claim." },
    ]);
    const events = parseSse(
      await (await send(s.conversationId, { message: s.tag("my parcel arrived damaged"), files: [{ fileId: file.id }] })).text(),
    );
    const result = events.find((e) => e.type === "tool-result" && e.toolCallId === "dc1") as { isError: boolean } | undefined;
    expect(result).toMatchObject({ isError: false });
    const view = (await (await call(`/v1/conversations/${s.conversationId}`)).json()) as {
      files: Array<{ id: string; name: string; mediaType: string }>;
    };
    const claim = view.files.find((f) => f.name.startsWith("claim-"))!;
    expect(claim).toMatchObject({ mediaType: "text/plain" });
    const form = async (conversationId: string) => {
      const res = await call(`/v1/conversations/${conversationId}/files/${claim.id}`);
      return [res.status, (await res.text()).split("\n")[0]];
    };
    // An hour on, the sweep runs: the tool's file is one a message (the tool's result) sent, so it stays, as the photo does.
    const object = env.CONVERSATIONS.getByName(s.conversationId);
    await runInDurableObject(object, (_instance, state) => {
      state.storage.sql.exec(`UPDATE files SET created_at = created_at - 3700000`);
      state.storage.sql.exec(`UPDATE schedule SET due_at = 0 WHERE kind = 'file-sweep'`);
    });
    await runDurableObjectAlarm(object);
    expect((await keptFiles(s.conversationId)).rows).toBe(2);
    expect(await form(s.conversationId)).toEqual([200, expect.stringMatching(/^Damage claim DC-A1001-/)]);
    // A fork holds it too, and keeps it once the original is gone.
    const forked = (await (
      await call(`/v1/conversations/${s.conversationId}/fork`, { method: "POST", headers: json, body: JSON.stringify({ afterTurn: 1 }) })
    ).json()) as { id: string };
    expect((await call(`/v1/conversations/${s.conversationId}`, { method: "DELETE" })).status).toBe(204);
    expect(await form(forked.id)).toEqual([200, expect.stringMatching(/^Damage claim DC-A1001-/)]);
    const forkView = (await (await call(`/v1/conversations/${forked.id}`)).json()) as { files: Array<{ id: string }> };
    expect(forkView.files.map((f) => f.id).sort()).toEqual([file.id, claim.id].sort());
  });
});

describe("a retry", () => {
  it("runs the turn again with the files its message carried, the edited words included", async () => {
    const s = await scenario([{ text: "First look." }, { text: "Second look." }]);
    const image = png(80);
    await (await send(s.conversationId, { message: s.tag("photo"), files: [{ url: dataUrl("image/png", image) }] })).text();
    const again = await call(`/v1/conversations/${s.conversationId}/retry`, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ message: s.tag("photo, look again") }),
    });
    expect(parseSse(await again.text()).at(-1)).toMatchObject({ type: "done", text: "Second look." });
    const { requests } = await s.sent();
    const user = requests[1]!.messages.find((m) => m.role === "user") as unknown as { content: Part[] };
    expect(user.content).toEqual([
      { type: "text", text: s.tag("photo, look again") },
      { type: "image_url", image_url: { url: dataUrl("image/png", image) } },
    ]);
  });
});

describe("files and the conversation's life", () => {
  it("deletes its files with the conversation; a fork shares them until both are gone", async () => {
    const s = await scenario([{ text: "Got it." }]);
    const res = await send(s.conversationId, { message: s.tag("photo"), files: [{ url: dataUrl("image/png", png()), name: "a.png" }] });
    await res.text();
    const [file] = ((await (await call(`/v1/conversations/${s.conversationId}`)).json()) as { files: Array<{ id: string }> }).files;
    const key = `files/${file!.id}`;
    const forked = (await (
      await call(`/v1/conversations/${s.conversationId}/fork`, { method: "POST", headers: json, body: JSON.stringify({ afterTurn: 1 }) })
    ).json()) as { id: string };
    // The original goes: the fork still reads the file.
    expect((await call(`/v1/conversations/${s.conversationId}`, { method: "DELETE" })).status).toBe(204);
    expect(await env.FILES!.head(key)).not.toBeNull();
    const read = await call(`/v1/conversations/${forked.id}/files/${file!.id}`);
    expect([read.status, (await read.arrayBuffer()).byteLength]).toEqual([200, 64]);
    // And with the fork, the bytes.
    expect((await call(`/v1/conversations/${forked.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await env.FILES!.head(key)).toBeNull();
    expect((await env.FILES!.list({ prefix: `holders/${file!.id}/` })).objects).toEqual([]);
  });

  it("sweeps an upload no message sent within the hour (a client that died between the upload and the message)", async () => {
    const s = await scenario([{ text: "Hello." }]);
    await chat(s.conversationId, s.tag("hello"));
    const uploaded = await call(`/v1/conversations/${s.conversationId}/files?name=orphan.png`, {
      method: "POST",
      headers: { "content-type": "image/png" },
      body: png(),
    });
    const { file } = (await uploaded.json()) as { file: { id: string } };
    const object = env.CONVERSATIONS.getByName(s.conversationId);
    // An hour on: the upload is older than the sweep keeps, and the sweep is due.
    await runInDurableObject(object, (_instance, state) => {
      state.storage.sql.exec(`UPDATE files SET created_at = created_at - 3700000`);
      state.storage.sql.exec(`UPDATE schedule SET due_at = 0 WHERE kind = 'file-sweep'`);
    });
    expect(await runDurableObjectAlarm(object)).toBe(true);
    expect(await env.FILES!.head(`files/${file.id}`)).toBeNull();
    expect((await keptFiles(s.conversationId)).rows).toBe(0);
    const gone = await call(`/v1/conversations/${s.conversationId}/files/${file.id}`);
    expect(gone.status).toBe(404);
  });
});

describe("a crash around a file", () => {
  it("an upload killed before it answered leaves a row and bytes no message names: the sweep takes them; none is ever sent", async () => {
    const s = await scenario([{ text: "Hello." }, { text: "Still here." }]);
    await chat(s.conversationId, s.tag("hello"));
    const object = env.CONVERSATIONS.getByName(s.conversationId);
    // What an upload leaves when the object dies between storing and answering: the row, the marker and the bytes.
    const id = crypto.randomUUID();
    await runInDurableObject(object, (_instance, state) => {
      state.storage.sql.exec(
        `INSERT INTO files (id, name, media_type, size, sha256, created_at) VALUES (?, 'lost.png', 'image/png', 64, 'x', ?)`,
        id,
        Date.now() - 3_700_000,
      );
    });
    await env.FILES!.put(`files/${id}`, png());
    await env.FILES!.put(`holders/${id}/${s.conversationId}`, new Uint8Array(0));
    // The next turn sends the model no file: no message names it.
    await chat(s.conversationId, s.tag("again"));
    const { requests } = await s.sent();
    expect(JSON.stringify(requests[1]!.messages)).not.toContain("image_url");
    // The sweep the next upload plans (an hour on) takes it.
    await call(`/v1/conversations/${s.conversationId}/files?name=new.png`, {
      method: "POST",
      headers: { "content-type": "image/png" },
      body: png(),
    });
    await runInDurableObject(object, (_instance, state) =>
      state.storage.sql.exec(`UPDATE schedule SET due_at = 0 WHERE kind = 'file-sweep'`),
    );
    await runDurableObjectAlarm(object);
    expect(await env.FILES!.head(`files/${id}`)).toBeNull();
    expect((await env.FILES!.list({ prefix: `holders/${id}/` })).objects).toEqual([]);
  });

  it("a file whose bytes are gone from the bucket is described to the model in words, and the conversation goes on", async () => {
    const s = await scenario([{ text: "Nice photo." }, { text: "Go on." }]);
    await (
      await send(s.conversationId, { message: s.tag("photo"), files: [{ url: dataUrl("image/png", png()), name: "gone.png" }] })
    ).text();
    const [file] = ((await (await call(`/v1/conversations/${s.conversationId}`)).json()) as { files: Array<{ id: string }> }).files;
    await env.FILES!.delete(`files/${file!.id}`);
    const events = await chat(s.conversationId, s.tag("and now"));
    expect(events.at(-1)).toMatchObject({ type: "done", status: "completed" });
    const { requests } = await s.sent();
    const user = requests[1]!.messages.find((m) => m.role === "user") as unknown as { content: Part[] };
    expect(user.content[1]).toEqual({ type: "text", text: '[File "gone.png", image/png, 64 bytes]: it could not be read.' });
  });
});

describe("files over the AI SDK's chat protocol", () => {
  it("shows useChat a file a tool saved as it happens, a file part with its URL, as the stored history shows it after", async () => {
    const s = await scenario([]);
    const photo = await upload(s.conversationId, png(200), "image/png", "dent.png");
    const { file } = (await photo.json()) as { file: { id: string } };
    await s.rescript([
      { toolCalls: [{ id: "t", name: "transfer_to_shipping", arguments: JSON.stringify({ reason: "a damaged parcel" }) }] },
      { toolCalls: [{ id: "dc1", name: "open_damage_claim", arguments: JSON.stringify({ orderId: "A1001", photoId: file.id }) }] },
      { text: "I have opened your claim." },
    ]);
    const chatClient = new TestChat(s.conversationId);
    await chatClient.sendMessage({
      text: s.tag("my parcel arrived damaged"),
      files: [
        { type: "file", mediaType: "image/png", filename: "dent.png", url: `/v1/conversations/${s.conversationId}/files/${file.id}` },
      ],
    });
    expect(chatClient.status).toBe("ready");
    const live = chatClient.last.parts.filter((part) => part.type === "file");
    expect(live).toEqual([
      { type: "file", mediaType: "text/plain", url: expect.stringMatching(`^/v1/conversations/${s.conversationId}/files/`) },
    ]);
    const claim = await call((live[0] as { url: string }).url);
    expect((await claim.text()).split("\n")[0]).toMatch(/^Damage claim DC-A1001-/);
    const ui = (await (await call(`/v1/conversations/${s.conversationId}/ui-messages`)).json()) as Array<{
      role: string;
      parts: Array<{ type: string; url?: string }>;
    }>;
    const stored = ui.at(-1)!.parts.filter((part) => part.type === "file");
    expect(stored.map((part) => part.url)).toEqual([(live[0] as { url: string }).url]);
  });

  it("useChat's file parts (data URLs) reach the provider as image parts, and come back as file parts of the history", async () => {
    const s = await scenario([{ text: "A crushed box, I see." }]);
    const chatClient = new TestChat(s.conversationId);
    const image = png(256);
    await chatClient.sendMessage({
      text: s.tag("the damaged parcel"),
      files: [{ type: "file", mediaType: "image/png", filename: "box.png", url: dataUrl("image/png", image) }],
    });
    expect(chatClient.status).toBe("ready");
    const { requests } = await s.sent();
    const user = requests[0]!.messages.find((m) => m.role === "user") as unknown as { content: Part[] };
    expect(user.content[1]).toEqual({ type: "image_url", image_url: { url: dataUrl("image/png", image) } });
    const ui = (await (await call(`/v1/conversations/${s.conversationId}/ui-messages`)).json()) as Array<{
      role: string;
      parts: unknown[];
    }>;
    const fileId = ((await (await call(`/v1/conversations/${s.conversationId}`)).json()) as { files: Array<{ id: string }> }).files[0]!.id;
    expect(ui[0]!.parts).toContainEqual({
      type: "file",
      mediaType: "image/png",
      filename: "box.png",
      url: `/v1/conversations/${s.conversationId}/files/${fileId}`,
    });
  });
});

describe("files over the socket", () => {
  it("a message frame carries an uploaded file by its id; the provider gets the image", async () => {
    const s = await scenario([{ text: "Thanks for the photo." }]);
    const image = png(128);
    const uploaded = await call(`/v1/conversations/${s.conversationId}/files?name=dent.png`, {
      method: "POST",
      headers: { "content-type": "image/png" },
      body: image,
    });
    const { file } = (await uploaded.json()) as { file: { id: string } };
    const live = await openSocket(s.conversationId);
    live.send({ type: "message", message: s.tag("the dent"), files: [{ fileId: file.id }] });
    await live.until((f) => f.type === "done", "the turn's end");
    const { requests } = await s.sent();
    const user = requests[0]!.messages.find((m) => m.role === "user") as unknown as { content: Part[] };
    expect(user.content[1]).toEqual({ type: "image_url", image_url: { url: dataUrl("image/png", image) } });
    // A frame carries no bytes: a data URL is refused, saying how to send a file.
    live.send({ type: "message", message: "x", files: [{ url: dataUrl("image/png", image) }] });
    await live.until((f) => f.type === "error" && String(f.data.message).includes("fileId"), "the refusal");
    live.ws.close();
  });
});

describe("files over AG-UI", () => {
  it("the official client's image part (base64 data source) reaches the provider as an image part", async () => {
    const s = await scenario([{ text: "That box is crushed." }]);
    const image = png(96);
    const base64 = btoa(String.fromCharCode(...image));
    const agent = new HttpAgent({
      url: "https://chat.test/v1/ag-ui",
      threadId: s.conversationId,
      fetch: (input: RequestInfo | URL, init?: RequestInit) => exports.default.fetch(new Request(input, init)),
    });
    agent.addMessage({
      id: "u1",
      role: "user",
      content: [
        { type: "text", text: s.tag("look at this") },
        { type: "image", source: { type: "data", value: base64, mimeType: "image/png" }, metadata: { filename: "crushed.png" } },
      ],
    });
    const events: BaseEvent[] = [];
    await agent.runAgent({ runId: "r1" }, { onEvent: ({ event }) => void events.push(event) });
    expect(events.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
    const { requests } = await s.sent();
    const user = requests[0]!.messages.find((m) => m.role === "user") as unknown as { content: Part[] };
    expect(user.content).toEqual([
      { type: "text", text: s.tag("look at this") },
      { type: "image_url", image_url: { url: `data:image/png;base64,${base64}` } },
    ]);
    const view = (await (await call(`/v1/conversations/${s.conversationId}`)).json()) as { files: Array<{ name: string }> };
    expect(view.files).toMatchObject([{ name: "crushed.png", mediaType: "image/png", size: 96 }]);
  });
});
