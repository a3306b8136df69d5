/**
 * A fake OpenAI-compatible server for tests, speaking the real streaming wire formats of Chat
 * Completions and the Responses API over HTTP on 127.0.0.1. Answers are scripted per scenario:
 * a request belongs to the scenario whose id appears anywhere in its body (tests put it in the
 * first user message), so test files running in parallel never share a script. Every request is
 * recorded, and faults can be injected: error statuses with Retry-After, streams cut short,
 * connections dropped, streams that stall. `{{key}}` in an error message or a raw body is replaced
 * by the key the request carried, as providers that echo a rejected key do.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type DecodedExport, decodeOtlpJson } from "./otlp-decode.ts";

export interface ScriptedToolCall {
  id?: string;
  name: string;
  arguments: string;
}

export type ScriptedAnswer =
  | {
      text?: string;
      toolCalls?: ScriptedToolCall[];
      finishReason?: string;
      delayMs?: number;
      /** Waits this long after the headers before the first chunk: a provider's time to first token. */
      firstTokenMs?: number;
      /** Stops after this many chunks until the test posts to /__scenarios/<id>/release. */
      holdAfter?: number;
      /** Sends this many chunks, then ends the body cleanly without the terminating event. */
      endAfter?: number;
      /** Sends this many chunks, then destroys the connection. */
      dropAfter?: number;
      /** Sends this many chunks, then sends nothing more (the client's idle timeout must fire). */
      stallAfter?: number;
      /** Characters of text a chunk carries (default 4). */
      chunkChars?: number;
      /** The usage the final chunk reports (default 42 prompt and 7 completion tokens). */
      usage?: { promptTokens: number; completionTokens: number };
    }
  | { raw: string }
  | { status: number; error: { message: string; type?: string; code?: string }; headers?: Record<string, string> }
  /** An error answered with a body that is not JSON, such as a proxy's HTML error page. */
  | { status: number; body: string; headers?: Record<string, string> };

interface Scenario {
  answers: ScriptedAnswer[];
  requests: unknown[];
  /** False: requests are answered and not kept (a bench sending megabytes keeps the fake server's memory flat). */
  keepRequests: boolean;
  /** Requests whose client went away before the answer was complete. */
  aborted: number;
  release: () => void;
  released: Promise<void>;
}

export interface FakeOpenAI {
  url: string;
  close(): Promise<void>;
}

