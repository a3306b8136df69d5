/**
 * A request's files in a provider's wire format: images as image parts, PDFs as file parts, plain
 * text as text, each from the bytes the request's file port reads (sent as data URLs: no provider
 * needs to reach the store), or an image by the short-lived link the port gives, where it gives one. A file that cannot
 * be read is described in words, so a conversation whose file is gone still goes on.
 */
import type { FileRef, Message } from "../runtime/messages.ts";
import type { ModelRequest } from "../runtime/ports/model-port.ts";

/**
 * A file's bytes for a data URL: its base64 as that text's ASCII bytes, made once a leg and joined into each request
 * body as they are (spliced-json.ts).
 */
export interface InlineData {
  /** The file's media type, the data URL's. */
  mediaType: string;
  /** The base64 of the file's bytes, as that text's ASCII bytes. */
  base64: Uint8Array<ArrayBuffer>;
}

/** What an adapter sends for one file: its bytes (or an image's link, or its text), or words that say it could not be read. */
export type FileContent =
  | { kind: "image"; file: FileRef; url: string | InlineData }
  | { kind: "pdf"; file: FileRef; data: InlineData }
  | { kind: "text"; file: FileRef; text: string };

/** How an adapter writes a file's data URL into its request: as a string, or as a stand-in a spliced body replaces. */
export type DataUrlOf = (data: InlineData) => string;

/** A data URL as a string, whole. */
export const dataUrlText: DataUrlOf = (data) => `data:${data.mediaType};base64,${new TextDecoder().decode(data.base64)}`;

/** An image's URL in a request: its link, or its data URL as `dataUrl` writes it. */
export function imageUrl(url: string | InlineData, dataUrl: DataUrlOf): string {
  return typeof url === "string" ? url : dataUrl(url);
}

/** Each file the request's messages carry, read once, by its id. */
export async function readRequestFiles(request: Pick<ModelRequest, "messages" | "files">): Promise<Map<string, FileContent>> {
  const refs = new Map<string, FileRef>();
  for (const message of request.messages) for (const file of filesOf(message)) refs.set(file.id, file);
  const read = await Promise.all([...refs.values()].map(async (file) => [file.id, await contentOf(file, request.files)] as const));
  return new Map(read);
}

/** The files a message carries: a user's attachments. */
export function filesOf(message: Message): readonly FileRef[] {
  return message.role === "user" ? (message.files ?? []) : [];
}

/** A file's content for a provider, made once per leg where the request's port keeps what is made of its files. */
function contentOf(file: FileRef, store: ModelRequest["files"]): Promise<FileContent> {
  return store?.kept ? store.kept(file, "content", () => encode(file, store)) : encode(file, store);
}

async function encode(file: FileRef, store: ModelRequest["files"]): Promise<FileContent> {
  // An image the provider fetches by a link is never read here.
  const link = file.mediaType.startsWith("image/") ? await store?.linkTo?.(file).catch(() => undefined) : undefined;
  if (link) return { kind: "image", file, url: link };
  const bytes = await store?.read(file).catch(() => undefined);
  if (!bytes) return { kind: "text", file, text: `${describe(file)}: it could not be read.` };
  if (file.mediaType.startsWith("image/")) return { kind: "image", file, url: inline(file.mediaType, bytes) };
  if (file.mediaType === "application/pdf") return { kind: "pdf", file, data: inline(file.mediaType, bytes) };
  return { kind: "text", file, text: `${describe(file)}:\n${new TextDecoder().decode(bytes)}` };
}

/** A file in words, as the model reads of it where its bytes are not sent. */
export function describe(file: FileRef): string {
  return `[File "${file.name}", ${file.mediaType}, ${file.size} bytes]`;
}

function inline(mediaType: string, bytes: Uint8Array): InlineData {
  return { mediaType, base64: base64Bytes(bytes) };
}

/** `Uint8Array.prototype.toBase64` where the runtime has it (workerd does), several times faster than `btoa` on a binary string. */
const toBase64 = (Uint8Array.prototype as { toBase64?: (this: Uint8Array) => string }).toBase64;
/** Bytes encoded a piece at a time: a multiple of 3, so each piece's base64 has no padding and they join as one. */
const PIECE = 3 * 0x2000;

/**
 * The base64 of bytes as that text's ASCII bytes, written a piece at a time into one buffer: the whole text of a
 * megabyte as one string would be 1.4 MB in V8's large-object space each leg, which its collector then marks and
 * sweeps (a later turn's largest cost in `bench:files-native -- --later` before this); a piece's string dies young.
 */
export function base64Bytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(4 * Math.ceil(bytes.length / 3));
  const encoder = new TextEncoder();
  for (let i = 0; i < bytes.length; i += PIECE) encoder.encodeInto(base64(bytes.subarray(i, i + PIECE)), out.subarray((i / 3) * 4));
  return out;
}

/** A piece's base64 with web standards only (else `btoa`: a piece is few enough bytes for one `fromCharCode`). */
function base64(piece: Uint8Array): string {
  return toBase64 ? toBase64.call(piece) : btoa(String.fromCharCode(...piece));
}
