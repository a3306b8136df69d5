/** The record of one call of a step, from its plan to its answer: what the commit and the events are built from. */
import type { ToolOutcome } from "../tools/execute-tool-call.ts";
import type { PlannedCall } from "../handoff/rules.ts";
import type { ToolCall } from "../messages.ts";

/** A call's answer, and whether it counts toward the runaway-error guard. */
export interface Answered {
  outcome: ToolOutcome;
  counts: boolean;
}

export interface CallRecord {
  call: ToolCall;
  /** What the call is: a tool (known or not), an accepted handoff, or a refused one. */
  plan: PlannedCall;
  /** A tool guardrail's reason for blocking the call, or null. */
  blocked: string | null;
  /** The call waits for a person's decision, and has no answer yet. */
  awaitsApproval: boolean;
  /** Null while the call awaits approval. */
  answer: Answered | null;
  /** False when the `drop` policy keeps an extra handoff out of the history. */
  kept: boolean;
}
