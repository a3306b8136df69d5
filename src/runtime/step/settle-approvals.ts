/** A resumed leg's first stage: the suspended step's awaited calls answered, the whole step committed. */
import { errorOutcome, executeToolCall, toolMessage } from "../tools/execute-tool-call.ts";
import type { RunEvent } from "../events.ts";
import type { ToolMessage } from "../messages.ts";
import type { TurnItem } from "../run-options.ts";
import { type ApprovalDecision, denialMessage, type PendingApproval, type Suspension } from "../suspension.ts";
import { commit } from "../commit.ts";
import { type StateUpdates, toolContext } from "../tools/tool-context.ts";
import { advance, holdingChange, type RunContext, type TurnState } from "../turn-state.ts";
import { countErrorSteps, tooManyErrors } from "./next-step.ts";
import { withRemoteTools } from "./prepare-step.ts";
import type { Answered } from "./call-record.ts";
import type { Tool } from "../tools/tool.ts";

export async function* settleApprovals(
  run: RunContext,
  state: TurnState,
  suspension: Suspension,
  decisions: readonly ApprovalDecision[],
): AsyncGenerator<TurnItem, TurnState> {
  const { network } = run.options;
  const updates: StateUpdates = new Map();
  const settled = await Promise.all(
    suspension.pending.map(async (pending): Promise<[PendingApproval, Answered]> => {
      const decision = decisions.find((d) => d.toolCallId === pending.toolCallId) ?? { toolCallId: pending.toolCallId, approved: false };
      if (!decision.approved) return [pending, { outcome: errorOutcome(denialMessage(decision)), counts: false }];
      // The gate belongs to the run: the call runs with its own agent's tool, even after a handoff.
      const owner = network.get(pending.agent);
      const call = suspension.assistant.toolCalls!.find((c) => c.id === pending.toolCallId)!;
      const tools = owner ? (await withRemoteTools(run, owner, network.toolset(owner.name))).toolset.tools : new Map<string, Tool>();
      const outcome = await executeToolCall(call, tools.get(call.name), toolContext(run, state, pending.agent, updates), [...tools.keys()]);
      return [pending, { outcome, counts: true }];
    }),
  );
  // Approved calls that ran are committed even if the run was cancelled meanwhile: what they did is real.
  const results = suspension.results.map((result, i): ToolMessage => {
    if (result) return result;
    const call = suspension.assistant.toolCalls![i]!;
    const decision = decisions.find((d) => d.toolCallId === call.id);
    const approval = { approved: decision?.approved === true, ...(decision?.reason?.trim() ? { reason: decision.reason.trim() } : {}) };
    return { ...toolMessage(call, settled.find(([pending]) => pending.toolCallId === call.id)![1].outcome), approval };
  });
  const messages = [suspension.assistant, ...results, ...suspension.trailing];
  const next = advance(state, {
    messages,
    agentStates: updates.size ? Object.fromEntries(updates) : undefined,
    errorSteps: countErrorSteps(
      state.progress.errorSteps,
      settled.map(([, answered]) => answered),
    ),
    committed: true,
  });
  const announced: RunEvent[] = settled.map(([pending, answered]) => ({
    type: "tool-result",
    toolCallId: pending.toolCallId,
    name: pending.name,
    result: answered.outcome.result,
    isError: answered.outcome.isError,
    // Only a declined call is not counted by the error guard: that is what marks it here.
    ...(answered.counts ? {} : { denied: true as const }),
  }));
  for (const item of await commit(run, { messages, suspension: null, ...holdingChange(state, next) }, announced)) yield item;
  if (next.progress.errorSteps >= run.limits.maxToolErrorSteps) throw tooManyErrors(run.limits);
  return next;
}
