/**
 * The per-conversation total of files (CONVERSATION_FILES_MAX_BYTES=1000, set for this project in vitest.config.ts): it
 * counts the bytes of every file the conversation holds, from every message and upload, not how many there are; the file
 * that would pass it is refused with `conversation_files_full`, and nothing of that message is stored.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, scenario } from "../support/worker.ts";
import { parseSse } from "../support/sse.ts";

const LIMIT = 1000;
const text = (size: number) => new TextEncoder().encode("a".repeat(size));
const dataUrl = (size: number) => `data:text/plain;base64,${btoa("a".repeat(size))}`;

function upload(conversationId: string, size: number): Promise<Response> {
  return call(`/v1/conversations/${conversationId}/files?name=notes.txt`, {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: text(size),
  });
}

function send(conversationId: string, body: unknown): Promise<Response> {
  return call(`/v1/conversations/${conversationId}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

const storedFiles = (id: string) =>
  runInDurableObject(env.CONVERSATIONS.getByName(id), (_instance, state) =>
    state.storage.sql.exec<{ n: number; bytes: number | null }>(`SELECT count(*) AS n, sum(size) AS bytes FROM files`).one(),
  );

describe("the files a conversation holds, all together", () => {
  it("are held to CONVERSATION_FILES_MAX_BYTES by their bytes, across messages and uploads: the file past it is refused", async () => {
    const s = await scenario([{ text: "Got your notes." }]);
    // Seven small files in two messages, and an upload: 200 + 5 × 50 + 300 = 750 bytes, more files than bytes matter.
    const first = await send(s.conversationId, {
      message: s.tag("my notes"),
      files: [{ url: dataUrl(200) }, ...Array.from({ length: 5 }, () => ({ url: dataUrl(50) }))],
    });
    expect(parseSse(await first.text()).at(-1)).toMatchObject({ type: "done", status: "completed" });
    expect((await upload(s.conversationId, 300)).status).toBe(201);
    expect(await storedFiles(s.conversationId)).toEqual({ n: 7, bytes: 750 });
    // Up to the limit exactly is taken: 1000 bytes in all.
    expect((await upload(s.conversationId, LIMIT - 750)).status).toBe(201);
    // One byte more, by a message or an upload, is refused, saying why; nothing of it is stored.
    const refused = await send(s.conversationId, { message: "one more", files: [{ url: dataUrl(1) }] });
    expect(refused.status).toBe(413);
    const error = ((await refused.json()) as { error: { code: string; message: string } }).error;
    expect(error).toMatchObject({ code: "conversation_files_full", message: expect.stringContaining(`at most ${LIMIT} bytes`) });
    expect(error.message).toContain("these would make 1001");
    const uploaded = await upload(s.conversationId, 1);
    expect([uploaded.status, ((await uploaded.json()) as { error: { code: string } }).error.code]).toEqual([
      413,
      "conversation_files_full",
    ]);
    expect(await storedFiles(s.conversationId)).toEqual({ n: 8, bytes: LIMIT });
    const view = (await (await call(`/v1/conversations/${s.conversationId}`)).json()) as { messages: unknown[] };
    expect(view.messages).toHaveLength(2);
  });
});
