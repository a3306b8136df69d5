/** A conversation's files in memory, for tests of a network whose tools read or save files (the Worker keeps them in R2). */
import { RuntimeError } from "../runtime/errors.ts";
import type { FileRef } from "../runtime/messages.ts";
import type { FilePort, NewFile } from "../runtime/ports/files-port.ts";

/** A file store in memory: `add` a user's file for a turn's input, read what a tool saved with `text`. */
export class MemoryFiles implements FilePort {
  readonly #bytes = new Map<string, Uint8Array>();

  /** Adds a file as a user's message would carry it: its reference, to put in `TurnInput.files`. */
  async add(file: NewFile): Promise<FileRef> {
    const id = `file-${this.#bytes.size + 1}`;
    this.#bytes.set(id, file.bytes);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(file.bytes)));
    const sha256 = [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
    return { id, mediaType: file.mediaType, name: file.name, size: file.bytes.byteLength, sha256 };
  }

  async read(file: FileRef): Promise<Uint8Array> {
    const bytes = this.#bytes.get(file.id);
    if (!bytes) throw new RuntimeError("file_not_found", `No file '${file.id}'.`);
    return bytes;
  }

  save(file: NewFile): Promise<FileRef> {
    return this.add(file);
  }

  /** A file's bytes as text (a tool's saved text file, in a test's assertion). */
  text(id: string): string | undefined {
    const bytes = this.#bytes.get(id);
    return bytes && new TextDecoder().decode(bytes);
  }
}
