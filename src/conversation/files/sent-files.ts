/**
 * Files as the Worker hands them to the conversation's object: each one's bytes as a stream, which RPC pipes across as
 * they are. Bytes among an RPC's arguments go through the structured-clone serializer, a copy on each side in the
 * isolates' own time (about a millisecond a megabyte under `wrangler dev`, bench/RESULTS.md).
 */
import type { IncomingFile } from "./file-checks.ts";

/** A file the Worker sends the conversation's object (`uploadFiles`): its bytes as a stream, as `IncomingFile` says the rest. */
export interface SentFile {
  /** The file's bytes; null for an empty body. */
  body: ReadableStream<Uint8Array> | null;
  /** The type the sender declared; checked against the bytes. */
  mediaType?: string;
  /** The name the sender gave it. */
  name?: string;
}

/** A file whose bytes the Worker holds, sent as a stream. */
export function sentFile({ bytes, ...rest }: IncomingFile): SentFile {
  return { body: new Response(bytes).body, ...rest };
}

/** The files the Worker sent, their bytes read whole for the checks (the Worker's body limit bounds them). */
export function receivedFiles(files: readonly SentFile[]): Promise<IncomingFile[]> {
  return Promise.all(files.map(async ({ body, ...rest }) => ({ bytes: new Uint8Array(await new Response(body).arrayBuffer()), ...rest })));
}
