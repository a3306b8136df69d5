/**
 * Tools from remote MCP servers, as the loop sees them: each tool an agent's servers list through the `McpPort` becomes an
 * ordinary `Tool` (named `<server>_<tool>`) that takes the same path as a local one: handoff interception, guardrails,
 * the approval gate, then the call.
 */
import * as z from "zod";
import { foldName, uniqueToolName } from "./tool-names.ts";
import { type Tool, type ToolContext, tool } from "./tool.ts";
import type { Elicitation } from "../wait/asks.ts";
import { errorMessage } from "../errors.ts";
import type { McpApproval, McpCallResult, McpContent, McpInputRequest, McpPort, McpServerConfig, McpToolInfo } from "../ports/mcp-port.ts";
import { MAX_INPUT_ROUNDS } from "../ports/mcp-port.ts";

/**
 * `<server>_<tool>` in what providers accept (accents dropped, then `[a-zA-Z0-9_-]`, 64 characters); a name already taken gets `_2`, `_3`.
 */
export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string> = new Set()): string {
  return uniqueToolName(foldName(`${server}_${tool}`, /[^a-zA-Z0-9_-]/g), taken);
}

/**
 * A call's result as the model reads it: the text blocks joined, structured content as JSON,
 * images, audio and resources summarized in a line each. An `isError` result is thrown, so the
 * loop answers it as an error result.
 */
export function mcpResultValue(result: McpCallResult): unknown {
  const lines = (result.content ?? []).map(describeContent);
  if (result.isError) throw new Error(lines.join("\n") || "the server reported an error without a message");
  if (result.structuredContent !== undefined) return result.structuredContent;
  return lines.join("\n");
}

function describeContent(block: McpContent): string {
  switch (block.type) {
    case "text":
      return String(block.text);
    case "image":
    case "audio":
      return `[${block.type}${block.mimeType ? ` ${String(block.mimeType)}` : ""}, ${typeof block.data === "string" ? Math.floor((block.data.length * 3) / 4) : 0} bytes]`;
    case "resource": {
      const resource = block.resource as { uri: string; text?: string };
      return resource.text !== undefined ? `[resource ${resource.uri}]\n${resource.text}` : `[resource ${resource.uri}]`;
    }
    case "resource_link":
      return `[resource link ${String(block.uri)}${block.name ? ` (${String(block.name)})` : ""}]`;
    default:
      return `[${block.type} content]`;
  }
}

/** The tools of an agent's servers, or why a server's are missing this step. */
export interface RemoteTools {
  tools: Tool[];
  warnings: Array<{ server: string; message: string }>;
}

/**
 * Lists the servers' tools through the port and makes each an ordinary tool. A server that cannot
 * be listed leaves its tools out of this step, with a warning; the agent carries on with the rest.
 */
export async function remoteTools(
  port: McpPort | undefined,
  servers: readonly McpServerConfig[],
  taken: ReadonlySet<string>,
  signal: AbortSignal,
): Promise<RemoteTools> {
  if (servers.length === 0) return { tools: [], warnings: [] };
  if (!port) return { tools: [], warnings: servers.map((s) => ({ server: s.name, message: "this host has no MCP client" })) };
  const listed = await Promise.all(
    servers.map(async (server) => {
      try {
        return { server, tools: await port.listTools(server, signal) };
      } catch (error) {
        return { server, error: errorMessage(error) };
      }
    }),
  );
  const names = new Set(taken);
  const tools: Tool[] = [];
  const warnings: RemoteTools["warnings"] = [];
  for (const entry of listed) {
    if ("error" in entry) {
      warnings.push({ server: entry.server.name, message: entry.error ?? "unknown error" });
      continue;
    }
    for (const { info, name } of offeredTools(entry.server, entry.tools, names)) tools.push(remoteTool(port, entry.server, info, name));
  }
  return { tools, warnings };
}

/**
 * A server's tools that are offered, each with the name the model sees: `<server>_<tool>`, apart
 * from every name in `taken`, which each name given is added to.
 */
