import { errorOutcome, executeToolCall } from "./execute-tool-call.ts";
import type { RunEvent } from "./events.ts";
import type { ToolMessage } from "./messages.ts";
import { type Answered, type Context, countErrorSteps, type Loop, tooManyErrors, toolMessage } from "./loop-state.ts";
import { type ApprovalDecision, denialMessage, type PendingApproval, type Suspension } from "./suspension.ts";
import { toolContext } from "./tool-context.ts";

/** Answers the suspended step's awaited calls, commits the whole step, and announces the results. */
export async function* settleApprovals(ctx: Context, loop: Loop, suspension: Suspension, decisions: readonly ApprovalDecision[]): AsyncGenerator<RunEvent, void> {
  const { network } = ctx.options;
  const settled = await Promise.all(
    suspension.pending.map(async (pending): Promise<[PendingApproval, Answered]> => {
      const decision = decisions.find((d) => d.toolCallId === pending.toolCallId) ?? { toolCallId: pending.toolCallId, approved: false };
      if (!decision.approved) return [pending, { outcome: errorOutcome(denialMessage(decision)), counts: false }];
      // The gate belongs to the run: the call runs with its own agent's tool, even after a transfer.
      const owner = network.get(pending.agent);
      const call = suspension.assistant.toolCalls!.find((c) => c.id === pending.toolCallId)!;
      const tools = owner?.tools ?? [];
      const outcome = await executeToolCall(call, tools.find((t) => t.name === call.name), toolContext(ctx, loop, pending.agent), tools.map((t) => t.name));
      return [pending, { outcome, counts: true }];
    }),
  );
  ctx.signal.throwIfAborted();
  const results = suspension.results.map((result, i): ToolMessage => {
    if (result) return result;
    const call = suspension.assistant.toolCalls![i]!;
    return toolMessage(call, settled.find(([pending]) => pending.toolCallId === call.id)![1].outcome);
  });
  const trailing = suspension.trailing ?? [];
  await ctx.options.store.commitStep({ messages: [suspension.assistant, ...results, ...trailing], activeAgent: loop.agent.name, suspension: null });
  loop.history.push(suspension.assistant, ...results, ...trailing);
  for (const [pending, answered] of settled) {
    yield { type: "tool-result", toolCallId: pending.toolCallId, name: pending.name, result: answered.outcome.result, isError: answered.outcome.isError };
  }
  loop.errorSteps = countErrorSteps(loop.errorSteps, settled.map(([, answered]) => answered));
  if (loop.errorSteps >= ctx.limits.maxToolErrorSteps) throw tooManyErrors(ctx.limits);
}

