/**
 * The MCP port over the official MCP TypeScript client (`@modelcontextprotocol/client`): one
 * connection per server, kept across turns with its `Mcp-Session-Id`; Streamable HTTP, with the
 * older HTTP+SSE transport when a server refuses it; tool lists cached with their TTL and dropped
 * when the server says its list changed; arguments checked with `@cfworker/json-schema`, which
 * validates without generating code (Workers forbid `eval`).
 */
import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";
import {
  type McpCallResult,
  type McpHostEnv,
  type McpInputRequired,
  type McpInputResponses,
  type McpPort,
  type McpServerConfig,
  type McpToolInfo,
  mcpHeaders,
} from "../runtime/ports/mcp-port.ts";
import { errorMessage } from "../runtime/errors.ts";
import { schemaProblems } from "../runtime/schema/json-schema.ts";
import { knownToolList, MemoryToolListCache, rememberToolList, type ToolListCache } from "./tool-lists.ts";

/** What `McpConnections` is given: the environment headers are read from, and where tool lists are kept. */
export interface McpConnectionsOptions {
  /** What `headers` functions read: the Worker's environment. */
  env?: object;
  cache?: ToolListCache;
  /** Notes on what happened (a fallback, a lost session); never a header value. */
  log?: (message: string) => void;
  now?: () => number;
}

/** How long a call may take when a server sets no `timeoutMs`. */
export const DEFAULT_MCP_TIMEOUT_MS = 30_000;
/** How long a tool list is used when a server sets no `cacheTtlMs`. */
export const DEFAULT_MCP_CACHE_TTL_MS = 10 * 60_000;
const CLIENT_INFO = { name: "handoff-runtime", version: "0.1.0" };

/** The `_meta` key of a tool call's idempotency key: the same for every retry of one call (`<conversation id>:<tool call id>`). */
export const IDEMPOTENCY_META_KEY = "handoff-runtime/idempotency-key";

interface Connection {
  url: string;
  client: Client;
}

/** An `McpPort`: what agents' MCP servers are reached through. */
export class McpConnections implements McpPort {
  readonly #env: McpHostEnv;
  readonly #cache: ToolListCache;
  readonly #log: (message: string) => void;
  readonly #now: () => number;
  readonly #connections = new Map<string, Promise<Connection>>();
  /** `tools/list` requests sent, for the benchmark. */
  listRequests = 0;

  constructor(options: McpConnectionsOptions = {}) {
    // An environment is a record of bindings, whatever interface a Worker declares for it.
    this.#env = (options.env ?? {}) as McpHostEnv;
    this.#cache = options.cache ?? new MemoryToolListCache();
    this.#log = options.log ?? (() => {});
    this.#now = options.now ?? Date.now;
  }

