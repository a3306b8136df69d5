/**
 * Files as every way in sends them, mapped onto one shape at the edge (`FileInput`): a data URL
 * with its bytes, or the id of a file uploaded before (`POST …/files`). Inline bytes are uploaded
 * to the conversation first; should the message then be refused, they are let go of, so nothing of
 * a refusal is kept.
 */
import type { ConversationResult } from "../conversation/results.ts";
import type { IncomingFile } from "../conversation/files/file-checks.ts";
import { sentFile } from "../conversation/files/sent-files.ts";
import type { ConversationClient } from "./conversation-client.ts";
import { HttpError } from "./errors.ts";
import { expectOk } from "./request.ts";
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

/**
 * Sends a message with its files: inline ones are uploaded first, then `send` gets every file's id in order; when it is
 * refused, the inline uploads are let go of and its refusal is thrown.
 */
export async function withFiles<T>(
  client: ConversationClient,
  files: readonly FileInput[],
  send: (ids: string[] | undefined) => Promise<ConversationResult<T>>,
  createOwned = false,
): Promise<T> {
  if (!files.length) return expectOk(send(undefined));
  const inline = files.flatMap((file) => ("url" in file ? [fromDataUrl(file.url, file.name, file.mediaType)] : []));
  const uploaded = inline.length ? await expectOk(client.uploadFiles(inline.map(sentFile), { createOwned })) : [];
  let next = 0;
  const ids = files.map((file) => ("fileId" in file ? file.fileId : uploaded[next++]!.id));
  const sent = await send(ids);
  if (!sent.ok && uploaded.length) await client.discardFiles(uploaded.map((file) => file.id));
  return expectOk(Promise.resolve(sent));
}
