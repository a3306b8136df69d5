/**
 * The MCP port: what an agent names of its remote MCP servers, and what a host plugs in (`McpPort`) that lists and calls
 * their tools. The port owns the wire, sessions and caching; tools/mcp-tools.ts makes each listed tool an ordinary `Tool`.
 */
import { type HeadersFromEnv, headersFor, type HostEnv } from "./host-env.ts";

/** What a `headers` function is given (host-env.ts's `HostEnv`, by its name for MCP servers). */
export type McpHostEnv = HostEnv;

/** A remote MCP server an agent takes tools from. */
export interface McpServerConfig {
  /** Prefix of its tools' names (`<name>_<tool>`); also how logs and warnings name it. */
  name: string;
  /** Its Streamable HTTP endpoint; a server that only speaks the older HTTP+SSE transport is reached at the same URL. */
  url: string;
  /** Sent with every request; a function reads secrets from the environment. Values are redacted everywhere. */
  headers?: Readonly<Record<string, string>> | McpHeaders;
  /** Only these of its tools (the server's names); all when absent. */
  allowTools?: readonly string[];
  /** None of these (the server's names). */
  denyTools?: readonly string[];
  /** A person approves each call: all of them, the tools named (the server's names), or as a function decides per call. */
  needsApproval?: boolean | readonly string[] | McpApproval;
  /** How long a call may take before it is answered with an error (default 30 s). */
  timeoutMs?: number;
  /** How long a listed set of tools is used before it is listed again (default 10 minutes). */
  cacheTtlMs?: number;
  /** How requests reach it: a service binding's `fetch`, or an in-process handler; the global `fetch` when absent. */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}

/** Headers from the environment (host-env.ts's `HeadersFromEnv`, by its name for MCP servers). */
export type McpHeaders = HeadersFromEnv;

/** Decides whether a call waits for a person. */
export type McpApproval = (call: { tool: string; args: Record<string, unknown> }) => boolean | Promise<boolean>;

/** A tool as its server lists it. */
export interface McpToolInfo {
  name: string;
  description?: string;
  /** JSON Schema of its arguments, sent to the model as the server gave it. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of its structured results, when it declares one. */
  outputSchema?: Record<string, unknown>;
}

/** One block of a call's result, as MCP defines them (the kinds this runtime reads). */
export type McpContent =
  | { type: "text"; text: string }
  | { type: "image" | "audio"; mimeType?: string; data?: string }
  | { type: "resource"; resource: { uri: string; mimeType?: string; text?: string } }
  | { type: "resource_link"; uri: string; name?: string; mimeType?: string }
  | { type: string; [key: string]: unknown };

/** A call's result, as the server sent it. */
export interface McpCallResult {
  content?: readonly McpContent[];
  structuredContent?: unknown;
  isError?: boolean;
}

/** An embedded request of a server's `input_required` answer (protocol revision 2026-07-28): this client fulfils elicitations. */
export interface McpInputRequest {
  method: string;
  params?: {
    mode?: "form" | "url";
    message?: string;
    requestedSchema?: Record<string, unknown>;
    url?: string;
    elicitationId?: string;
  };
}

/** A server's answer that it needs the user's input first: the call is made again with the responses and its `requestState`. */
export interface McpInputRequired {
  resultType: "input_required";
  inputRequests?: Readonly<Record<string, McpInputRequest>>;
  requestState?: string;
}

/** What a call made again after `input_required` carries: the responses by the server's keys, and its `requestState` as it was sent. */
export interface McpInputResponses {
  inputResponses: Record<string, unknown>;
  requestState?: string;
}

/** How many times a call may be answered `input_required` before it is given up. */
export const MAX_INPUT_ROUNDS = 10;

/**
 * What the loop needs from a host to use MCP servers. `listTools` and `callTool` reject with an
 * error whose message says what went wrong (down, slow, refused); the loop turns it into an error
 * result the agent can recover from.
 */
export interface McpPort {
  listTools(server: McpServerConfig, signal: AbortSignal): Promise<readonly McpToolInfo[]>;
  /**
   * `idempotencyKey`: the call's stable key (`ctx.idempotencyKey`), for the server to make a retry safe. `input`: the
   * user's responses to what the server asked, for a call made again after it answered `input_required`.
   */
  callTool(
    server: McpServerConfig,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    idempotencyKey?: string,
    input?: McpInputResponses,
  ): Promise<McpCallResult | McpInputRequired>;
  /** Checks arguments against a tool's input schema: what is wrong with them, or undefined when they fit. */
  checkArguments(schema: Record<string, unknown>, args: unknown): string | undefined;
}

/** The headers a server is sent: given, or read from the environment. */
export function mcpHeaders(server: Pick<McpServerConfig, "headers">, env: McpHostEnv): Readonly<Record<string, string>> {
  return headersFor(server, env);
}
