/**
 * The files' bytes in the FILES bucket (R2), shared between a conversation and its forks: each file
 * is one object (`files/<id>`) and each conversation that holds it one empty marker beside it
 * (`holders/<id>/<conversation>`). A conversation lets go of a file by removing its marker; the
 * bytes go with the last marker, so a fork keeps them after its original is deleted, and neither
 * deletes them early.
 */
import type { FileRef } from "../../runtime/messages.ts";

/** Where a file's bytes are: the object the Worker streams a file from. */
export function fileKey(id: string): string {
  return `files/${id}`;
}

const holderPrefix = (id: string) => `holders/${id}/`;

export class FileBytes {
  readonly #bucket: R2Bucket;

  constructor(bucket: R2Bucket) {
    this.#bucket = bucket;
  }

  /** Stores a new file's bytes, held by `holder`: its marker first, so no moment leaves bytes with no holder to sweep them. */
  async put(file: FileRef, bytes: Uint8Array, holder: string): Promise<void> {
    await this.hold(file.id, holder);
    await this.#bucket.put(fileKey(file.id), bytes, {
      httpMetadata: { contentType: file.mediaType },
      customMetadata: { sha256: file.sha256 },
      sha256: file.sha256,
    });
  }

  /** `holder` holds the file too (a fork). */
  async hold(id: string, holder: string): Promise<void> {
    await this.#bucket.put(`${holderPrefix(id)}${holder}`, new Uint8Array(0));
  }

  /** `holder` lets go of the file; its bytes go once no conversation holds it. */
  async release(id: string, holder: string): Promise<void> {
    await this.#bucket.delete(`${holderPrefix(id)}${holder}`);
    const left = await this.#bucket.list({ prefix: holderPrefix(id), limit: 1 });
    if (left.objects.length === 0) await this.#bucket.delete(fileKey(id));
  }

  /** The file's bytes, or undefined when the bucket has none. */
  async read(id: string): Promise<Uint8Array | undefined> {
    const object = await this.#bucket.get(fileKey(id));
    return object ? new Uint8Array(await object.arrayBuffer()) : undefined;
  }
}