export function offeredTools<T extends Pick<McpToolInfo, "name">>(
  server: McpServerConfig,
  tools: readonly T[],
  taken: Set<string>,
): Array<{ info: T; name: string }> {
  return tools
    .filter((info) => mcpToolOffered(server, info.name))
    .map((info) => {
      const name = mcpToolName(server.name, info.name, taken);
      taken.add(name);
      return { info, name };
    });
}

/** Whether a server's tool is offered: on its allow list (when it has one) and not on its deny list. */
export function mcpToolOffered(server: McpServerConfig, tool: string): boolean {
  if (server.allowTools && !server.allowTools.includes(tool)) return false;
  return !server.denyTools?.includes(tool);
}

function remoteTool(port: McpPort, server: McpServerConfig, info: McpToolInfo, name: string): Tool {
  // The server's schema is the contract: checked as JSON Schema, by the port's validator.
  const parameters = z.record(z.string(), z.unknown()).superRefine((args, ctx) => {
    const problem = port.checkArguments(info.inputSchema, args);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
  const approval = server.needsApproval;
  const needsApproval =
    approval === undefined || approval === false || approval === true
      ? approval === true
      : Array.isArray(approval)
        ? () => (approval as readonly string[]).includes(info.name)
        : (args: Record<string, unknown>) => (approval as McpApproval)({ tool: info.name, args });
  return tool({
    name,
    description: info.description ?? `${info.name} (from the MCP server '${server.name}')`,
    parameters,
    inputSchema: info.inputSchema,
    needsApproval,
    execute: async (args, ctx) => mcpResultValue(await callWithInput(port, server, info.name, args, ctx)),
  });
}

/**
 * A call, and again with the user's responses each time the server answers `input_required` (an elicitation: a form or
 * an https URL). Each elicitation goes through `ctx.elicit`, the run's one wait for the user: the first time it stops
 * the call until the user answers. The call then runs again from here with the answer, and each server call it made
 * before is remembered, not made again: the answer goes back with the `requestState` of the request the user saw.
 */
async function callWithInput(
  port: McpPort,
  server: McpServerConfig,
  tool: string,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<McpCallResult> {
  let result = await ctx.remember(() => port.callTool(server, tool, args, ctx.signal, ctx.idempotencyKey));
  for (let round = 1; "resultType" in result && result.resultType === "input_required"; round++) {
    if (round > MAX_INPUT_ROUNDS) throw new Error(`The MCP server '${server.name}' asked for input more than ${MAX_INPUT_ROUNDS} times.`);
    const inputResponses: Record<string, unknown> = {};
    for (const [key, request] of Object.entries(result.inputRequests ?? {}))
      inputResponses[key] = await ctx.elicit(elicitation(server, request));
    const input = { inputResponses, ...(result.requestState === undefined ? {} : { requestState: result.requestState }) };
    result = await ctx.remember(() => port.callTool(server, tool, args, ctx.signal, ctx.idempotencyKey, input));
  }
  return result as McpCallResult;
}

/** A server's embedded request as the user is asked it; this client answers elicitations only. */
function elicitation(server: McpServerConfig, request: McpInputRequest): Elicitation {
  const p = request.params ?? {};
  if (request.method !== "elicitation/create")
    throw new Error(`The MCP server '${server.name}' asked for ${request.method}, which this client does not answer.`);
  const message = p.message ?? `The MCP server '${server.name}' asks for your input.`;
  if (p.mode === "url") {
    if (!p.url) throw new Error(`The MCP server '${server.name}' asked the user to open a URL without giving one.`);
    return { server: server.name, mode: "url", message, url: p.url, ...(p.elicitationId ? { elicitationId: p.elicitationId } : {}) };
  }
  const { $schema: _dropped, ...schema } = p.requestedSchema ?? { type: "object", properties: {} };
  return { server: server.name, mode: "form", message, schema };
}
