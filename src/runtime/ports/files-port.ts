/** Where a conversation's files are read from: the host stores their bytes (R2 on Cloudflare); the history holds references. */
import type { FileRef } from "../messages.ts";

/** Reads a file's bytes by its reference: model adapters send them to providers, tools read what the user sent. */
export interface FilePort {
  /** The file's bytes; throws a RuntimeError (`file_not_found`) when the store has none for it. */
  read(file: FileRef): Promise<Uint8Array>;
}
