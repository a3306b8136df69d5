/** The record of one call of a step, from its plan to its answer: what the commit and the events are built from. */
import type { AskedOutcome, ToolOutcome } from "../tools/execute-tool-call.ts";
import type { PlannedCall } from "../handoff/rules.ts";
import type { ToolCall } from "../messages.ts";

/** A call's answer, and whether it counts toward the runaway-error guard. */
export interface Answered {
  outcome: ToolOutcome;
  counts: boolean;
}

/** What a call waits for from the user: a yes or no before it runs, a client tool's output, or the answer to what it asked. */
export type CallWait = { kind: "approval" } | { kind: "client-tool" } | ({ kind: "asked" } & AskedOutcome);

export interface CallRecord {
  call: ToolCall;
  /** What the call is: a tool (known or not), an accepted handoff, or a refused one. */
  plan: PlannedCall;
  /** A tool guardrail's reason for blocking the call, or null. */
  blocked: string | null;
  /** What the call waits for from the user, when it has no answer yet. */
  awaits: CallWait | null;
  /** Null while the call waits. */
  answer: Answered | null;
  /** False when the `drop` policy keeps an extra handoff out of the history. */
  kept: boolean;
}
