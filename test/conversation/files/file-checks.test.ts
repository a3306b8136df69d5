/**
 * What a file must be to enter a conversation, checked before anything is stored (src/conversation/files/file-checks.ts):
 * the type its bytes show, against what the sender declared; the limits of a message and of a conversation; the name a
 * file keeps. Every way a file comes in (an upload, a message's data URL, a tool's save) goes through these checks; a
 * tool's save meets none of the HTTP layer's limits first, so each check is the one that holds there.
 */
import { describe, expect, it } from "vitest";
import { checkFiles, type FileLimits, safeName, sha256, sniffMediaType } from "../../../src/conversation/files/file-checks.ts";

const limits: FileLimits = { maxBytes: 100, perMessage: 3, perConversation: 250 };
const text = (words: string) => new TextEncoder().encode(words);
const bytes = (...values: number[]) => new Uint8Array(values);
const png = () => bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3);

describe("the type a file's bytes show", () => {
  it("knows each type by its signature, and text by being UTF-8 with no control characters and no markup a browser would run", () => {
    expect(sniffMediaType(png())).toBe("image/png");
    expect(sniffMediaType(bytes(0xff, 0xd8, 0xff, 0xe0))).toBe("image/jpeg");
    expect(sniffMediaType(text("RIFF\u0001\u0000\u0000\u0000WEBPVP8 "))).toBe("image/webp");
    expect(sniffMediaType(text("GIF87a..."))).toBe("image/gif");
    expect(sniffMediaType(text("GIF89a..."))).toBe("image/gif");
    expect(sniffMediaType(text("%PDF-1.7"))).toBe("application/pdf");
    expect(sniffMediaType(text("order A1001\tcharged twice\r\nthanks"))).toBe("text/plain");
    expect(sniffMediaType(text("\ufeffa text with a byte order mark"))).toBe("text/plain");
    for (const other of [
      text("RIFF\u0001\u0000\u0000\u0000WAVEfmt "),
      bytes(0xff, 0xfe, 0x41),
      text("a bell \u0007 rings"),
      text("a form feed \u000c"),
      text("delete \u007f"),
      text("<html><body>hi</body></html>"),
      text("   <script>alert(1)</script>"),
      text("\n<svg onload=alert(1)>"),
      text("<!DOCTYPE html>"),
      text("<?xml version='1.0'?>"),
      text("<SCRIPT>x</SCRIPT>"),
      // WebP's form at its place, but not in a RIFF container.
      bytes(0, 1, 2, 3, 4, 5, 6, 7, ..."WEBPVP8 ".split("").map((c) => c.charCodeAt(0))),
    ])
      expect(sniffMediaType(other), new TextDecoder().decode(other)).toBeUndefined();
    // Markup a browser would run is refused anywhere in a text, not only at its start.
    for (const markup of [
      "Hello <script>alert(document.cookie)</script>",
      "a photo: <img src=x onerror=alert(1)>",
      'click <a href="javascript:alert(1)">here</a>',
      "framed <iframe srcdoc='<p>'></iframe>",
      "x </script >",
      "inline <svg><circle/></svg>",
    ])
      expect(sniffMediaType(text(markup)), markup).toBeUndefined();
    // Markup that runs nothing, and words that only look like it, are text as any other.
    for (const plain of ["see <b>this</b>", "if a < b and c > d", "I use javascript: it is fine", "<3 thanks", "the onion = 2 kg"])
      expect(sniffMediaType(text(plain)), plain).toBe("text/plain");
  });
});

