import type { Limits } from "./limits.ts";
import type { ToolCall } from "./messages.ts";
import type { AgentToolset } from "./network.ts";
import type { Tool } from "./tool.ts";
import { TRANSFER_PREFIX } from "./transfer-names.ts";

/** What the loop will do with each call of a step, decided before any tool runs. */
export type PlannedCall =
  | { kind: "transfer"; call: ToolCall; to: string; reason?: string }
  | { kind: "refused-transfer"; call: ToolCall; message: string }
  | { kind: "tool"; call: ToolCall; tool: Tool | undefined };

export interface PlanInput {
  calls: readonly ToolCall[];
  toolset: AgentToolset;
  handoffsThisTurn: number;
  limits: Limits;
}

/**
 * Picks the transfers out of a step's calls. Only the first acceptable transfer in the model's
 * own order is taken; every other transfer is refused with a reason the model can act on.
 */
export function planToolCalls({ calls, toolset, handoffsThisTurn, limits }: PlanInput): PlannedCall[] {
  let accepted: string | undefined;
  return calls.map((call): PlannedCall => {
    const ownTool = toolset.tools.get(call.name);
    if (ownTool) return { kind: "tool", call, tool: ownTool };
    const target = toolset.transfers.get(call.name);
    if (target === undefined) {
      if (!call.name.startsWith(TRANSFER_PREFIX)) return { kind: "tool", call, tool: undefined };
      return { kind: "refused-transfer", call, message: unknownTargetMessage(call.name, toolset) };
    }
    if (accepted !== undefined) {
      return {
        kind: "refused-transfer",
        call,
        message: `Only one transfer per step is taken: '${accepted}' was taken, so this transfer was not.`,
      };
    }
    if (handoffsThisTurn >= limits.maxHandoffsPerTurn) {
      return {
        kind: "refused-transfer",
        call,
        message: `Handoff limit (${limits.maxHandoffsPerTurn}) reached; continue yourself.`,
      };
    }
    accepted = call.name;
    const reason = readReason(call.arguments);
    return reason === undefined ? { kind: "transfer", call, to: target } : { kind: "transfer", call, to: target, reason };
  });
}

function unknownTargetMessage(toolName: string, toolset: AgentToolset): string {
  const valid = [...toolset.transfers].map(([name, agent]) => `${name} (${agent})`);
  return `Cannot hand off: '${toolName}' is not an available transfer. ${
    valid.length ? `Available: ${valid.join(", ")}.` : "This agent has no transfers."
  }`;
}

/** A transfer is a routing decision: malformed arguments never fail it, they only lose the reason. */
function readReason(rawArguments: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(rawArguments || "{}");
    if (parsed && typeof parsed === "object" && "reason" in parsed && typeof parsed.reason === "string") {
      const reason = parsed.reason.trim();
      return reason ? reason : undefined;
    }
  } catch {
    // Falls through: no reason.
  }
  return undefined;
}
