/**
 * Local R2 alone: `POST /put` stores the body as the conversation's files do (its holder's marker, then the bytes with
 * their type and the SHA-256 R2 checks, given in `x-sha256`: the Worker's own digest is not this bench's) and answers
 * its key; `POST /drop` reads the body the same way and stores nothing. `GET /get/<key>` reads a stored file's bytes
 * as a leg does; `GET /none` reads nothing. The differences are what local R2 costs workerd for those writes and that read.
 */
interface Env {
  FILES: R2Bucket;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path.startsWith("/get/")) {
      const object = await env.FILES.get(path.slice("/get/".length));
      return new Response(String(object ? (await object.arrayBuffer()).byteLength : -1));
    }
    if (request.method === "GET") return new Response("0");
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (path !== "/put") return new Response("");
    const id = crypto.randomUUID();
    const sha256 = request.headers.get("x-sha256") ?? "";
    await env.FILES.put(`holders/${id}/bench`, new Uint8Array(0));
    await env.FILES.put(`files/${id}`, bytes, { httpMetadata: { contentType: "image/png" }, customMetadata: { sha256 }, sha256 });
    return new Response(`files/${id}`);
  },
};