  async listTools(server: McpServerConfig, signal: AbortSignal): Promise<readonly McpToolInfo[]> {
    const cached = this.#cache.get(server.name);
    const ttl = server.cacheTtlMs ?? DEFAULT_MCP_CACHE_TTL_MS;
    if (cached && cached.url === server.url && this.#now() - cached.listedAt < ttl) {
      if (!knownToolList(server)) rememberToolList(server, cached);
      return cached.tools;
    }
    const listed = await this.#withSession(server, signal, (client, options) => {
      this.listRequests++;
      return client.listTools(undefined, options);
    });
    const tools = listed.tools.map(
      (t): McpToolInfo => ({
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        inputSchema: t.inputSchema as Record<string, unknown>,
        ...(t.outputSchema ? { outputSchema: t.outputSchema as Record<string, unknown> } : {}),
      }),
    );
    const entry = { url: server.url, tools, listedAt: this.#now() };
    this.#cache.set(server.name, entry);
    rememberToolList(server, entry);
    return tools;
  }

  async callTool(
    server: McpServerConfig,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    idempotencyKey?: string,
    input?: McpInputResponses,
  ): Promise<McpCallResult | McpInputRequired> {
    const definition = this.#cache.get(server.name)?.tools.find((t) => t.name === tool);
    // The call's stable key goes in the request's `_meta`, so a server can tell a retry from a new call.
    const meta = idempotencyKey ? { _meta: { [IDEMPOTENCY_META_KEY]: idempotencyKey } } : {};
    const result = await this.#withSession(server, signal, (client, options) =>
      // The definition from the cache: the client needs no listing of its own to check structured output.
      // `input_required` comes back to the loop (it asks the user, durably), never to handlers of this client's.
      client.callTool(
        { name: tool, arguments: args, ...meta, ...input },
        definition
          ? {
              ...options,
              allowInputRequired: true,
              toolDefinition: { ...definition, inputSchema: { type: "object", ...definition.inputSchema } },
            }
          : { ...options, allowInputRequired: true },
      ),
    );
    return result as McpCallResult | McpInputRequired;
  }

  checkArguments(schema: Record<string, unknown>, args: unknown): string | undefined {
    return schemaProblems(schema, args, "arguments");
  }

  /** Ends every session (a Durable Object's connections go with it). */
  async close(): Promise<void> {
    const open = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.all(open.map(async (c) => (await c.catch(() => null))?.client.close().catch(() => {})));
  }

  /** Runs a request on the server's session; a session the server has forgotten (404) is opened again, once. */
  async #withSession<T>(
    server: McpServerConfig,
    signal: AbortSignal,
    request: (client: Client, options: { timeout: number; signal: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    const timeout = server.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS;
    const options = { timeout, signal };
    try {
      const connection = await this.#connection(server, options);
      try {
        return await request(connection.client, options);
      } catch (error) {
        if (!sessionLost(error)) throw error;
        this.#log(`mcp: the server '${server.name}' no longer knows its session; opening a new one`);
        this.#forget(server.name, connection);
        return await request((await this.#connection(server, options)).client, options);
      }
    } catch (error) {
      throw new Error(describeFailure(server, timeout, error));
    }
  }

  async #connection(server: McpServerConfig, options: { timeout: number; signal: AbortSignal }): Promise<Connection> {
    const existing = this.#connections.get(server.name);
    const connection = existing && (await existing.catch(() => null));
    if (connection && connection.url === server.url) return connection;
    if (connection) this.#forget(server.name, connection);
    const opening = this.#open(server, options);
    this.#connections.set(server.name, opening);
    // A failed opening is not kept: the next request tries again.
    opening.catch(() => {
      if (this.#connections.get(server.name) === opening) this.#connections.delete(server.name);
    });
    return opening;
  }

  #forget(name: string, connection: Connection): void {
    this.#connections.delete(name);
    connection.client.close().catch(() => {});
  }

  async #open(server: McpServerConfig, options: { timeout: number; signal: AbortSignal }): Promise<Connection> {
    const transport = { requestInit: { headers: { ...mcpHeaders(server, this.#env) } }, ...(server.fetch ? { fetch: server.fetch } : {}) };
    const url = new URL(server.url);
    const client = this.#client(server);
    try {
      await client.connect(new StreamableHTTPClientTransport(url, transport), options);
      return { url: server.url, client };
    } catch (error) {
      // A server of the older HTTP+SSE transport refuses the Streamable HTTP POST with a 4xx.
      if (!(error instanceof SdkHttpError) || !refusedPost(error)) throw error;
    }
    this.#log(`mcp: the server '${server.name}' does not speak Streamable HTTP; using the HTTP+SSE transport`);
    const legacy = this.#client(server);
    await legacy.connect(new SSEClientTransport(url, transport), options);
    return { url: server.url, client: legacy };
  }

  #client(server: McpServerConfig): Client {
    const client = new Client(CLIENT_INFO, {
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      // The 2026-07-28 revision where a server offers it (its elicitations arrive as `input_required`, which the turn
      // waits on durably); the 2025 handshake with any other server, as before.
      versionNegotiation: { mode: "auto" },
      inputRequired: { autoFulfill: false },
      capabilities: { elicitation: { form: {}, url: {} } },
    });
    // A server that says its list changed (on a 2025 session) has it listed again at the next step: the cache is the only copy
    // this runtime keeps. No `listChanged` subscription is opened on a 2026 connection: a request held open would keep the
    // Durable Object awake; its lists are listed again once their TTL is over.
    client.setNotificationHandler("notifications/tools/list_changed", () => this.#cache.delete(server.name));
    return client;
  }
}

function httpStatus(error: SdkHttpError): number | undefined {
  const data = (error as { data?: { status?: number } }).data;
  return data?.status;
}

function refusedPost(error: SdkHttpError): boolean {
  const status = httpStatus(error);
  return status === 400 || status === 404 || status === 405;
}

/** The server answered 404 to a request on a session: it has forgotten it (restarted, expired). */
function sessionLost(error: unknown): boolean {
  return error instanceof SdkHttpError && httpStatus(error) === 404;
}

/** What the agent is told: which server, and what went wrong, in a sentence. */
function describeFailure(server: McpServerConfig, timeoutMs: number, error: unknown): string {
  const name = `The MCP server '${server.name}'`;
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) return `${name} did not answer within ${timeoutMs} ms.`;
  if (error instanceof ProtocolError) return `${name} answered an error (${error.code}): ${error.message}`;
  if (error instanceof SdkHttpError) return `${name} answered HTTP ${httpStatus(error) ?? "error"}: ${error.message}`;
  const message = errorMessage(error);
  return `${name} could not be reached: ${message}`;
}
