/**
 * Where a conversation's files are read from and saved to: the host stores their bytes (R2 on Cloudflare); the history
 * holds references.
 */
import type { FileRef } from "../messages.ts";

/** A file a tool makes, before it is stored: its bytes, type and name. */
export interface NewFile {
  bytes: Uint8Array;
  mediaType: string;
  name: string;
}

/** Reads a file's bytes by its reference (model adapters send them to providers, tools read what the user sent), and saves new ones. */
export interface FilePort {
  /** The file's bytes; throws a RuntimeError (`file_not_found`) when the store has none for it. */
  read(file: FileRef): Promise<Uint8Array>;
  /** Stores a file a tool made, checked as a user's would be; throws a RuntimeError when it is refused. */
  save?(file: NewFile): Promise<FileRef>;
}
