import type { Agent } from "./agent.ts";
import type { UsageTotals } from "./budgets.ts";
import type { Compaction } from "./compaction.ts";
import { RuntimeError } from "./errors.ts";
import type { HandoffRecord } from "./events.ts";
import { errorOutcome, executeToolCall, parseArguments, type ToolOutcome } from "./execute-tool-call.ts";
import type { Limits } from "./limits.ts";
import type { Message, ToolCall, ToolMessage } from "./messages.ts";
import type { PlannedCall } from "./plan-tool-calls.ts";
import type { RunTurnOptions } from "./run-loop.ts";
import type { ToolContext } from "./tool.ts";

/** What the loop carries from step to step. */
export interface Loop {
  agent: Agent;
  history: Message[];
  /** Accepted transfers of this turn. */
  handoffs: HandoffRecord[];
  handoffCount: number;
  agentSteps: number;
  errorSteps: number;
  stepIndex: number;
  lastHandoff: HandoffRecord | undefined;
  context: Record<string, unknown>;
  turnUsage: UsageTotals;
  conversationUsage: UsageTotals;
  compaction: Compaction | undefined;
  /** Reported input tokens over estimated ones, from the last call: corrects the estimator. */
  calibration: number;
}

export interface Context {
  options: RunTurnOptions;
  limits: Limits;
  signal: AbortSignal;
}

/** A call's answer, and whether it counts toward the runaway-error guard. */
export type Answered = { outcome: ToolOutcome; counts: boolean };

/** Answers one planned call; transfers are answered without running anything. */
export async function answer(planned: PlannedCall, ctx: Omit<ToolContext, "toolCallId" | "idempotencyKey">, availableTools: string[]): Promise<Answered> {
  switch (planned.kind) {
    case "tool":
      return { outcome: await executeToolCall(planned.call, planned.tool, ctx, availableTools), counts: true };
    case "refused-transfer":
      // A policy verdict, not a tool failure.
      return { outcome: errorOutcome(planned.message), counts: false };
    case "transfer": {
      const text = `Transferred to '${planned.edge.target.name}'.${planned.reason ? ` ${planned.reason}` : ""}`;
      return { outcome: { result: text, content: text, isError: false }, counts: false };
    }
    default: {
      const exhaustive: never = planned;
      throw new Error(`unknown plan ${JSON.stringify(exhaustive)}`);
    }
  }
}

/**
 * The runaway-error guard counts steps whose counted results are all errors. Refused transfers and
 * denials are verdicts, not failures: a step with only those neither counts nor resets.
 */
export function countErrorSteps(previous: number, answered: readonly Answered[]): number {
  const counted = answered.filter((a) => a.counts);
  if (counted.length === 0) return previous;
  return counted.every((a) => a.outcome.isError) ? previous + 1 : 0;
}

export function tooManyErrors(limits: Limits): RuntimeError {
  return new RuntimeError("too_many_tool_errors", `${limits.maxToolErrorSteps} steps in a row ended with only failed tool calls; the turn was stopped.`);
}

export function toolMessage(call: ToolCall, outcome: ToolOutcome): ToolMessage {
  return { role: "tool", toolCallId: call.id, name: call.name, content: outcome.content, isError: outcome.isError };
}

export function argsOf(call: ToolCall): unknown {
  const parsed = parseArguments(call.arguments);
  return parsed.ok ? parsed.value : call.arguments;
}
