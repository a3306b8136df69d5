/** The rules that accept or refuse the handoffs a model asks for in one step. */
import * as z from "zod";
import type { Limits } from "../limits.ts";
import type { ToolCall } from "../messages.ts";
import type { AgentToolset } from "../network.ts";
import type { Tool } from "../tool.ts";
import type { HandoffEdge } from "./handoff.ts";
import { readTransfer, type TransferStyle, validTargets } from "./transfer-tools.ts";

/** What the loop will do with each call of a step, decided before any tool runs. */
export type PlannedCall =
  | { kind: "transfer"; call: ToolCall; edge: HandoffEdge; reason?: string; input?: Record<string, unknown> }
  /** `extra`: a second transfer in the step, which the `drop` policy removes from the history. */
  | { kind: "refused-transfer"; call: ToolCall; message: string; extra: boolean }
  | { kind: "tool"; call: ToolCall; tool: Tool | undefined };

export interface PlanInput {
  calls: readonly ToolCall[];
  /** The active agent's name and its own transfer tool name: a transfer to either is to itself. */
  self: readonly string[];
  toolset: AgentToolset;
  style: TransferStyle;
  limits: Limits;
  /** Accepted transfers in this turn, and over the conversation's life. */
  handoffsThisTurn: number;
  handoffCount: number;
  maxHandoffs: number | undefined;
  /** Agents active in this turn so far, when revisits are refused; undefined allows them. */
  visited: ReadonlySet<string> | undefined;
}

/**
 * Picks the transfers out of a step's calls. Only the first acceptable transfer in the model's
 * own order is taken; every other one is refused with a reason the model can act on, naming the rule.
 */
export function planToolCalls(input: PlanInput): PlannedCall[] {
  const { calls, toolset, style, limits } = input;
  let accepted: string | undefined;
  return calls.map((call): PlannedCall => {
    const ownTool = toolset.tools.get(call.name);
    if (ownTool) return { kind: "tool", call, tool: ownTool };
    const request = readTransfer(call, style, toolset.transfers);
    if (!request) return { kind: "tool", call, tool: undefined };
    const refuse = (message: string, extra = false): PlannedCall => ({ kind: "refused-transfer", call, message, extra });
    const { edge } = request;
    if (!edge) {
      return input.self.includes(request.asked)
        ? refuse(`'${input.self[0]}' already holds the conversation. ${validTargets(style, toolset.transfers)}`)
        : refuse(`Cannot hand off: '${request.asked}' is not an available transfer. ${validTargets(style, toolset.transfers)}`);
    }
    if (accepted !== undefined)
      return refuse(`Only one transfer per step is taken: the transfer to '${accepted}' was taken, so this one was not.`, true);
    if (input.handoffsThisTurn >= limits.maxHandoffsPerTurn)
      return refuse(`Handoff limit (${limits.maxHandoffsPerTurn}) reached; continue yourself.`);
    if (input.maxHandoffs !== undefined && input.handoffCount >= input.maxHandoffs) {
      return refuse(`Handoff limit for this conversation (${input.maxHandoffs}) reached; continue yourself.`);
    }
    if (input.visited?.has(edge.target.name)) return refuse(`Cannot hand off to '${edge.target.name}': already visited in this turn.`);
    let parsedInput: Record<string, unknown> | undefined;
    if (edge.inputSchema) {
      const parsed = edge.inputSchema.safeParse(request.input);
      if (!parsed.success) return refuse(`Cannot hand off to '${edge.target.name}': invalid input: ${z.prettifyError(parsed.error)}`);
      parsedInput = parsed.data;
    }
    accepted = edge.target.name;
    return {
      kind: "transfer",
      call,
      edge,
      ...(request.reason ? { reason: request.reason } : {}),
      ...(parsedInput ? { input: parsedInput } : {}),
    };
  });
}
