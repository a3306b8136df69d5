/**
 * The least a turn can do, as this project's chat endpoint is called (POST
 * /v1/conversations/:id/messages { message }, SSE `text-delta` frames back): the object reads its
 * stored messages, stores the new one, sends them all to the provider (streaming Chat Completions,
 * with plain `fetch`), passes each piece of text on as it comes, and stores the answer. No
 * validation, no events kept, no client library: what is left of a cold turn is workerd's.
 */
import { DurableObject } from "cloudflare:workers";

interface Env {
  CONVERSATIONS: DurableObjectNamespace<Floor>;
  OPENAI_BASE_URL: string;
  OPENAI_API_KEY: string;
}

const encoder = new TextEncoder();

export class Floor extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, role TEXT, content TEXT)");
  }

  async turn(message: string): Promise<ReadableStream<Uint8Array>> {
    const sql = this.ctx.storage.sql;
    sql.exec("INSERT INTO messages (role, content) VALUES ('user', ?)", message);
    const messages = sql.exec<{ role: string; content: string }>("SELECT role, content FROM messages ORDER BY id").toArray();
    const res = await fetch(`${this.env.OPENAI_BASE_URL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${this.env.OPENAI_API_KEY}` },
      body: JSON.stringify({ model: "gpt-4o-mini", stream: true, messages }),
    });
    if (!res.body) throw new Error(`the provider answered ${res.status}`);
    let answer = "";
    let tail = "";
    const decoder = new TextDecoder();
    return res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform: (bytes, controller) => {
          const lines = (tail + decoder.decode(bytes, { stream: true })).split("\n");
          tail = lines.pop() ?? "";
          for (const line of lines) {
            if (!line.startsWith("data: {")) continue;
            const delta = (JSON.parse(line.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content;
            if (!delta) continue;
            answer += delta;
            controller.enqueue(encoder.encode(`event: text-delta\ndata: ${JSON.stringify({ delta })}\n\n`));
          }
        },
        flush: () => void sql.exec("INSERT INTO messages (role, content) VALUES ('assistant', ?)", answer),
      }),
    );
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const match = /^\/v1\/conversations\/([^/]+)\/messages$/.exec(new URL(request.url).pathname);
    if (!match) return new Response("ok");
    const { message } = (await request.json()) as { message: string };
    const stream = await env.CONVERSATIONS.getByName(match[1]!).turn(message);
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  },
};
