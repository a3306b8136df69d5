import { parseArguments } from "../tools/execute-tool-call.ts";
import type { ToolCall } from "../messages.ts";
import type { Agent } from "../agent.ts";
import { type Duration, durationMs } from "../duration.ts";
import type { Tool } from "../tools/tool.ts";

/**
 * Whether a call waits for a person. Calls whose arguments do not parse or validate are not
 * gated, whatever `needsApproval` says: they fail as tool errors without running, and no one is
 * asked to approve a call that cannot run. A `needsApproval` function that throws gates the call,
 * since failing open would run a call nobody approved.
 */
export async function requiresApproval(call: ToolCall, tool: Tool | undefined): Promise<boolean> {
  if (!tool?.needsApproval) return false;
  const parsed = parseArguments(call.arguments);
  if (!parsed.ok) return false;
  const validated = tool.parameters.safeParse(parsed.value);
  if (!validated.success) return false;
  if (tool.needsApproval === true) return true;
  try {
    return await tool.needsApproval(validated.data);
  } catch {
    return true;
  }
}

/** Whether the user's client answers the call: a tool with no `execute`, called with arguments that fit it (others fail as tool errors). */
export function runsOnClient(call: ToolCall, tool: Tool | undefined): boolean {
  if (!tool || tool.execute) return false;
  const parsed = parseArguments(call.arguments);
  return parsed.ok && tool.parameters.safeParse(parsed.value).success;
}

/**
 * When a request to the user expires (epoch ms): the tool's, else its agent's, else the network's deadline; undefined for none.
 */
export function approvalExpiry(
  tool: Tool | undefined,
  agent: Agent,
  networkDefault: Duration | undefined,
  now = Date.now(),
): number | undefined {
  const ms =
    (tool?.approvalExpiresIn === undefined ? undefined : durationMs(tool.approvalExpiresIn, `Tool '${tool.name}': approvalExpiresIn`)) ??
    agent.approvalExpiresInMs ??
    (networkDefault === undefined ? undefined : durationMs(networkDefault, "The network's approvalExpiresIn"));
  return ms === undefined ? undefined : now + ms;
}