export async function startFakeOpenAI(port = 0): Promise<FakeOpenAI> {
  const scenarios = new Map<string, Scenario>();
  const server = createServer((req, res) => {
    handle(scenarios, req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(error) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  server.unref();
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * An OTLP/HTTP receiver beside the provider: POST /otlp/<name>/v1/traces records each export under
 * <name> (GET /otlp/<name> lists them); a name starting with `busy` answers 429 to its first export,
 * one starting with `slow` answers after 3 s. Each export is also kept as decoded by OpenTelemetry's own protos.
 */
const otlpExports = new Map<
  string,
  Array<{ body: unknown; decoded?: DecodedExport; headers: Record<string, string | string[] | undefined> }>
>();

async function handleOtlp(url: URL, req: IncomingMessage, res: ServerResponse, body: string): Promise<void> {
  const name = decodeURIComponent(url.pathname.split("/")[2] ?? "");
  const received = otlpExports.get(name) ?? [];
  otlpExports.set(name, received);
  if (req.method === "GET") return json(res, 200, received);
  if (name.startsWith("busy") && received.length === 0) {
    received.push({ body: null, headers: req.headers });
    return json(res, 429, {}, { "retry-after": "0" });
  }
  if (name.startsWith("slow")) await new Promise((resolve) => setTimeout(resolve, 3000));
  const parsed = JSON.parse(body) as unknown;
  received.push({ body: parsed, decoded: decodeOtlpJson(parsed), headers: req.headers });
  return json(res, 200, {});
}

/**
 * An app's webhook beside the provider: POST /hooks/<name> records each delivery (its body, headers
 * and the status answered; GET /hooks/<name> lists them); POST /hooks/<name>/answer { count, status, match }
 * makes the next `count` deliveries whose body contains `match` (a test's conversation id, so
 * tests that share the hook do not take each other's answers) answer `status` (503 unless given;
 * a 204 has no body).
 */
const hookDeliveries = new Map<string, Array<{ body: string; headers: IncomingMessage["headers"]; status: number }>>();
const hookAnswers = new Map<string, { count: number; status: number; match: string }>();

function handleHook(url: URL, req: IncomingMessage, res: ServerResponse, body: string): void {
  const [name = "", control] = url.pathname.slice("/hooks/".length).split("/");
  if (control === "answer") {
    const { count, status = 503, match = "" } = JSON.parse(body) as { count: number; status?: number; match?: string };
    hookAnswers.set(name, { count, status, match });
    return json(res, 200, {});
  }
  const received = hookDeliveries.get(name) ?? [];
  hookDeliveries.set(name, received);
  if (req.method === "GET") return json(res, 200, received);
  const answer = hookAnswers.get(name);
  const answered = answer !== undefined && answer.count > 0 && body.includes(answer.match);
  if (answered) hookAnswers.set(name, { ...answer, count: answer.count - 1 });
  const status = answered ? answer.status : 200;
  received.push({ body, headers: req.headers, status });
  if (status === 204) return void res.writeHead(204).end();
  return json(res, status, {});
}

/** Vectors of words: each word hashed into one of 64 dimensions (so texts sharing words point alike), as OpenAI's wire has them. */
export function fakeEmbedding(text: string): number[] {
  const vector = new Array<number>(64).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (const ch of word) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
    vector[h % 64]! += 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((v) => v / norm);
}

/** POST /v1/embeddings: `{ model, input }` (a string or strings) answered as OpenAI does; every request kept. */
export const embeddingRequests: Array<{ model: string; input: string[]; authorization: string | null }> = [];
function handleEmbeddings(req: IncomingMessage, res: ServerResponse, body: string): void {
  const { model, input } = JSON.parse(body) as { model: string; input: string | string[] };
  const inputs = Array.isArray(input) ? input : [input];
  embeddingRequests.push({ model, input: inputs, authorization: req.headers.authorization ?? null });
  const data = inputs.map((text, index) => ({ object: "embedding", index, embedding: fakeEmbedding(text) }));
  json(res, 200, { object: "list", data, model, usage: { prompt_tokens: inputs.length, total_tokens: inputs.length } });
}

async function handle(scenarios: Map<string, Scenario>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req);
  const url = new URL(req.url ?? "/", "http://fake");
  if (url.pathname.startsWith("/otlp/")) return handleOtlp(url, req, res, body);
  if (url.pathname.startsWith("/hooks/")) return handleHook(url, req, res, body);
  if (req.method === "POST" && url.pathname === "/__scenarios") {
    const { id, answers, keepRequests = true } = JSON.parse(body) as { id: string; answers: ScriptedAnswer[]; keepRequests?: boolean };
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    scenarios.set(id, { answers, requests: [], keepRequests, aborted: 0, release, released });
    return json(res, 200, { ok: true });
  }
  if (req.method === "POST" && url.pathname.startsWith("/__scenarios/") && url.pathname.endsWith("/release")) {
    scenarios.get(decodeURIComponent(url.pathname.split("/")[2]!))?.release();
    return json(res, 200, { ok: true });
  }
  if (req.method === "GET" && url.pathname.startsWith("/__scenarios/")) {
    const scenario = scenarios.get(decodeURIComponent(url.pathname.slice("/__scenarios/".length)));
    if (!scenario) return json(res, 404, { error: "no such scenario" });
    return json(res, 200, { requests: scenario.requests, remaining: scenario.answers.length, aborted: scenario.aborted });
  }
  if (req.method === "POST" && url.pathname.endsWith("/embeddings")) return handleEmbeddings(req, res, body);
  const api = url.pathname.endsWith("/chat/completions") ? "chat" : url.pathname.endsWith("/responses") ? "responses" : null;
  if (req.method !== "POST" || !api) return json(res, 404, { error: { message: `fake server: no route ${req.method} ${url.pathname}` } });

  // The longest id that appears wins: a script "…1" never takes the requests of "…10".
  const match = [...scenarios].filter(([id]) => body.includes(id)).sort(([a], [b]) => b.length - a.length)[0];
  if (!match) return json(res, 500, { error: { message: "fake server: no scenario id in this request" } });
  const [, scenario] = match;
  const request = JSON.parse(body) as { model: string };
  // When each piece of text left (epoch ms, and the text's length so far): a client's arrival times set against it give delivery delay.
  const textSent: Array<[chars: number, at: number]> = [];
  // How the body was framed: its Content-Length (null when it came chunked) and the bytes that came.
  const framing = { contentLength: req.headers["content-length"] ?? null, bodyBytes: Buffer.byteLength(body) };
  if (scenario.keepRequests)
    scenario.requests.push({ api, ...request, authorization: req.headers.authorization ?? null, textSent, ...framing });
  const answer = scenario.answers.shift();
  if (!answer) return json(res, 500, { error: { message: "fake server: the scenario has no answer left for this request" } });
  const key = (req.headers.authorization ?? "").replace(/^Bearer /, "");
  const echo = (text: string) => text.replaceAll("{{key}}", key);
  if ("body" in answer) {
    res.writeHead(answer.status, { "content-type": "text/html", ...answer.headers });
    res.end(echo(answer.body));
    return;
  }
  if ("status" in answer)
    return json(res, answer.status, { error: { ...answer.error, message: echo(answer.error.message) } }, answer.headers);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  if ("raw" in answer) {
    res.end(echo(answer.raw));
    return;
  }
  let finished = false;
  res.on("close", () => {
    if (!finished) scenario.aborted++;
  });
  const chunks = api === "chat" ? chatChunks(answer, request.model) : [];
  const frames = api === "chat" ? chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`) : responsesFrames(answer, request.model);
  let chars = 0;
  if (answer.firstTokenMs) await new Promise((resolve) => setTimeout(resolve, answer.firstTokenMs));
  for (const [n, frame] of frames.entries()) {
    if (n === answer.holdAfter) await scenario.released;
    if (n === answer.endAfter) {
      finished = true;
      res.end();
      return;
    }
    if (n === answer.dropAfter) {
      // Let what was written reach the client first, then cut the connection.
      if (n > 0) await new Promise((resolve) => setTimeout(resolve, 50));
      res.socket?.destroy();
      return;
    }
    if (n === answer.stallAfter) return;
    res.write(frame);
    const piece = (chunks[n] as { choices?: Array<{ delta?: { content?: string | null } }> } | undefined)?.choices?.[0]?.delta?.content;
    if (piece) textSent.push([(chars += piece.length), performance.timeOrigin + performance.now()]);
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
  }
  finished = true;
  res.end(api === "chat" ? "data: [DONE]\n\n" : "");
}

/** The chunks OpenAI sends: role first, content in small deltas, each tool call opened then its arguments in pieces. */
export function chatChunks(
  answer: {
    text?: string;
    toolCalls?: ScriptedToolCall[];
    finishReason?: string;
    chunkChars?: number;
    usage?: { promptTokens: number; completionTokens: number };
  },
  model: string,
): unknown[] {
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1767225600, model, system_fingerprint: null };
  const chunk = (delta: unknown, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const chunks: unknown[] = [chunk({ role: "assistant", content: answer.toolCalls?.length && !answer.text ? null : "" })];
  for (const piece of pieces(answer.text ?? "", answer.chunkChars ?? 4)) chunks.push(chunk({ content: piece }));
  for (const [index, call] of (answer.toolCalls ?? []).entries()) {
    chunks.push(
      chunk({ tool_calls: [{ index, id: call.id ?? fakeId("call"), type: "function", function: { name: call.name, arguments: "" } }] }),
    );
    for (const piece of pieces(call.arguments, Math.max(7, Math.ceil(call.arguments.length / 50))))
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  }
  chunks.push(chunk({}, answer.finishReason ?? (answer.toolCalls?.length ? "tool_calls" : "stop")));
  const { promptTokens, completionTokens } = answer.usage ?? { promptTokens: 42, completionTokens: 7 };
  chunks.push({
    ...base,
    choices: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  });
  return chunks;
}

/** The Responses API's event stream: a message item with text deltas, then function_call items. */
export function responsesFrames(answer: { text?: string; toolCalls?: ScriptedToolCall[] }, model: string): string[] {
  let sequence = 0;
  const frame = (type: string, fields: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: sequence++ })}\n\n`;
  const response = { id: "resp_fake", object: "response", model, status: "in_progress", output: [] };
  const frames = [frame("response.created", { response }), frame("response.in_progress", { response })];
  let outputIndex = 0;
  if (answer.text) {
    const item = { id: "msg_fake", type: "message", role: "assistant", status: "in_progress", content: [] };
    frames.push(frame("response.output_item.added", { output_index: outputIndex, item }));
    for (const delta of pieces(answer.text, 4))
      frames.push(frame("response.output_text.delta", { item_id: item.id, output_index: outputIndex, content_index: 0, delta }));
    frames.push(
      frame("response.output_item.done", {
        output_index: outputIndex,
        item: { ...item, status: "completed", content: [{ type: "output_text", text: answer.text }] },
      }),
    );
    outputIndex++;
  }
  for (const call of answer.toolCalls ?? []) {
    const item = {
      id: fakeId("fc"),
      type: "function_call",
      status: "in_progress",
      call_id: call.id ?? fakeId("call"),
      name: call.name,
      arguments: "",
    };
    frames.push(frame("response.output_item.added", { output_index: outputIndex, item }));
    for (const delta of pieces(call.arguments, 7))
      frames.push(frame("response.function_call_arguments.delta", { item_id: item.id, output_index: outputIndex, delta }));
    frames.push(frame("response.function_call_arguments.done", { item_id: item.id, output_index: outputIndex, arguments: call.arguments }));
    frames.push(
      frame("response.output_item.done", { output_index: outputIndex, item: { ...item, status: "completed", arguments: call.arguments } }),
    );
    outputIndex++;
  }
  frames.push(
    frame("response.completed", {
      response: { ...response, status: "completed", usage: { input_tokens: 40, output_tokens: 9, total_tokens: 49 } },
    }),
  );
  return frames;
}

function fakeId(prefix: string): string {
  return `${prefix}_fake_${Math.random().toString(36).slice(2, 10)}`;
}

function pieces(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}
