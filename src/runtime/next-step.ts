import type { Limits } from "./limits.ts";

/** What a finished step decided for the loop. */
export type NextStep =
  | { kind: "final" }
  | { kind: "handoff" }
  | { kind: "run-again" }
  | { kind: "too-many-errors" };

export function decideNextStep(step: {
  toolCalls: number;
  handoff: boolean;
  errorSteps: number;
  limits: Limits;
}): NextStep {
  if (step.toolCalls === 0) return { kind: "final" };
  if (step.handoff) return { kind: "handoff" };
  if (step.errorSteps >= step.limits.maxToolErrorSteps) return { kind: "too-many-errors" };
  return { kind: "run-again" };
}
