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
  readonly #pieces: Uint8Array[] = [];

  /** A data URL whose base64 is a stand-in, replaced by the bytes in `encode`. */
  readonly dataUrl: DataUrlOf = (data: InlineData) => `data:${data.mediaType};base64,${this.#stand(data.base64)}`;

  // Base64's characters need no escaping in a JSON string, nor do the stand-in's: both appear in the JSON as they are.
  #stand(bytes: Uint8Array): string {
    this.#pieces.push(bytes);
    return `${this.#tag}${this.#pieces.length - 1}.`;
  }

  /** `value` as JSON's UTF-8 bytes, each stand-in replaced by its bytes. */
  encode(value: unknown): Uint8Array {
    const text = JSON.stringify(value);
    const encoder = new TextEncoder();
    // A body without files is its JSON's bytes, not searched or copied once more.
    if (!this.#pieces.length) return encoder.encode(text);
    const parts: Uint8Array[] = [];
    let from = 0;
    for (let at = text.indexOf(this.#tag); at !== -1; at = text.indexOf(this.#tag, from)) {
      parts.push(encoder.encode(text.slice(from, at)));
      const end = text.indexOf(".", at + this.#tag.length);
      parts.push(this.#pieces[Number(text.slice(at + this.#tag.length, end))]!);
      from = end + 1;
    }
    parts.push(encoder.encode(text.slice(from)));
    return joined(parts);
  }
}

function joined(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((size, part) => size + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
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
