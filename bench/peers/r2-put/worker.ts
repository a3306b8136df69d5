/**
 * Local R2 alone: `POST /put` stores the body as the conversation's files do (its holder's marker, then the bytes with
 * their type and the SHA-256 R2 checks, given in `x-sha256`: the Worker's own digest is not this bench's); `POST /drop`
 * reads the body the same way and stores nothing. The difference is what local R2 costs workerd for those writes.
 */
interface Env {
  FILES: R2Bucket;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (new URL(request.url).pathname === "/put") {
      const id = crypto.randomUUID();
      const sha256 = request.headers.get("x-sha256") ?? "";
      await env.FILES.put(`holders/${id}/bench`, new Uint8Array(0));
      await env.FILES.put(`files/${id}`, bytes, { httpMetadata: { contentType: "image/png" }, customMetadata: { sha256 }, sha256 });
    }
    return new Response(String(bytes.length));
  },
};
