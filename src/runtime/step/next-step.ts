/** The last stage of a step: what the turn does next, and the runaway-error guard it applies. */
import { RuntimeError } from "../errors.ts";
import type { Limits } from "../limits.ts";
import type { Answered } from "./call-record.ts";

export type NextStep =
  | { kind: "final" }
  | { kind: "handoff" }
  | { kind: "run-again" }
  | { kind: "awaiting-user" }
  | { kind: "too-many-errors" };

export function decideNextStep(step: {
  toolCalls: number;
  handoff: boolean;
  pendingRequests: number;
  errorSteps: number;
  limits: Limits;
}): NextStep {
  if (step.pendingRequests > 0) return { kind: "awaiting-user" };
  if (step.toolCalls === 0) return { kind: "final" };
  // A handoff goes ahead even in a step that reaches the error limit: the agent taking over may do better.
  if (step.handoff) return { kind: "handoff" };
  if (step.errorSteps >= step.limits.maxToolErrorSteps) return { kind: "too-many-errors" };
  return { kind: "run-again" };
}

/**
 * The runaway-error guard counts steps whose counted results are all errors. Refused handoffs and
 * denials are verdicts, not failures: a step with only those neither counts nor resets.
 */
export function countErrorSteps(previous: number, answered: readonly Answered[]): number {
  const counted = answered.filter((a) => a.counts);
  if (counted.length === 0) return previous;
  return counted.every((a) => a.outcome.isError) ? previous + 1 : 0;
}

export function tooManyErrors(limits: Limits): RuntimeError {
  return new RuntimeError(
    "too_many_tool_errors",
    `${limits.maxToolErrorSteps} steps in a row ended with only failed tool calls; the turn was stopped.`,
  );
}
