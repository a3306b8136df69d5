/**
 * Remote agents, as the loop sees them: an agent made with `remoteAgent` is served somewhere else
 * (another Worker, a partner's service) and speaks A2A; a host passes a `RemotePort` that reaches
 * it. While it holds the conversation its turns are model calls of a kind: the user's messages go
 * to its context, its text streams back as its own, and its state (the remote context and task)
 * is kept as the agent's state in the holding, so the next message reaches the same context.
 */
import type { Message } from "../messages.ts";
import type { HeadersFromEnv, HostEnv } from "./host-env.ts";
import type { ModelEvent } from "./model-port.ts";

/** A `fetch` in the shape a service binding (`Fetcher`) has. */
export interface RemoteFetcher {
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
}

/** Headers from the environment, as MCP servers take them. */
export type RemoteHeaders = HeadersFromEnv;

/** What a remote agent is sent when handed the conversation: all of it so far (default), the last user message, or a function's text. */
export type RemoteInput = "conversation" | "last-message" | ((messages: readonly Message[]) => string);

/** Where a remote agent is and how to reach it. */
export interface RemoteAgentConfig {
  /** Its agent card's URL (`https://…/.well-known/agent-card.json`), or its JSON-RPC endpoint itself. */
  url: string;
  /**
   * A service binding to reach it by (another Worker with no public URL): the name of the binding in
   * the environment, or a function that returns it. `url`'s path and query are used on it.
   */
  binding?: string | ((env: HostEnv) => RemoteFetcher);
  /** Sent with every request; a function reads secrets from the environment. Values are redacted everywhere. */
  headers?: Readonly<Record<string, string>> | RemoteHeaders;
  /** What it is sent when it is handed the conversation (later messages go as they are). */
  input?: RemoteInput;
  /** How long one of its tasks may take before the conversation goes back (default 120 s). */
  timeoutMs?: number;
}

/** The remote's side of the conversation, kept as the agent's state: its context, the task waiting for input, what it was sent. */
export interface RemoteState {
  contextId?: string;
  /** A task of the remote's that asked for input (or authorization): the next message answers it. */
  taskId?: string;
  /**
   * How many messages of the history it has been given: written ahead of each call, so a call a
   * crash cut off is not sent again (the next call sends what came after it).
   */
  sent?: number;
}

/** What the loop asks of a remote agent for one turn's call. */
export interface RemoteRequest {
  agent: string;
  remote: RemoteAgentConfig;
  /** The conversation's whole history: the remote is sent what it has not been given yet (`state.sent`). */
  messages: readonly Message[];
  /** The remote's side as last kept; empty before its first call. */
  state: RemoteState;
  signal: AbortSignal;
}

/**
 * What a remote streams for one call: its text as deltas, then `finish` with reason `stop` (its
 * task completed) or `input_required` (it waits for the user); `remote-state` as the context and
 * task become known; `hand-back` when it gives the conversation back. A failure is thrown as a RuntimeError with a `remote_*` code.
 */
export type RemoteEvent =
  | Exclude<ModelEvent, { type: "tool-call" }>
  | { type: "remote-state"; state: RemoteState }
  /** The remote gives the conversation back (this project's hand-back data part), with what it found or did. */
  | { type: "hand-back"; summary: string };

/** How a host reaches remote agents. */
export interface RemotePort {
  stream(request: RemoteRequest): AsyncIterable<RemoteEvent>;
}
