/**
 * The third stage of a step: what each tool call is and how it is answered, as one record per
 * call. In order: handoffs are picked out before anything runs, then tool guardrails, the
 * approval gate, and execution.
 */
import { requiresApproval } from "../approval-gate.ts";
import { checkBudgets } from "../budgets.ts";
import { argsOf, errorOutcome, executeToolCall, type ToolOutcome } from "../execute-tool-call.ts";
import { firstBlock } from "../guardrails.ts";
import { type PlannedCall, planToolCalls } from "../handoff/rules.ts";
import type { ToolCall } from "../messages.ts";
import type { ToolContext } from "../tool.ts";
import { type StateUpdates, toolContext } from "../tool-context.ts";
import type { RunContext, TurnState } from "../turn-state.ts";
import { addUsage, type UsageTotals } from "../usage.ts";
import type { PreparedStep } from "./prepare-step.ts";

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

/** Answers the step's planned calls (see `planCalls`), each as one record. */
export async function resolveCalls(
  run: RunContext,
  state: TurnState,
  prepared: PreparedStep,
  plan: readonly PlannedCall[],
  stepUsage: UsageTotals,
  updates: StateUpdates,
): Promise<CallRecord[]> {
  const { network } = run.options;
  const { agent, toolset } = prepared;
  const regular = plan.filter((p) => p.kind === "tool").length;
  checkBudgets(network.options.budgets, addUsage(state.progress.usage, stepUsage), addUsage(state.conversationUsage, stepUsage), {
    toolCalls: regular,
  });
  const guardrails = network.options.toolGuardrails ?? [];
  const blocked = guardrails.length
    ? await Promise.all(
        plan.map((p) =>
          p.kind === "tool" ? firstBlock(guardrails, { name: p.call.name, args: argsOf(p.call), agent: agent.name }) : null,
        ),
      )
    : plan.map(() => null);
  const gated = await Promise.all(
    plan.map((p, i) => (p.kind === "tool" && blocked[i] === null ? requiresApproval(p.call, p.tool) : false)),
  );
  // A cancel during the checks above: no tool starts.
  run.signal.throwIfAborted();
  const available = [...toolset.tools.keys()];
  const answers = await Promise.all(
    plan.map((p, i): Promise<Answered> | null => {
      const reason = blocked[i];
      if (reason !== null) return Promise.resolve({ outcome: errorOutcome(`Blocked by a guardrail: ${reason}`), counts: false });
      return gated[i] ? null : answer(p, toolContext(run, state, agent.name, updates), available);
    }),
  );
  // Tools that ran are answered and committed even if the run was cancelled meanwhile: what they did is real.
  const drop = network.options.extraTransfers === "drop";
  return plan.map((p, i) => ({
    call: p.call,
    plan: p,
    blocked: blocked[i]!,
    awaitsApproval: gated[i]!,
    answer: answers[i] ?? null,
    kept: !(drop && p.kind === "refused-transfer" && p.extra),
  }));
}

/** The step's calls against the handoff rules, with what the turn has done so far: decided before any tool runs. */
export function planCalls(run: RunContext, state: TurnState, prepared: PreparedStep, calls: readonly ToolCall[]): PlannedCall[] {
  const { network } = run.options;
  const { agent } = prepared;
  const { handoffs } = state.progress;
  return planToolCalls({
    calls,
    self: [agent.name, network.transferToolName(agent.name) ?? agent.name],
    toolset: prepared.toolset,
    style: network.options.toolStyle,
    limits: run.limits,
    handoffsThisTurn: handoffs.length,
    handoffCount: state.holding.handoffCount,
    maxHandoffs: network.options.maxHandoffs,
    visited: network.options.allowRevisit ? undefined : new Set([handoffs[0]?.from ?? agent.name, ...handoffs.map((h) => h.to)]),
    returnFrame: prepared.returnTo?.frame,
    callerDepth: state.holding.callers.length,
  });
}

/** Answers one planned call; handoffs are answered without running anything. */
async function answer(
  planned: PlannedCall,
  ctx: Omit<ToolContext, "toolCallId" | "idempotencyKey">,
  availableTools: string[],
): Promise<Answered> {
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
    case "return": {
      // The caller reads the summary here, in the history, when it takes the conversation back.
      const text = `Returned the conversation to '${planned.frame.caller}'. Summary: ${planned.summary}`;
      return { outcome: { result: text, content: text, isError: false }, counts: false };
    }
    default: {
      const exhaustive: never = planned;
      throw new Error(`unknown plan ${JSON.stringify(exhaustive)}`);
    }
  }
}
