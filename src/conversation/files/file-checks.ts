/**
 * What a file must be to enter a conversation: a media type the bytes themselves show (their
 * signature, not the declared type), within the limits. Pure checks, before anything is stored.
 */
import { type ConversationResult, fail, ok } from "../results.ts";

/** A file as it arrives, before it is stored: its bytes, and what the sender says of it. */
export interface IncomingFile {
  bytes: Uint8Array;
  /** The type the sender declared (a data URL's, a part's, a Content-Type); checked against the bytes. */
  mediaType?: string;
  name?: string;
}

/** The limits a conversation's files are held to (FILE_MAX_BYTES, FILES_PER_MESSAGE, CONVERSATION_FILES_MAX_BYTES). */
export interface FileLimits {
  maxBytes: number;
  perMessage: number;
  perConversation: number;
}

/** The media types a conversation takes, each told by its bytes. */
export const FILE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif", "application/pdf", "text/plain"] as const;
export type FileMediaType = (typeof FILE_TYPES)[number];

const startsWith = (bytes: Uint8Array, signature: readonly number[], at = 0) => signature.every((byte, i) => bytes[at + i] === byte);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/** The media type the bytes show, or undefined when they are none the conversation takes. */
export function sniffMediaType(bytes: Uint8Array): FileMediaType | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return "image/webp";
  if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) return "image/gif";
  if (startsWith(bytes, ascii("%PDF-"))) return "application/pdf";
  return isPlainText(bytes) ? "text/plain" : undefined;
}

/**
 * Markup a browser would run, anywhere in a text: a document's start (HTML, SVG, XML), an element that runs or loads
 * something (script, frame, object, embed, svg, style, link, meta, base, form), an event handler or `srcdoc` attribute,
 * a `javascript:` URL in an attribute. Markup that runs nothing (`<b>`, "a < b") is text as any other.
 */
const ACTIVE_MARKUP = new RegExp(
  [
    /<\s*(?:!doctype|\?xml|\/?\s*(?:html|svg|math|script|iframe|frame|object|embed|style|link|meta|base|form)\b)/.source,
    /<[a-z][^>]*?\s(?:on[a-z]+|srcdoc|formaction)\s*=/.source,
    /<[a-z][^>]*?=\s*["']?\s*javascript\s*:/.source,
  ].join("|"),
  "i",
);

/** The first markup a browser would run in `text`, cut short; undefined when there is none. */
export function activeMarkup(text: string): string | undefined {
  const found = ACTIVE_MARKUP.exec(text);
  return found ? text.slice(found.index, found.index + 24) : undefined;
}

/** UTF-8 with no control characters but tab, newline and carriage return, and nothing a browser would run as markup. */
function isPlainText(bytes: Uint8Array): boolean {
  const text = utf8(bytes);
  if (text === undefined || /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) return false;
  return activeMarkup(text) === undefined;
}

function utf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** A file that passed the checks: what it is, ready to be stored. */
export interface CheckedFile {
  bytes: Uint8Array;
  mediaType: FileMediaType;
  name: string;
}

/**
 * The files of one message against the limits and the types: each refusal says what to change.
 * `stored`: the bytes the conversation holds already.
 */
export function checkFiles(files: readonly IncomingFile[], limits: FileLimits, stored: number): ConversationResult<CheckedFile[]> {
  if (files.length > limits.perMessage)
    return fail("too_many_files", `A message carries at most ${limits.perMessage} files; this one has ${files.length}.`, {
      limit: limits.perMessage,
    });
  const checked: CheckedFile[] = [];
  for (const [i, file] of files.entries()) {
    const what = file.name ? `File ${i + 1} ('${safeName(file.name, "")}')` : `File ${i + 1}`;
    if (file.bytes.byteLength === 0) return fail("invalid_file", `${what} is empty.`);
    if (file.bytes.byteLength > limits.maxBytes)
      return fail("file_too_large", `${what} is ${file.bytes.byteLength} bytes; a file may be at most ${limits.maxBytes}.`, {
        size: file.bytes.byteLength,
        limit: limits.maxBytes,
      });
    const sniffed = sniffMediaType(file.bytes);
    const declared = normalType(file.mediaType);
    const markup = sniffed ? undefined : activeMarkup(utf8(file.bytes) ?? "");
    if (markup)
      return fail("unsupported_media_type", `${what} is text with markup a browser would run ("${markup}"): send it without that markup.`, {
        allowed: [...FILE_TYPES],
      });
    if (!sniffed)
      return fail("unsupported_media_type", `${what}'s bytes are none of the types a conversation takes (${FILE_TYPES.join(", ")}).`, {
        allowed: [...FILE_TYPES],
      });
    if (declared && declared !== sniffed)
      return fail("unsupported_media_type", `${what} is declared ${declared}, but its bytes are ${sniffed}: declare what it is.`, {
        allowed: [...FILE_TYPES],
      });
    checked.push({ bytes: file.bytes, mediaType: sniffed, name: safeName(file.name, `file-${i + 1}.${EXTENSIONS[sniffed]}`) });
  }
  const total = stored + checked.reduce((sum, file) => sum + file.bytes.byteLength, 0);
  if (total > limits.perConversation)
    return fail(
      "conversation_files_full",
      `A conversation holds at most ${limits.perConversation} bytes of files; these would make ${total}. Start a new conversation.`,
      { limit: limits.perConversation },
    );
  return ok(checked);
}

const EXTENSIONS: Record<FileMediaType, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/webp": "webp",
  "image/gif": "gif",
  "application/pdf": "pdf",
  "text/plain": "txt",
};

/** A declared type as the checks compare it; none for a type that says nothing (`application/octet-stream`). */
function normalType(declared: string | undefined): string | undefined {
  const type = declared === undefined ? undefined : declared.split(";")[0]!.trim().toLowerCase();
  if (!type || type === "application/octet-stream") return undefined;
  return type === "image/jpg" ? "image/jpeg" : type;
}

/** A file name as user input: no path, no control characters, at most 120 characters. */
export function safeName(name: string | undefined, fallback: string): string {
  const base = (name ?? "")
    .split(/[\\/]/)
    .at(-1)!
    .replace(/[\u0000-\u001f\u007f"]/g, "")
    .trim()
    .slice(0, 120);
  return base || fallback;
}

/** The SHA-256 of the bytes, in hex. */
export async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
