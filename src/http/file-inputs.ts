/**
 * Files as every way in sends them, mapped onto one shape at the edge (`FileInput`): a data URL
 * with its bytes, or the id of a file uploaded before (`POST …/files`). A data URL's bytes go with
 * the message to the conversation's object, which stores them before the message and lets go of
 * them should the message be refused, so nothing of a refusal is kept.
 */
import type { MessageOptions } from "../conversation/conversation-api.ts";
import type { IncomingFile } from "../conversation/files/file-checks.ts";
import { sentFile } from "../conversation/files/sent-files.ts";
import { HttpError } from "./errors.ts";
import type { FileInput } from "./schemas.ts";

/** The bytes and declared type of a base64 data URL, or the 400 that says what is wrong with it. */
export function fromDataUrl(url: string, name?: string, mediaType?: string): IncomingFile {
  // The header is read apart: a megabyte of base64 is scanned once, by the decoder, which refuses what is not base64.
  const comma = url.indexOf(",");
  const header = comma > 0 ? /^data:([^;,]*)(?:;[^;,=]+=[^;,]*)*;base64$/.exec(url.slice(0, comma)) : null;
  if (!header) throw new HttpError("invalid_file", "A file's `url` must be a base64 data URL: data:<type>;base64,<bytes>.");
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(url.slice(comma + 1));
  } catch {
    throw new HttpError("invalid_file", "A file's data URL is not valid base64.");
  }
  const declared = mediaType ?? header[1];
  return { bytes, ...(declared ? { mediaType: declared } : {}), ...(name ? { name } : {}) };
}

/** `Uint8Array.fromBase64` where the runtime has it (workerd does); else `atob`, byte by byte. */
const nativeFromBase64 = (Uint8Array as { fromBase64?: (text: string) => Uint8Array }).fromBase64;

function fromBase64(text: string): Uint8Array {
  if (nativeFromBase64) return nativeFromBase64(text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** The message's files as the conversation's object takes them (`MessageOptions.files`): ids, and data URLs' bytes. */
export function messageFiles(files: readonly FileInput[]): Pick<MessageOptions, "files"> {
  if (!files.length) return {};
  return { files: files.map((file) => ("fileId" in file ? file.fileId : sentFile(fromDataUrl(file.url, file.name, file.mediaType)))) };
}
