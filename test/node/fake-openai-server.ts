/**
 * A fake OpenAI-compatible server for tests, speaking the real Chat Completions streaming wire
 * format over HTTP on 127.0.0.1. Answers are scripted per scenario: a request belongs to the
 * scenario whose id appears anywhere in its body (tests put it in the first user message), so
 * test files running in parallel never share a script. Every request is recorded.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

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
      /** Stops after this many chunks until the test posts to /__scenarios/<id>/release. */
      holdAfter?: number;
    }
  | { raw: string }
  | { status: number; error: { message: string; type?: string }; headers?: Record<string, string> };

interface Scenario {
  answers: ScriptedAnswer[];
  requests: unknown[];
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
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(error) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  server.unref();
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function handle(scenarios: Map<string, Scenario>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req);
  const url = new URL(req.url ?? "/", "http://fake");
  if (req.method === "POST" && url.pathname === "/__scenarios") {
    const { id, answers } = JSON.parse(body) as { id: string; answers: ScriptedAnswer[] };
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    scenarios.set(id, { answers, requests: [], release, released });
    return json(res, 200, { ok: true });
  }
  if (req.method === "POST" && url.pathname.startsWith("/__scenarios/") && url.pathname.endsWith("/release")) {
    scenarios.get(decodeURIComponent(url.pathname.split("/")[2]!))?.release();
    return json(res, 200, { ok: true });
  }
  if (req.method === "GET" && url.pathname.startsWith("/__scenarios/")) {
    const scenario = scenarios.get(decodeURIComponent(url.pathname.slice("/__scenarios/".length)));
    if (!scenario) return json(res, 404, { error: "no such scenario" });
    return json(res, 200, { requests: scenario.requests, remaining: scenario.answers.length });
  }
  if (req.method === "POST" && url.pathname.endsWith("/chat/completions")) {
    const match = [...scenarios].find(([id]) => body.includes(id));
    if (!match) return json(res, 500, { error: { message: "fake server: no scenario id in this request" } });
    const [, scenario] = match;
    const request = JSON.parse(body) as { model: string };
    scenario.requests.push(request);
    const answer = scenario.answers.shift();
    if (!answer) return json(res, 500, { error: { message: "fake server: the scenario has no answer left for this request" } });
    if ("status" in answer) return json(res, answer.status, { error: answer.error }, answer.headers);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if ("raw" in answer) {
      res.end(answer.raw);
      return;
    }
    for (const [n, chunk] of chatChunks(answer, request.model).entries()) {
      if (n === answer.holdAfter) await scenario.released;
      res.write(`data: ${JSON.stringify(chunk)}\n\n`);
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    }
    res.end("data: [DONE]\n\n");
    return;
  }
  json(res, 404, { error: { message: `fake server: no route ${req.method} ${url.pathname}` } });
}

/** The chunks OpenAI sends: role first, content in small deltas, each tool call opened then its arguments in pieces. */
export function chatChunks(answer: { text?: string; toolCalls?: ScriptedToolCall[]; finishReason?: string }, model: string): unknown[] {
  const base = { id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1767225600, model, system_fingerprint: null };
  const chunk = (delta: unknown, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const chunks: unknown[] = [chunk({ role: "assistant", content: answer.toolCalls?.length && !answer.text ? null : "" })];
  for (const piece of pieces(answer.text ?? "", 4)) chunks.push(chunk({ content: piece }));
  for (const [index, call] of (answer.toolCalls ?? []).entries()) {
    chunks.push(chunk({ tool_calls: [{ index, id: call.id ?? `call_fake_${index}_${Math.random().toString(36).slice(2, 10)}`, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const piece of pieces(call.arguments, Math.max(7, Math.ceil(call.arguments.length / 50)))) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  }
  chunks.push(chunk({}, answer.finishReason ?? (answer.toolCalls?.length ? "tool_calls" : "stop")));
  chunks.push({ ...base, choices: [], usage: { prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 } });
  return chunks;
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
