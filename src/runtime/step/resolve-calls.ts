/**
 * The third stage of a step: what each tool call is and how it is answered, as one record per
 * call. In order: handoffs are picked out before anything runs (each call's plan, announced), then
 * tool guardrails and the approval gate, then the calls that start are written ahead of them, and they run.
 */
import { requiresApproval, runsOnClient } from "./gate.ts";
import { checkBudgets, spentSoFar } from "../budgets.ts";
import { argsOf, errorOutcome, executeToolCall, isAsked } from "../tools/execute-tool-call.ts";
import { firstBlock } from "../tools/guardrails.ts";
import type { CallsInFlight } from "../calls-in-flight.ts";
import { type PlannedCall, planToolCalls } from "../handoff/rules.ts";
import type { ModelStepResult, RoutedTransfer } from "./call-model.ts";
import { assistantMessage } from "./step-commit.ts";
import type { ToolCall } from "../messages.ts";
import { type StateUpdates, toolContext } from "../tools/tool-context.ts";
import type { CallContext } from "../tools/tool.ts";
import type { RunContext, TurnState } from "../turn-state.ts";
import { addUsage, NO_USAGE, type UsageTotals } from "../usage.ts";
import type { PreparedStep } from "./prepare-step.ts";
import type { Answered, CallRecord, CallWait } from "./call-record.ts";

/** What the checks before any tool runs decided of each planned call: a guardrail's block, and whether it waits for approval. */
export interface CallGates {
  /** A tool guardrail's reason for blocking each call, or null. */
  blocked: ReadonlyArray<string | null>;
  /** What each call waits for before it can be answered: a person's yes or no, or the user's client (a client tool). */
  waits: ReadonlyArray<"approval" | "client-tool" | null>;
  /**
   * The kept calls (the `drop` policy keeps an extra transfer out of the history) and the ones that start: what is written ahead of them.
   */
  kept: readonly boolean[];
  starts: readonly boolean[];
}

/**
 * What is written ahead of the step's tools, when any of them starts: the step's assistant message
 * with the calls the history keeps, and which of them start. Undefined when none starts.
 */
export function callsAhead(
  prepared: PreparedStep,
  step: ModelStepResult,
  plan: readonly PlannedCall[],
  gates: CallGates,
): CallsInFlight | undefined {
  if (!gates.starts.includes(true)) return undefined;
  const kept = plan.filter((_, i) => gates.kept[i]).map((p) => ({ call: p.call, plan: p }));
  return {
    assistant: assistantMessage(prepared.agent.name, step.text, kept),
    started: plan.filter((_, i) => gates.starts[i]).map((p) => p.call.id),
  };
}

/** The checks of the step's planned calls (see `planCalls`) before any tool runs: budgets, tool guardrails, the approval gate. */
export async function gateCalls(
  run: RunContext,
  state: TurnState,
  prepared: PreparedStep,
  plan: readonly PlannedCall[],
  stepUsage: UsageTotals,
): Promise<CallGates> {
  const { network } = run.options;
  const { agent } = prepared;
  const regular = plan.filter((p) => p.kind === "tool").length;
  const spent = spentSoFar(run, state);
  checkBudgets(network.options.budgets, addUsage(spent.turn, stepUsage), addUsage(spent.conversation, stepUsage), {
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
  const waits = await Promise.all(
    plan.map(async (p, i) => {
      if (p.kind !== "tool" || blocked[i] !== null) return null;
      if (runsOnClient(p.call, p.tool)) return "client-tool" as const;
      return (await requiresApproval(p.call, p.tool)) ? ("approval" as const) : null;
    }),
  );
  const drop = network.options.extraTransfers === "drop";
  return {
    blocked,
    waits,
    kept: plan.map((p) => !(drop && p.kind === "refused-handoff" && p.extra)),
    starts: plan.map((p, i) => p.kind === "tool" && blocked[i] === null && waits[i] === null),
  };
}

/** Answers the step's planned calls past their gates, each as one record: the tools run, handoffs are answered without running anything. */
export async function answerCalls(
  run: RunContext,
  state: TurnState,
  prepared: PreparedStep,
  plan: readonly PlannedCall[],
  gates: CallGates,
  updates: StateUpdates,
  stepSpent: UsageTotals = NO_USAGE,
): Promise<CallRecord[]> {
  const { agent, toolset } = prepared;
  const { blocked, waits } = gates;
  // The tools see the turn as it stands with this step's model call spent (a delegated run's budgets count it).
  const spent = { ...state, progress: { ...state.progress, usage: addUsage(state.progress.usage, stepSpent) } };
  const current = { ...spent, conversationUsage: addUsage(state.conversationUsage, stepSpent) };
  // A cancel during the checks: no tool starts.
  run.signal.throwIfAborted();
  const available = [...toolset.tools.keys()];
  const answers = await Promise.all(
    plan.map((p, i): Promise<Answered | CallWait> | CallWait => {
      const reason = blocked[i];
      if (reason !== null) return Promise.resolve({ outcome: errorOutcome(`Blocked by a guardrail: ${reason}`), counts: false });
      const wait = waits[i];
      return wait ? { kind: wait } : answer(p, toolContext(run, current, agent.name, updates), available);
    }),
  );
  // Tools that ran are answered and committed even if the run was cancelled meanwhile: what they did is real.
  return plan.map((p, i) => {
    const answered = answers[i]!;
    const waiting = "kind" in answered;
    return {
      call: p.call,
      plan: p,
      blocked: blocked[i]!,
      awaits: waiting ? answered : null,
      answer: waiting ? null : answered,
      kept: gates.kept[i]!,
    };
  });
}

/** The step's calls against the handoff rules, with what the turn has done so far: decided before any tool runs. */
export function planCalls(
  run: RunContext,
  state: TurnState,
  prepared: PreparedStep,
  calls: readonly ToolCall[],
  routed?: RoutedTransfer,
): PlannedCall[] {
  const { network } = run.options;
  const { agent } = prepared;
  const { handoffs } = state.progress;
  return planToolCalls({
    calls,
    self: [agent.name, network.transferToolName(agent.name) ?? agent.name],
    toolset: prepared.toolset,
    style: network.options.toolStyle,
    limits: run.limits,
    // Only transfers are capped (HANDOFF_RULES): returns and hand-backs of this turn spend none of its budget.
    handoffsThisTurn: handoffs.filter((h) => h.kind === "transfer").length,
    handoffCount: state.holding.handoffCount,
    maxHandoffs: network.options.maxHandoffs,
    visited: network.options.allowRevisit ? undefined : new Set([handoffs[0]?.from ?? agent.name, ...handoffs.map((h) => h.to)]),
    returnFrame: prepared.returnTo?.frame,
    callerDepth: state.holding.callers.length,
    routed,
  });
}

/** Answers one planned call (or says what it asked the user); handoffs are answered without running anything. */
async function answer(planned: PlannedCall, ctx: CallContext, availableTools: string[]): Promise<Answered | CallWait> {
  switch (planned.kind) {
    case "tool": {
      const outcome = await executeToolCall(planned.call, planned.tool, ctx, availableTools);
      return isAsked(outcome) ? { kind: "asked", ...outcome } : { outcome, counts: true };
    }
    case "refused-handoff":
      // A policy verdict, not a tool failure.
      return { outcome: errorOutcome(planned.message), counts: false };
    case "transfer": {
      const text = `Transferred to '${planned.edge.agent.name}'.${planned.reason ? ` ${planned.reason}` : ""}`;
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
