/**
 * The clients of the peer bench, each speaking its Worker's own protocol: this project's chat
 * endpoint (POST a message, read Server-Sent Events) and its conversation WebSocket (a message
 * frame, the events as JSON frames), and AIChatAgent's WebSocket chat protocol
 * (`cf_agent_use_chat_request` with the whole UI message list, as `useAgentChat` sends it; the
 * answer as `cf_agent_use_chat_response` chunks, assembled with the AI SDK's `readUIMessageStream`).
 */
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";

/**
 * When a turn's text arrived: from sending the message to the first and last text delta, the gaps
 * between deltas, and each delta's arrival as the text's length so far and the epoch time (set
 * against the fake provider's send times by `deliveryDelays`).
 */
export interface TurnTiming {
  firstMs: number;
  totalMs: number;
  gaps: number[];
  /** Absent where a client does not read the text (A2A's bench counts artifact frames). */
  arrivals?: Array<[chars: number, at: number]>;
}

/** The clock the fake provider stamps its sends with: epoch milliseconds, fractional. */
export const epochNow = () => performance.timeOrigin + performance.now();

/** Notes the arrival of text deltas; `timing` turns the notes into a `TurnTiming`. */
class Arrivals {
  readonly stamps: number[] = [];
  readonly arrivals: Array<[number, number]> = [];
  #chars = 0;

