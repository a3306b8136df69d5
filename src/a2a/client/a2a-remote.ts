/**
 * The remote port over A2A v1.0's JSON-RPC binding, on web standards only (the SDK's client uses
 * Node's `Buffer`): each call is one SendStreamingMessage to the remote's endpoint (found on its
 * agent card, kept once read), through a service binding or `fetch`, with its configured headers,
 * and its Server-Sent Events read as they arrive.
 */
import { errorMessage, RuntimeError } from "../../runtime/errors.ts";
import { headersFor, type HostEnv } from "../../runtime/ports/host-env.ts";
import {
  type RemoteAgentConfig,
  type RemoteEvent,
  type RemoteFetcher,
  type RemotePort,
  type RemoteRequest,
} from "../../runtime/ports/remote-port.ts";
import { sseData } from "../../wire/sse.ts";
import { A2A_VERSION } from "../a2a-wire.ts";
import { remoteInput } from "./remote-input.ts";
import { invalid, readResponse, startReading } from "./task-reader.ts";

const DEFAULT_TIMEOUT_MS = 120_000;
const CARD_PATH = "/.well-known/agent-card.json";

/** Reaches the network's remote agents for one host: its environment gives bindings and header secrets. */
export class A2ARemotes implements RemotePort {
  readonly #env: HostEnv;
  /** Each card's JSON-RPC endpoint, once read. */
  readonly #endpoints = new Map<string, Promise<string>>();

  constructor(env: HostEnv) {
    this.#env = env;
  }

  async *stream(request: RemoteRequest): AsyncIterable<RemoteEvent> {
    const { agent, remote } = request;
    const timeout = AbortSignal.timeout(remote.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const signal = AbortSignal.any([request.signal, timeout]);
    try {
      const response = await this.#send(request, signal);
      yield* readAnswer(startReading(agent, request.state.taskId), response);
    } catch (error) {
      if (!timeout.aborted || request.signal.aborted) throw wrap(agent, error);
      throw new RuntimeError("remote_timeout", `Remote agent '${agent}' took longer than ${remote.timeoutMs ?? DEFAULT_TIMEOUT_MS} ms.`);
    }
  }

  async #send(request: RemoteRequest, signal: AbortSignal): Promise<Response> {
    const { agent, remote, state } = request;
    const endpoint = await this.#endpoint(agent, remote, signal);
    const text = remoteInput(agent, request.messages, remote.input, state);
    const message = {
      messageId: crypto.randomUUID(),
      role: "ROLE_USER",
      parts: [{ text }],
      ...(state.contextId ? { contextId: state.contextId } : {}),
      ...(state.taskId ? { taskId: state.taskId } : {}),
    };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message } });
    const response = await this.#fetch(remote)(endpoint, {
      method: "POST",
      headers: {
        ...headersFor(remote, this.#env),
        "content-type": "application/json",
        accept: "text/event-stream",
        "A2A-Version": A2A_VERSION,
      },
      body,
      signal,
    });
    if (!response.ok) {
      await response.body?.cancel();
      const hint = response.status === 401 || response.status === 403 ? ": check the headers it is sent" : "";
      throw new RuntimeError("remote_failed", `Remote agent '${agent}' answered HTTP ${response.status}${hint}.`);
    }
    return response;
  }

  /** The JSON-RPC endpoint: the card's JSONRPC interface when `url` is a card, else `url` itself. */
  #endpoint(agent: string, remote: RemoteAgentConfig, signal: AbortSignal): Promise<string> {
    if (!new URL(remote.url).pathname.endsWith(CARD_PATH)) return Promise.resolve(remote.url);
    let endpoint = this.#endpoints.get(remote.url);
    if (!endpoint) {
      endpoint = this.#readCard(agent, remote, signal);
      // A card that could not be read is read again next time.
      endpoint.catch(() => this.#endpoints.delete(remote.url));
      this.#endpoints.set(remote.url, endpoint);
    }
    return endpoint;
  }

  async #readCard(agent: string, remote: RemoteAgentConfig, signal: AbortSignal): Promise<string> {
    const response = await this.#fetch(remote)(remote.url, { headers: { ...headersFor(remote, this.#env) }, signal });
    if (!response.ok) throw new RuntimeError("remote_failed", `Remote agent '${agent}': its agent card answered HTTP ${response.status}.`);
    const card: unknown = await response.json().catch(() => null);
    const interfaces = card && typeof card === "object" && "supportedInterfaces" in card ? card.supportedInterfaces : undefined;
    const jsonRpc = Array.isArray(interfaces)
      ? (interfaces as Array<Record<string, unknown>>).find((i) => i.protocolBinding === "JSONRPC" && typeof i.url === "string")
      : undefined;
    if (!jsonRpc) throw invalid(agent, "has an agent card with no JSON-RPC interface (supportedInterfaces[].protocolBinding JSONRPC)");
    // Through a binding, the card's own origin is not reachable: its path is used on the binding.
    const url = new URL(jsonRpc.url as string, remote.url);
    return remote.binding ? new URL(`${url.pathname}${url.search}`, remote.url).href : url.href;
  }

  #fetch(remote: RemoteAgentConfig): RemoteFetcher["fetch"] {
    const { binding } = remote;
    if (binding === undefined) return (input, init) => fetch(input, init);
    const fetcher = typeof binding === "function" ? binding(this.#env) : (this.#env[binding] as RemoteFetcher | undefined);
    if (!fetcher || typeof fetcher.fetch !== "function")
      throw new RuntimeError(
        "remote_failed",
        `The service binding '${String(typeof binding === "string" ? binding : "of the function")}' is not bound.`,
      );
    return (input, init) => fetcher.fetch(input, init);
  }
}

/** The answer's events: an SSE stream frame by frame, or one JSON-RPC response; a stream that stops short of an end is invalid. */
async function* readAnswer(progress: ReturnType<typeof startReading>, response: Response): AsyncGenerator<RemoteEvent> {
  const type = response.headers.get("content-type") ?? "";
  if (!type.includes("text/event-stream")) {
    yield* readResponse(progress, await response.text());
  } else {
    for await (const data of sseData(response.body!)) {
      yield* readResponse(progress, data);
      // The task ended (or waits for the user): what a server sends after it is not read.
      if (progress.ended) break;
    }
  }
  if (!progress.ended) throw invalid(progress.agent, "ended its answer while its task was still working");
}

function wrap(agent: string, error: unknown): RuntimeError {
  if (error instanceof RuntimeError) return error;
  return new RuntimeError("remote_failed", `Remote agent '${agent}' could not be reached: ${errorMessage(error)}.`, {
    cause: error,
  });
}
