import type { HandoffRecord, OperatorIdentity } from "./handoff/types.ts";
import type { CallPlan } from "./messages.ts";
import type { Usage, UsageTotals } from "./usage.ts";

/** The events of a turn: one flat union keyed on `type`, plain JSON so they cross any wire. */

/** How a turn's leg ended without failing, as its `done` event says; `cancelled` when its signal was aborted. */
export type TurnStatus = "completed" | "awaiting_approval" | "awaiting_human" | "cancelled";

/** How a turn's leg ended: what the host records for the turn. */
export type TurnOutcome = { status: TurnStatus } | { status: "failed"; code: string };

/**
 * The events of a turn, streamed as they happen: a `run-start`, steps with their text, calls, results and handoffs, and one `done` or
 * `error` at the end.
 */
export type RunEvent =
  /** `resumed`: a suspended turn goes on after decisions; `scheduled`: a turn the host's schedule started (a follow-up, a deadline). */
  | { type: "run-start"; conversationId: string; agent: string; model: string; demo?: boolean; resumed?: boolean; scheduled?: boolean }
  /** `remote`: the step is a call to a remote A2A agent (`remoteAgent`) at that URL, not a model call. */
  | { type: "step-start"; stepIndex: number; agent: string; remote?: string }
  | { type: "text-delta"; delta: string }
  /** `plan`: what the loop makes of the call, decided before any tool runs (a transfer is no tool). */
  | { type: "tool-call"; toolCallId: string; name: string; args: unknown; plan: CallPlan }
  /** `denied`: a person declined the call, which never ran (its result says why). */
  | { type: "tool-result"; toolCallId: string; name: string; result: unknown; isError: boolean; denied?: true }
  | ({ type: "handoff" } & HandoffRecord)
  /** `expiresAt`: when an undecided call is declined with reason `expired` (the tool's, agent's or network's `approvalExpiresIn`). */
  | { type: "approval-required"; toolCallId: string; name: string; args: unknown; agent: string; expiresAt?: string }
  | { type: "step-finish"; stepIndex: number; finishReason: string; usage?: Usage }
  /** A guardrail blocked the turn's input, its final text, or one tool call (`toolCallId`). */
  | { type: "guardrail"; kind: "input" | "output" | "tool"; agent: string; reason: string; toolCallId?: string }
  /** Older turns were replaced by a summary in what the model is sent (the stored history keeps them). */
  | { type: "compaction"; agent: string; replaced: number; kept: number; summaryChars: number }
  | { type: "warning"; code: string; message: string }
  /** A person's message to the user, from the host's operator API while a person holds the conversation (never from the loop). */
  /** `operator`: the name shown; `by`: the signed-in operator who sent it, from their token (absent for the shared operator key). */
  | { type: "operator-message"; agent: string; text: string; operator?: string; by?: OperatorIdentity }
  | {
      type: "done";
      status: TurnStatus;
      text: string;
      agent: string;
      handoffs: HandoffRecord[];
      handoffCount: number;
      /** What this turn spent so far (model calls, tokens, tool calls). */
      usage?: UsageTotals;
    }
  /** `status`: the provider's HTTP status, when a model call failed with one. */
  | { type: "error"; code: string; message: string; status?: number };
