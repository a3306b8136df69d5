/** A conversation's files over HTTP: an upload for a message to carry by id, and a file read back by whoever may read the conversation. */
import type { Hono } from "hono";
import { fileKey } from "../conversation/files/file-bytes.ts";
import { FILE_TYPES } from "../conversation/files/file-checks.ts";
import type { FileRef } from "../runtime/messages.ts";
import type { Env } from "../env.ts";
import type { ConversationEnv } from "./app-env.ts";
import type { ConversationClient } from "./conversation-client.ts";
import { HttpError } from "./errors.ts";
import { expectOk } from "./request.ts";

/** Types a browser shows in place; anything else is a download (a PDF viewer runs scripts). */
const INLINE = new Set(["image/png", "image/jpeg", "image/webp", "image/gif", "text/plain"]);

export function registerFileRoutes(app: Hono<ConversationEnv>): void {
  // The raw bytes as the body, their type as Content-Type, the name as ?name=: 201 with the file's reference.
  app.post("/files", async (c) => {
    const mediaType = c.req.header("content-type");
    if (!mediaType)
      throw new HttpError(
        "unsupported_media_type",
        `Send the file's bytes as the body and its type as Content-Type (${FILE_TYPES.join(", ")}).`,
      );
    const name = c.req.query("name");
    // The body goes to the conversation's object as the stream it is: the Worker never holds the file.
    const sent = { body: c.req.raw.body, ...(name ? { name } : {}), mediaType };
    const [file] = await expectOk(c.var.client.uploadFiles([sent]));
    return c.json({ file }, 201);
  });

  app.get("/files/:fileId", (c) => fileResponse(c.env, c.var.client, c.req.param("fileId")));
}

/** A file as the conversation's client may read it (the client's requester is checked by the conversation), from the bucket. */
export async function fileResponse(env: Env, client: ConversationClient, fileId: string): Promise<Response> {
  const ref = await expectOk(client.fileOf(fileId));
  if (!env.FILES) throw new HttpError("files_not_configured", "This Worker binds no FILES (an R2 bucket): bind it in wrangler.toml.");
  const object = await env.FILES.get(fileKey(ref.id));
  if (!object) throw new HttpError("file_not_found", `The file '${ref.id}' is gone from the bucket.`);
  return new Response(object.body, { headers: fileHeaders(ref) });
}

/** Its type and name, never sniffed, never run: shown in place only when it is an image or text, in a sandbox with no sources. */
function fileHeaders(ref: FileRef): Headers {
  const ascii = ref.name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const disposition = INLINE.has(ref.mediaType) ? "inline" : "attachment";
  return new Headers({
    "content-type": ref.mediaType === "text/plain" ? "text/plain; charset=utf-8" : ref.mediaType,
    "content-length": String(ref.size),
    "content-disposition": `${disposition}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(ref.name)}`,
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    "cache-control": "private, max-age=3600",
    etag: `"${ref.sha256}"`,
  });
}
