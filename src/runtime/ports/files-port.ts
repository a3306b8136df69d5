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
  /**
   * What is made of a file (an adapter's encoding of it for its provider), made once and kept as long as this port: a
   * leg's port (`readOnceALeg`) keeps it for the leg's steps, which send the same history again. Absent: made each time.
   */
  kept?<T>(file: FileRef, form: string, make: () => Promise<T>): Promise<T>;
  /**
   * A short-lived link the provider fetches the file from, where the host sends files so (images only); undefined: send
   * the bytes.
   */
  linkTo?(file: FileRef): Promise<string | undefined>;
}

/** What one leg keeps of its files at most, bytes and their encodings together; past it, a file is read again when asked. */
export const LEG_FILE_BYTES = 48 * 1024 * 1024;

/**
 * `port` as one leg reads it: each file's bytes read once and each form made of them once (every step of a leg sends the
 * whole history again, its pictures with it), kept until the leg ends and at most `maxBytes` in all. A read that fails
 * is not kept. Saving passes through.
 */
export function readOnceALeg(port: FilePort, maxBytes = LEG_FILE_BYTES): FilePort {
  const kept = new Map<string, Promise<unknown>>();
  let size = 0;
  function keep<T>(key: string, cost: number, make: () => Promise<T>): Promise<T> {
    const known = kept.get(key);
    if (known) return known as Promise<T>;
    const made = make();
    if (size + cost > maxBytes) return made;
    kept.set(key, made);
    size += cost;
    made.catch(() => {
      kept.delete(key);
      size -= cost;
    });
    return made;
  }
  return {
    read: (file) => keep(`bytes:${file.id}`, file.size, () => port.read(file)),
    // An encoding is about a third larger than its bytes (base64).
    kept: (file, form, make) => keep(`${form}:${file.id}`, Math.ceil(file.size * 1.34), make),
    ...(port.save ? { save: (file: NewFile) => port.save!(file) } : {}),
    ...(port.linkTo ? { linkTo: (file: FileRef) => port.linkTo!(file) } : {}),
  };
}
