/**
 * The least a Worker can do for what issue 78's targets measure, with nothing of the project in it:
 * - `POST /image`: keeps the picture's base64 as bytes, once (as a leg keeps them for its steps).
 * - `POST /step[?image]`: one model request to the provider (`x-provider`), read to its end: a short history as JSON,
 *   with `?image` a message with the picture's base64 joined in as bytes, the body a Blob (as src/models/spliced-json.ts).
 * - `POST /take`: a message as JSON; a data URL in its `files` is decoded, its SHA-256 taken and its bytes put in R2.
 * - `POST /take-object`: the same, but the message goes to a Durable Object in one call, its files' bytes as streams (as
 *   src/conversation/files/sent-files.ts does), which it reads whole, takes their SHA-256 of and puts in R2.
 * Each's image − text is what the megabyte costs any Worker: sent once more (a later step), or taken in (a first turn).
 */
import { DurableObject } from "cloudflare:workers";

interface Env {
  FILES: R2Bucket;
  HOLDER: DurableObjectNamespace<Holder>;
}

let picture: Uint8Array | undefined;

async function step(request: Request, image: boolean): Promise<Response> {
  if (image && !picture) return new Response("no picture: POST /image first", { status: 409 });
  const scenario = new URL(request.url).searchParams.get("scenario") ?? "";
  const tag = "PICTURE-HERE";
  const messages = [
    { role: "system", content: "You are the floor of a bench: answer briefly." },
    {
      role: "user",
      content: image
        ? [
            { type: "text", text: "a photo" },
            { type: "image_url", image_url: { url: tag } },
          ]
        : "a photo",
    },
    { role: "assistant", content: "Thanks, I see it." },
    { role: "user", content: `and now? [${scenario}]` },
  ];
  const text = JSON.stringify({ model: "floor", stream: true, messages });
  const at = text.indexOf(tag);
  const body =
    picture && image ? new Blob([text.slice(0, at), "data:image/png;base64,", picture, text.slice(at + tag.length)]) : new Blob([text]);
  const provider = request.headers.get("x-provider") ?? "";
  const answer = await fetch(`${provider}/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const read = await answer.text();
  return new Response(String(read.length), { status: answer.ok ? 200 : 502 });
}

type Message = { message: string; files?: Array<{ url: string }> };

const decoded = (url: string) =>
  (Uint8Array as unknown as { fromBase64(text: string): Uint8Array }).fromBase64(url.slice(url.indexOf(",") + 1));

async function store(bucket: R2Bucket, bytes: Uint8Array): Promise<void> {
  const sha256 = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  await bucket.put(`files/${crypto.randomUUID()}`, bytes, { httpMetadata: { contentType: "image/png" }, sha256 });
}

async function take(request: Request, env: Env, viaObject: boolean): Promise<Response> {
  const body: Message = await request.json();
  const bytes = (body.files ?? []).map((file) => decoded(file.url));
  // Through the object, a message makes one call with or without files (as this project's does): only the bytes differ.
  if (viaObject) await env.HOLDER.get(env.HOLDER.idFromName(body.message)).take(bytes.map((b) => new Response(b).body));
  else for (const file of bytes) await store(env.FILES, file);
  return new Response(String(body.message.length));
}

export class Holder extends DurableObject<Env> {
  async take(bodies: Array<ReadableStream<Uint8Array> | null>): Promise<void> {
    for (const body of bodies) await store(this.env.FILES, new Uint8Array(await new Response(body).arrayBuffer()));
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/image") {
      const dataUrl = await request.text();
      picture = new TextEncoder().encode(dataUrl.slice(dataUrl.indexOf(",") + 1));
      return new Response(String(picture.length));
    }
    if (path === "/step") return step(request, new URL(request.url).searchParams.has("image"));
    if (path === "/take" || path === "/take-object") return take(request, env, path === "/take-object");
    return new Response("no such path", { status: 404 });
  },
};
