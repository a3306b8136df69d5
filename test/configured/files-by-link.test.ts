/**
 * Images sent as links (FILES_SENT_AS=url, PUBLIC_URL=https://chat.test in this project): the provider gets a signed,
 * short-lived link to the file route instead of the bytes, and the link opens that one file with no other credential
 * until it expires; a changed signature, another file, an expired link or another method is refused. PDFs and text are
 * still sent inline. A Worker asked for links without what they need does not start.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { readConfig } from "../../src/config.ts";
import { fileLink } from "../../src/conversation/files/file-links.ts";
import { call, scenario } from "../support/worker.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
const PDF = new TextEncoder().encode("%PDF-1.7 a small order form");
const secret = (env as unknown as { SESSION_SECRET: string }).SESSION_SECRET;

async function upload(conversationId: string, bytes: Uint8Array, type: string, name: string): Promise<string> {
  const res = await call(`/v1/conversations/${conversationId}/files?name=${name}`, {
    method: "POST",
    headers: { "content-type": type },
    body: bytes,
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { file: { id: string } }).file.id;
}

type Part = { type: string; image_url?: { url: string }; file?: { file_data: string } };

describe("images sent as links", () => {
  it("reach the provider as a signed link to the file route, which opens that file alone, for a GET, until it expires", async () => {
    const s = await scenario([{ text: "A dented box." }]);
    const photo = await upload(s.conversationId, PNG, "image/png", "box.png");
    const form = await upload(s.conversationId, PDF, "application/pdf", "form.pdf");
    const sent = await call(`/v1/conversations/${s.conversationId}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: s.tag("my parcel"), files: [{ fileId: photo }, { fileId: form }] }),
    });
    await sent.text();
    const { requests } = await s.sent();
    const parts = requests[0]!.messages.find((m) => m.role === "user")!.content as unknown as Part[];
    const link = parts.find((p) => p.type === "image_url")!.image_url!.url;
    expect(link).toMatch(
      new RegExp(`^https://chat\\.test/v1/conversations/${s.conversationId}/files/${photo}\\?expires=\\d+&signature=[\\w-]+$`),
    );
    // The PDF is sent inline, as before.
    expect(parts.find((p) => p.type === "file")!.file!.file_data).toMatch(/^data:application\/pdf;base64,/);

    const path = link.slice("https://chat.test".length);
    const opened = await call(path);
    expect(opened.status).toBe(200);
    expect(new Uint8Array(await opened.arrayBuffer())).toEqual(PNG);
    const refused = async (what: string, at: string, init?: RequestInit) => {
      const res = await call(at, init);
      expect([what, res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([what, 403, "forbidden"]);
    };
    // Its first character changed, whatever it was (a signature that began with "x" once went through unchanged).
    await refused(
      "a changed signature",
      path.replace(/signature=(.)/, (_, first) => `signature=${first === "x" ? "y" : "x"}`),
    );
    await refused("another file", path.replace(photo, form));
    await refused("a POST", path, { method: "POST" });
    const expired = await fileLink(secret, "https://chat.test", s.conversationId, photo, Date.now() - 16 * 60_000);
    await refused("an expired link", expired.slice("https://chat.test".length));
  });

  it("needs PUBLIC_URL and a secret to sign with, or the Worker says what to set", () => {
    expect(() => readConfig({ FILES_SENT_AS: "url", SESSION_SECRET: "s".repeat(32) })).toThrow(/FILES_SENT_AS=url needs PUBLIC_URL/);
    expect(() => readConfig({ FILES_SENT_AS: "url", PUBLIC_URL: "https://chat.test" })).toThrow(/signs its links with SESSION_SECRET/);
    expect(readConfig({}).FILES_SENT_AS).toBe("inline");
  });
});
