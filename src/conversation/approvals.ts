import { type ApprovalDecision, undecided } from "../runtime/suspension.ts";
import type { Message } from "../runtime/messages.ts";
import type { ConversationState } from "./storage/conversation-store.ts";
import { fail, ok, type ConversationResult } from "./results.ts";

/** Checks decisions against the suspended step: each must name a call that still waits. */
export function checkDecisions(
  state: ConversationState | null,
  history: readonly Message[],
  decisions: readonly ApprovalDecision[],
): ConversationResult<{ complete: boolean }> {
  const suspension = state?.suspension;
  for (const { toolCallId } of decisions) {
    const decided =
      state?.decisions.some((d) => d.toolCallId === toolCallId) ||
      suspension?.results.some((r) => r?.toolCallId === toolCallId) ||
      history.some((m) => m.role === "tool" && m.toolCallId === toolCallId);
    if (decided) return fail("approval_already_decided", `Tool call '${toolCallId}' was already decided.`, { toolCallId });
    if (!suspension?.pending.some((p) => p.toolCallId === toolCallId)) {
      return suspension
        ? fail("approval_not_found", `No pending approval '${toolCallId}'.`, {
            toolCallId,
            pending: suspension.pending.map((p) => p.toolCallId),
          })
        : fail("no_pending_approval", "Nothing in this conversation is waiting for an approval.");
    }
  }
  // Complete when no call of the step waits once these are added to the stored decisions.
  return ok({ complete: undecided({ suspension: suspension!, decisions: [...state!.decisions, ...decisions] }).length === 0 });
}

/**
 * `decisions` less those that repeat one already stored with the same answer: useChat sends the
 * whole assistant message back, so a response it sent before (or one made elsewhere, which
 * /ui-messages shows decided) comes again with the new one. All repeats: kept, to be refused.
 */
export function withoutRepeats(state: ConversationState | null, decisions: ApprovalDecision[]): ApprovalDecision[] {
  const stored = new Map(state?.decisions.map((d) => [d.toolCallId, d.approved]));
  const fresh = decisions.filter((d) => stored.get(d.toolCallId) !== d.approved);
  return fresh.length > 0 ? fresh : decisions;
}
