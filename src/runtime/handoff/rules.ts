/** The rules that accept or refuse the handoffs a model asks for in one step. */
import * as z from "zod";
import type { Limits } from "../limits.ts";
import type { CallPlan, ToolCall } from "../messages.ts";
import type { AgentToolset } from "../network.ts";
import type { Tool } from "../tools/tool.ts";
import type { HandoffEdge } from "./handoff.ts";
import { returnToolName } from "./returns.ts";
import { readTransfer, type TransferStyle, validTargets } from "./transfer-tools.ts";
import { HANDOFF_RULES, type HandoffRules } from "./change-hands.ts";
import type { ReturnFrame } from "./types.ts";

/** What the loop will do with each call of a step, decided before any tool runs. */
export type PlannedCall =
  | { kind: "transfer"; call: ToolCall; edge: HandoffEdge; reason?: string; input?: Record<string, unknown> }
  /** A call of the holder's return tool: the conversation goes back to the frame's caller. */
  | { kind: "return"; call: ToolCall; frame: ReturnFrame; summary: string }
  /** `extra`: a second transfer in the step, which the `drop` policy removes from the history. */
  | { kind: "refused-handoff"; call: ToolCall; message: string; extra: boolean }
  | { kind: "tool"; call: ToolCall; tool: Tool | undefined };

/** What a planned call is, as `tool-call` events and stored calls say it. */
export function callPlanOf(planned: PlannedCall): CallPlan {
  switch (planned.kind) {
    case "tool":
      return "tool";
    case "transfer":
      return planned.edge.agent.human ? "person" : "transfer";
    case "return":
      return "return";
    case "refused-handoff":
      return "refused-handoff";
    default: {
      const exhaustive: never = planned;
      throw new Error(`unknown plan ${JSON.stringify(exhaustive)}`);
    }
  }
}

export interface PlanInput {
  calls: readonly ToolCall[];
  /** The active agent's name and its own transfer tool name: a transfer to either is to itself. */
  self: readonly string[];
  toolset: AgentToolset;
  style: TransferStyle;
  limits: Limits;
  /** Transfers made in this turn, and the conversation's `handoffCount` (which counts transfers only). */
  handoffsThisTurn: number;
  handoffCount: number;
  maxHandoffs: number | undefined;
  /** Agents active in this turn so far, when revisits are refused; undefined allows them. */
  visited: ReadonlySet<string> | undefined;
  /** The frame the holder's return tool closes, when it has one. */
  returnFrame?: ReturnFrame | undefined;
  /** Agents waiting for the conversation to come back: a returning handoff past `maxReturnDepth` is refused. */
  callerDepth?: number;
  /** A router's transfer as decided: its call is planned from this, never parsed back (the rules still apply). */
  routed?: { toolCallId: string; target: string; reason: string } | undefined;
}

/**
 * Picks the transfers out of a step's calls. Only the first acceptable transfer in the model's
 * own order is taken; every other one is refused with a reason the model can act on, naming the rule.
 */
export function planToolCalls(input: PlanInput): PlannedCall[] {
  const { calls, toolset, style } = input;
  let accepted: string | undefined;
  return calls.map((call): PlannedCall => {
    const ownTool = toolset.tools.get(call.name);
    if (ownTool) return { kind: "tool", call, tool: ownTool };
    const refuse = (message: string, extra = false): PlannedCall => ({ kind: "refused-handoff", call, message, extra });
    const frame = input.returnFrame;
    if (frame && call.name === returnToolName(frame.caller)) {
      const summary = readSummary(call.arguments);
      if (!summary) return refuse(`${call.name} needs a summary: say what you found or did, for '${frame.caller}'.`);
      // A return spends no handoff budget (HANDOFF_RULES): only one change of hands per step holds for it.
      const refused = limitRefusal(input, accepted, HANDOFF_RULES.return);
      if (refused) return refuse(refused.message, refused.extra);
      accepted = frame.caller;
      return { kind: "return", call, frame, summary };
    }
    const routed = input.routed?.toolCallId === call.id ? input.routed : undefined;
    const request = routed
      ? { edge: toolset.transfers.get(routed.target), asked: routed.target, reason: routed.reason, input: {} }
      : readTransfer(call, style, toolset.transfers);
    if (!request) return { kind: "tool", call, tool: undefined };
    const { edge } = request;
    if (!edge) {
      return input.self.includes(request.asked)
        ? refuse(`'${input.self[0]}' already holds the conversation. ${validTargets(style, toolset.transfers)}`)
        : refuse(`Cannot hand off: '${request.asked}' is not an available transfer. ${validTargets(style, toolset.transfers)}`);
    }
    const refused = limitRefusal(input, accepted, HANDOFF_RULES.transfer);
    if (refused) return refuse(refused.message, refused.extra);
    if (HANDOFF_RULES.transfer.revisitChecked && input.visited?.has(edge.agent.name))
      return refuse(`Cannot hand off to '${edge.agent.name}': already visited in this turn.`);
    if (edge.returns && (input.callerDepth ?? 0) >= input.limits.maxReturnDepth)
      return refuse(
        `Cannot hand off to '${edge.agent.name}': ${input.limits.maxReturnDepth} agents already wait for the conversation to come back (maxReturnDepth).`,
      );
    let parsedInput: Record<string, unknown> | undefined;
    if (edge.inputSchema) {
      const parsed = edge.inputSchema.safeParse(request.input);
      if (!parsed.success) return refuse(`Cannot hand off to '${edge.agent.name}': invalid input: ${z.prettifyError(parsed.error)}`);
      parsedInput = parsed.data;
    }
    accepted = edge.agent.name;
    return {
      kind: "transfer",
      call,
      edge,
      ...(request.reason ? { reason: request.reason } : {}),
      ...(parsedInput ? { input: parsedInput } : {}),
    };
  });
}

/**
 * The limits a change of hands of a step answers to: one per step for every kind; the turn's and the
 * conversation's budgets for the kinds they cap (transfers: `HANDOFF_RULES`).
 */
function limitRefusal(
  input: PlanInput,
  accepted: string | undefined,
  rules: HandoffRules,
): { message: string; extra: boolean } | undefined {
  if (accepted !== undefined)
    return { message: `Only one transfer per step is taken: the transfer to '${accepted}' was taken, so this one was not.`, extra: true };
  if (!rules.capped) return undefined;
  if (input.handoffsThisTurn >= input.limits.maxHandoffsPerTurn)
    return { message: `Handoff limit (${input.limits.maxHandoffsPerTurn}) reached; continue yourself.`, extra: false };
  if (input.maxHandoffs !== undefined && input.handoffCount >= input.maxHandoffs)
    return { message: `Handoff limit for this conversation (${input.maxHandoffs}) reached; continue yourself.`, extra: false };
  return undefined;
}

function readSummary(raw: string): string | undefined {
  try {
    const args = JSON.parse(raw || "{}") as { summary?: unknown };
    return typeof args.summary === "string" && args.summary.trim() ? args.summary.trim() : undefined;
  } catch {
    return undefined;
  }
}