  note(delta: string): void {
    this.stamps.push(performance.now());
    this.arrivals.push([(this.#chars += delta.length), epochNow()]);
  }

  timing(start: number, end: number): TurnTiming {
    const { stamps, arrivals } = this;
    return { firstMs: (stamps[0] ?? end) - start, totalMs: end - start, gaps: stamps.slice(1).map((t, i) => t - stamps[i]!), arrivals };
  }
}

/**
 * Delivery delay per piece of text: when it reached the client (the first delta that carried its
 * last character) less when the provider sent it. Unlike the gaps between deltas, it tells a
 * stream that kept pace from one that arrived late or bunched.
 */
export function deliveryDelays(sent: ReadonlyArray<[number, number]>, arrivals: ReadonlyArray<[number, number]>): number[] {
  let a = 0;
  return sent.flatMap(([chars, at]) => {
    while (a < arrivals.length && arrivals[a]![0] < chars) a++;
    return a < arrivals.length ? [arrivals[a]![1] - at] : [];
  });
}

/** Sends a message to this project's chat endpoint; the answer's body is its SSE stream. */
export async function oursPost(url: string, conversation: string, text: string): Promise<Response & { body: ReadableStream<Uint8Array> }> {
  const res = await fetch(`${url}/v1/conversations/${conversation}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: text }),
  });
  if (!res.ok || !res.body) throw new Error(`ours: POST answered ${res.status}: ${await res.text()}`);
  return res as Response & { body: ReadableStream<Uint8Array> };
}

/** A conversation with this project's Worker, over its chat endpoint. */
export async function oursTurn(url: string, conversation: string, text: string): Promise<TurnTiming> {
  const start = performance.now();
  const res = await oursPost(url, conversation, text);
  const seen = new Arrivals();
  let tail = "";
  const decoder = new TextDecoder();
  for await (const bytes of res.body as unknown as AsyncIterable<Uint8Array>) {
    const frames = (tail + decoder.decode(bytes, { stream: true })).split("\n\n");
    tail = frames.pop() ?? "";
    for (const frame of frames) {
      if (frame.includes("event: text-delta")) seen.note(deltaOf(frame));
      if (frame.includes("event: error")) throw new Error(`ours: the turn failed: ${frame}`);
    }
  }
  return seen.timing(start, performance.now());
}

/** The text of an SSE `text-delta` frame. */
function deltaOf(frame: string): string {
  const data = frame.split("\n").find((line) => line.startsWith("data: "));
  return data ? ((JSON.parse(data.slice(6)) as { delta?: string }).delta ?? "") : "";
}

/** A conversation with this project's Worker over its hibernating WebSocket: a `message` frame starts a turn. */
export class OursSocket {
  readonly #ws: WebSocket;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
  }

  /** Connects after the conversation's last event (`after`), so only new turns' frames arrive. */
  static async open(url: string, conversation: string): Promise<OursSocket> {
    const view = (await (await fetch(`${url}/v1/conversations/${conversation}?limit=1`)).json()) as { lastEventId?: number };
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/v1/conversations/${conversation}/socket?after=${view.lastEventId ?? 0}`);
    await new Promise((resolve, reject) => {
      ws.addEventListener("open", resolve);
      ws.addEventListener("error", reject);
    });
    return new OursSocket(ws);
  }

  turn(text: string): Promise<TurnTiming> {
    const seen = new Arrivals();
    const start = performance.now();
    return new Promise((resolve, reject) => {
      const onFrame = (event: MessageEvent) => {
        const frame = JSON.parse(String(event.data)) as { type: string; data?: { delta?: string } };
        if (frame.type === "text-delta") seen.note(frame.data?.delta ?? "");
        if (frame.type === "error") reject(new Error(`ours (socket): ${JSON.stringify(frame.data)}`));
        if (frame.type !== "done" && frame.type !== "error") return;
        this.#ws.removeEventListener("message", onFrame);
        resolve(seen.timing(start, performance.now()));
      };
      this.#ws.addEventListener("message", onFrame);
      this.#ws.send(JSON.stringify({ type: "message", message: text }));
    });
  }

  close(): void {
    this.#ws.close();
  }
}

/** What this project's Durable Object wrote for the conversation's last turn. */
export async function oursLastTurnStorage(url: string, conversation: string): Promise<{ rows: number; bytes: number; messages: number }> {
  const view = (await (await fetch(`${url}/v1/conversations/${conversation}?limit=1`)).json()) as {
    lastTurnStorage: { rowsWritten: number; bytesWritten: number };
    page: { total: number };
  };
  return { rows: view.lastTurnStorage.rowsWritten, bytes: view.lastTurnStorage.bytesWritten, messages: view.page.total };
}

/** A conversation with the peer over its WebSocket chat protocol, keeping the UI messages as its client does. */
export class PeerChat {
  readonly #ws: WebSocket;
  readonly #url: string;
  readonly #name: string;
  messages: UIMessage[] = [];
  #listeners = new Set<(data: { type: string; id?: string; body?: string; done?: boolean; error?: boolean }) => void>();

  private constructor(ws: WebSocket, url: string, name: string) {
    this.#ws = ws;
    this.#url = url;
    this.#name = name;
    ws.addEventListener("message", (event) => {
      const data = JSON.parse(String(event.data)) as { type: string; messages?: UIMessage[] };
      for (const listener of this.#listeners) listener(data);
    });
  }

  /** Connects; the server sends the stored messages on connect, which become the client's list. */
  static async open(url: string, name: string): Promise<PeerChat> {
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/agents/chat-agent/${name}`);
    const chat = new PeerChat(ws, url, name);
    const stored = new Promise<void>((resolve) => {
      const listener = (data: { type: string; messages?: UIMessage[] }) => {
        if (data.type !== "cf_agent_chat_messages") return;
        chat.messages = data.messages ?? [];
        chat.#listeners.delete(listener);
        resolve();
      };
      chat.#listeners.add(listener);
    });
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener("open", () => resolve(), { once: true });
      ws.addEventListener("error", () => reject(new Error(`peer: cannot connect to ${url}`)), { once: true });
    });
    // A new chat has nothing stored and may send no list: do not wait long for one.
    await Promise.race([stored, new Promise((resolve) => setTimeout(resolve, 300))]);
    return chat;
  }

  async turn(text: string): Promise<TurnTiming> {
    const id = crypto.randomUUID().slice(0, 8);
    this.messages.push({ id: `u-${id}`, role: "user", parts: [{ type: "text", text }] });
    const seen = new Arrivals();
    const start = performance.now();
    let push: (chunk: UIMessageChunk) => void = () => {};
    let finish: (error?: Error) => void = () => {};
    const chunks = new ReadableStream<UIMessageChunk>({
      start(controller) {
        push = (chunk) => controller.enqueue(chunk);
        finish = (error) => (error ? controller.error(error) : controller.close());
      },
    });
    const listener = (data: { type: string; id?: string; body?: string; done?: boolean; error?: boolean }) => {
      if (data.type !== "cf_agent_use_chat_response" || data.id !== id) return;
      if (data.error) return finish(new Error(`peer: ${data.body}`));
      if (data.body?.trim()) {
        const chunk = JSON.parse(data.body) as UIMessageChunk;
        if (chunk.type === "text-delta") seen.note(chunk.delta);
        push(chunk);
      }
      if (data.done) finish();
    };
    this.#listeners.add(listener);
    this.#ws.send(
      JSON.stringify({
        type: "cf_agent_use_chat_request",
        id,
        init: { method: "POST", body: JSON.stringify({ messages: this.messages, trigger: "submit-message" }) },
      }),
    );
    let assistant: UIMessage | undefined;
    // A turn that never ends (a lost frame, a wedged agent) fails the bench instead of hanging it.
    const deadline = setTimeout(() => finish(new Error(`peer: no end of turn ${id} after 120 s`)), 120_000);
    try {
      for await (const message of readUIMessageStream({ stream: chunks, terminateOnError: true })) assistant = message;
    } finally {
      clearTimeout(deadline);
      this.#listeners.delete(listener);
    }
    const end = performance.now();
    if (assistant) this.messages.push(assistant);
    return seen.timing(start, end);
  }

  /** Rows and bytes the peer's SQL has written so far (its instrumentation), and its message count. */
  async written(): Promise<{ rows: number; bytes: number; messages: number }> {
    const stats = (await (await fetch(`${this.#url}/agents/chat-agent/${this.#name}/stats`)).json()) as {
      rowsWritten: number;
      bytesWritten: number;
      messages: number;
    };
    return { rows: stats.rowsWritten, bytes: stats.bytesWritten, messages: stats.messages };
  }

  close(): void {
    this.#ws.close();
  }
}
