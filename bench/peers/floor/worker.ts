/**
 * The ways an SSE turn's bytes can reach the client, with nothing else in them: a bare answer, an
 * RPC call to a Durable Object, `n` chunks streamed by the Worker itself, by an RPC method's
 * ReadableStream (as this project's turns are) and by the object's own `fetch`. Each chunk waits a
 * millisecond first, as a turn's events wait for the provider.
 */
import { DurableObject } from "cloudflare:workers";

const encoder = new TextEncoder();

function frames(n: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        if (sent++ === n) return controller.close();
        controller.enqueue(encoder.encode(`id: ${sent}\nevent: text-delta\ndata: ${JSON.stringify({ delta: "x".repeat(200) })}\n\n`));
      },
    },
    { highWaterMark: 0 },
  );
}

const sse = (body: ReadableStream<Uint8Array>) => new Response(body, { headers: { "content-type": "text/event-stream" } });

export class Streamer extends DurableObject {
  async answer(): Promise<string> {
    return "ok";
  }
  async stream(n: number): Promise<ReadableStream<Uint8Array>> {
    return frames(n);
  }
  override async fetch(request: Request): Promise<Response> {
    return sse(frames(Number(new URL(request.url).searchParams.get("n"))));
  }
}

export default {
  async fetch(request: Request, env: { OBJECT: DurableObjectNamespace<Streamer> }): Promise<Response> {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get("n") ?? 0);
    const object = env.OBJECT.getByName("one");
    switch (url.pathname) {
      case "/call":
        return new Response(await object.answer());
      case "/local":
        return sse(frames(n));
      case "/rpc":
        return sse(await object.stream(n));
      case "/fetch":
        return object.fetch(request);
      default:
        return new Response("bare");
    }
  },
};