describe("the checks of a message's files", () => {
  it("takes what fits: its type from the bytes, a declared type that says nothing or agrees (jpg and parameters too), a name", () => {
    const checked = checkFiles(
      [
        { bytes: png(), mediaType: "application/octet-stream", name: "a/b/photo.png" },
        { bytes: bytes(0xff, 0xd8, 0xff, 0xe0), mediaType: "image/jpg" },
        { bytes: text("notes"), mediaType: " TEXT/PLAIN; charset=utf-8" },
      ],
      limits,
      0,
    );
    expect(checked).toEqual({
      ok: true,
      value: [
        { bytes: png(), mediaType: "image/png", name: "photo.png" },
        { bytes: bytes(0xff, 0xd8, 0xff, 0xe0), mediaType: "image/jpeg", name: "file-2.jpg" },
        { bytes: text("notes"), mediaType: "text/plain", name: "file-3.txt" },
      ],
    });
  });

  it("refuses each thing that does not fit, saying which file and what to change", () => {
    const refusal = (files: Parameters<typeof checkFiles>[0], stored = 0) => {
      const checked = checkFiles(files, limits, stored);
      return checked.ok ? null : checked.error;
    };
    expect(refusal(Array.from({ length: 4 }, () => ({ bytes: png() })))).toEqual({
      code: "too_many_files",
      message: "A message carries at most 3 files; this one has 4.",
      details: { limit: 3 },
    });
    expect(
      checkFiles(
        Array.from({ length: 3 }, () => ({ bytes: png() })),
        limits,
        0,
      ).ok,
    ).toBe(true);
    expect(refusal([{ bytes: png() }, { bytes: new Uint8Array(0), name: "empty.png" }])).toEqual({
      code: "invalid_file",
      message: "File 2 ('empty.png') is empty.",
    });
    expect(refusal([{ bytes: new Uint8Array(101) }])).toEqual({
      code: "file_too_large",
      message: "File 1 is 101 bytes; a file may be at most 100.",
      details: { size: 101, limit: 100 },
    });
    expect(checkFiles([{ bytes: text("a".repeat(100)) }], limits, 0).ok).toBe(true);
    expect(refusal([{ bytes: bytes(1, 2, 3), name: "x.bin" }])).toEqual({
      code: "unsupported_media_type",
      message:
        "File 1 ('x.bin')'s bytes are none of the types a conversation takes (image/png, image/jpeg, image/webp, image/gif, application/pdf, text/plain).",
      details: { allowed: ["image/png", "image/jpeg", "image/webp", "image/gif", "application/pdf", "text/plain"] },
    });
    // Markup in the middle of a text says what it found.
    expect(refusal([{ bytes: text("Hello <img src=x onerror=alert(1)> there"), name: "note.txt" }])).toEqual({
      code: "unsupported_media_type",
      message: `File 1 ('note.txt') is text with markup a browser would run ("<img src=x onerror=alert"): send it without that markup.`,
      details: { allowed: ["image/png", "image/jpeg", "image/webp", "image/gif", "application/pdf", "text/plain"] },
    });
    // image/jpg is JPEG's other name: declared on a PNG, it is still the wrong type.
    expect(refusal([{ bytes: png(), mediaType: "image/jpg" }])).toMatchObject({ message: expect.stringContaining("declared image/jpeg") });
    expect(refusal([{ bytes: png(), mediaType: "image/gif" }])).toEqual({
      code: "unsupported_media_type",
      message: "File 1 is declared image/gif, but its bytes are image/png: declare what it is.",
      details: { allowed: ["image/png", "image/jpeg", "image/webp", "image/gif", "application/pdf", "text/plain"] },
    });
    // The conversation's total counts what it holds already: 240 stored and 11 more pass 250.
    expect(refusal([{ bytes: png() }], 240)).toEqual({
      code: "conversation_files_full",
      message: "A conversation holds at most 250 bytes of files; these would make 251. Start a new conversation.",
      details: { limit: 250 },
    });
    expect(checkFiles([{ bytes: png() }], limits, 239).ok).toBe(true);
  });
});

describe("a file's name", () => {
  it("keeps the last part of a path, without control characters or quotes, at most 120 characters, else the fallback", () => {
    expect(safeName("C:\\Users\\ada\\invoice.pdf", "f")).toBe("invoice.pdf");
    expect(safeName("../../etc/passwd", "f")).toBe("passwd");
    expect(safeName(' "quoted"\u0000\u0007 name\u007f ', "f")).toBe("quoted name");
    expect(safeName("x".repeat(130), "f")).toBe("x".repeat(120));
    expect(safeName("dir/", "fallback.txt")).toBe("fallback.txt");
    expect(safeName(undefined, "fallback.txt")).toBe("fallback.txt");
    expect(safeName("  ", "fallback.txt")).toBe("fallback.txt");
  });

  it("is hashed as SHA-256, in hex", async () => {
    expect(await sha256(text("abc"))).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});
