/**
 * A request body whose files' base64 is joined in as bytes after the rest is serialized. A leg's steps send the same
 * pictures again and again; made once a leg as bytes (file-parts.ts), they are copied into each body as they are, and
 * `JSON.stringify` never walks their megabytes nor is a string of them made per step.
 */
import type OpenAI from "openai";
import type { APIPromise } from "openai/core/api-promise";
import type { DataUrlOf, InlineData } from "./file-parts.ts";

export class SplicedJson {
  // Random per body, so no text the model is sent (a user's message) can pass for a stand-in.
  readonly #tag = `spliced-${crypto.randomUUID()}-`;
  readonly #pieces: Array<Uint8Array<ArrayBuffer>> = [];

  /** A data URL whose base64 is a stand-in, replaced by the bytes in `encode`. */
  readonly dataUrl: DataUrlOf = (data: InlineData) => `data:${data.mediaType};base64,${this.#stand(data.base64)}`;

  // Base64's characters need no escaping in a JSON string, nor do the stand-in's: both appear in the JSON as they are.
  #stand(bytes: Uint8Array<ArrayBuffer>): string {
    this.#pieces.push(bytes);
    return `${this.#tag}${this.#pieces.length - 1}.`;
  }

  /**
   * `value` as JSON's UTF-8 bytes, each stand-in replaced by its bytes: a Blob, which the runtime joins once and fetch
   * sends as it is (a Uint8Array body would be zeroed, filled, then copied again by fetch, each step).
   */
  encode(value: unknown): Blob {
    const text = JSON.stringify(value);
    // A body without files is its JSON, not searched once more.
    if (!this.#pieces.length) return new Blob([text]);
    const parts: Array<string | Uint8Array<ArrayBuffer>> = [];
    let from = 0;
    for (let at = text.indexOf(this.#tag); at !== -1; at = text.indexOf(this.#tag, from)) {
      parts.push(text.slice(from, at));
      const end = text.indexOf(".", at + this.#tag.length);
      parts.push(this.#pieces[Number(text.slice(at + this.#tag.length, end))]!);
      from = end + 1;
    }
    parts.push(text.slice(from));
    return new Blob(parts);
  }
}

/**
 * POSTs the body `build` makes to the provider's `path` and streams the answer (`stream: true`), its files' bytes spliced
 * in: the client's own request (its auth, retries, timeout and `fetchOptions`), with the body as bytes it sends as they are.
 */
export function postStreaming<T>(
  client: OpenAI,
  path: string,
  build: (dataUrl: DataUrlOf) => object,
  options: { signal: AbortSignal; fetchOptions: OpenAI.RequestOptions["fetchOptions"] },
): APIPromise<T> {
  const body = new SplicedJson();
  const value = build(body.dataUrl);
  return client.post<T>(path, { body: body.encode(value), headers: { "content-type": "application/json" }, stream: true, ...options });
}
