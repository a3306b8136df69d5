import { requiresApproval } from "./approval-gate.ts";
import { addUsage, checkBudgets, modelCallUsage, NO_USAGE, type UsageTotals } from "./budgets.ts";
import type { Compaction } from "./compaction.ts";
import { estimateTokens } from "./compaction.ts";
import { compactIfNeeded, visibleHistory } from "./context-window.ts";
import { RuntimeError, toRuntimeError } from "./errors.ts";
import type { HandoffRecord, RunEvent } from "./events.ts";
import { errorOutcome } from "./execute-tool-call.ts";
import { firstBlock } from "./guardrails.ts";
import { DEFAULT_LIMITS, type Limits } from "./limits.ts";
import { type Answered, answer, argsOf, type Context, countErrorSteps, type Loop, tooManyErrors, toolMessage } from "./loop-state.ts";
import type { AssistantMessage, Message, ToolMessage } from "./messages.ts";
import type { Network } from "./network.ts";
import { decideNextStep } from "./next-step.ts";
import { planToolCalls } from "./plan-tool-calls.ts";
import type { Model, TurnStore } from "./ports.ts";
import { settleApprovals } from "./settle-approvals.ts";
import { streamModelCall } from "./stream-model-call.ts";
import type { ApprovalDecision, PendingApproval, Suspension } from "./suspension.ts";
import { toolContext } from "./tool-context.ts";

/** A turn starts with a user message, or resumes a suspended one with people's decisions. */
export type TurnInput =
  | { kind: "message"; text: string }
  | { kind: "resume"; suspension: Suspension; decisions: readonly ApprovalDecision[] };

export interface RunTurnOptions {
  conversationId: string;
  network: Network;
  model: Model;
  store: TurnStore;
  /** The committed history before this leg. */
  history: readonly Message[];
  /** The agent holding the conversation; an unknown name falls back to the entry agent. */
  activeAgent: string;
  /** Accepted transfers over the conversation's life before this leg. */
  handoffCount: number;
  /** The transfer that brought the active agent, if any: its historyFilter still applies. */
  lastHandoff?: HandoffRecord;
  /** What handoffs have carried so far (typed handoff input). */
  context?: Record<string, unknown>;
  /** What the conversation has spent before this leg, for its budgets. */
  usage?: UsageTotals;
  /** The latest compaction of the stored history. */
  compaction?: Compaction;
  input: TurnInput;
  limits?: Partial<Limits>;
  signal?: AbortSignal;
}

/**
 * Runs one user turn (or its resumed leg) as an async generator of events; it ends with exactly
 * one `done` or `error`. Each step is committed through the store as a whole before its results
 * are announced, so the stored history is valid whatever fails.
 */
export async function* runTurn(options: RunTurnOptions): AsyncGenerator<RunEvent, void> {
  try {
    yield* runLeg(options);
  } catch (error) {
    const failure = options.signal?.aborted ? new RuntimeError("run_aborted", "The run was cancelled.") : toRuntimeError(error);
    yield { type: "error", code: failure.code, message: failure.message, ...(failure.status ? { status: failure.status } : {}) };
  }
}

async function* runLeg(options: RunTurnOptions): AsyncGenerator<RunEvent, void> {
  const { network, model, input } = options;
  const ctx: Context = { options, limits: { ...DEFAULT_LIMITS, ...options.limits }, signal: options.signal ?? new AbortController().signal };
  const agent = network.get(options.activeAgent) ?? network.entry;
  const resumed = input.kind === "resume" ? input.suspension : undefined;
  const loop: Loop = {
    agent,
    history: [...options.history],
    handoffs: [...(resumed?.turnHandoffs ?? [])],
    handoffCount: options.handoffCount,
    agentSteps: resumed?.agentSteps ?? 0,
    errorSteps: resumed?.errorSteps ?? 0,
    stepIndex: resumed ? resumed.stepIndex + 1 : 0,
    lastHandoff: options.lastHandoff,
    context: { ...options.context },
    turnUsage: resumed?.turnUsage ?? NO_USAGE,
    conversationUsage: options.usage ?? NO_USAGE,
    compaction: options.compaction,
    calibration: 1,
  };
  const missing = network.get(options.activeAgent) ? undefined : options.activeAgent;

  yield {
    type: "run-start",
    conversationId: options.conversationId,
    agent: agent.name,
    model: model.label ?? network.modelFor(agent),
    ...(model.label ? { demo: true } : {}),
    ...(resumed ? { resumed: true } : {}),
  };

  // A deploy removed the agent that held the conversation: the entry agent takes over (seed 002).
  const note: Message[] = missing
    ? [{ role: "system", agent: agent.name, content: `Note: the agent '${missing}' that held this conversation no longer exists; '${agent.name}' took over.` }]
    : [];
  if (missing) yield { type: "warning", code: "agent_missing", message: `Agent '${missing}' no longer exists; '${agent.name}' took over the conversation.` };

  if (input.kind === "message") {
    const blocked = await firstBlock(agent.inputGuardrails, { text: input.text, agent: agent.name, context: loop.context });
    if (blocked !== null) {
      // Nothing of a blocked input is stored or sent to a model.
      yield { type: "guardrail", kind: "input", agent: agent.name, reason: blocked };
      throw new RuntimeError("guardrail_blocked", `The message was blocked: ${blocked}`);
    }
    const user: Message = { role: "user", content: input.text };
    await options.store.commitStep({ messages: [...note, user], activeAgent: agent.name });
    loop.history.push(...note, user);
  } else {
    yield* settleApprovals(ctx, loop, input.suspension, input.decisions);
  }
  while (!(yield* runStep(ctx, loop)));
}

/**
 * One model call and its tools. Returns true when the turn has ended. Longer than it should be:
 * splitting it into named stages is the restructuring issue's first item (issue 14).
 */
async function* runStep(ctx: Context, loop: Loop): AsyncGenerator<RunEvent, boolean> {
  const { network, model, store } = ctx.options;
  const { limits, signal } = ctx;
  const agent = loop.agent;
  const stepIndex = loop.stepIndex++;
  if (loop.agentSteps >= limits.maxSteps) {
    throw new RuntimeError("max_steps", `Agent '${agent.name}' reached maxSteps (${limits.maxSteps}) in this turn.`);
  }
  checkBudgets(network.options.budgets, loop.turnUsage, loop.conversationUsage, { modelCalls: 1 });
  yield { type: "step-start", stepIndex, agent: agent.name };
  const toolset = network.toolset(agent.name, { activeAgent: agent.name, handoffCount: loop.handoffCount, turnHandoffs: loop.handoffs.length, context: loop.context });
  const instructions = (network.options.systemPrompt === "append" ? network.entry : agent).instructionsFor({ context: loop.context });
  const compaction = yield* compactIfNeeded(ctx, loop, instructions, toolset.specs);
  const step = yield* streamModelCall(model, {
    agent: agent.name,
    model: network.modelFor(agent),
    instructions,
    messages: visibleHistory(network, loop),
    tools: toolset.specs,
    settings: agent.modelSettings,
    signal,
  });
  loop.agentSteps++;
  signal.throwIfAborted();
  // Only a context budget needs the estimator, and only then is it worth correcting.
  if (step.usage?.inputTokens && (agent.contextBudget ?? network.options.compaction?.contextBudget)) {
    loop.calibration = step.usage.inputTokens / Math.max(1, estimateTokens(instructions, visibleHistory(network, loop), toolset.specs));
  }
  const stepUsage = addUsage(compaction?.usage ?? NO_USAGE, modelCallUsage(step.usage));
  for (const call of step.toolCalls) yield { type: "tool-call", toolCallId: call.id, name: call.name, args: argsOf(call) };

  // Order within a step (seed 002): transfer interception, tool guardrails, the approval gate, execution.
  const plan = planToolCalls({
    calls: step.toolCalls,
    self: [agent.name, network.transferToolName(agent.name) ?? agent.name],
    toolset,
    style: network.options.toolStyle,
    limits,
    handoffsThisTurn: loop.handoffs.length,
    handoffCount: loop.handoffCount,
    maxHandoffs: network.options.maxHandoffs,
    visited: network.options.allowRevisit ? undefined : new Set([loop.handoffs[0]?.from ?? agent.name, ...loop.handoffs.map((h) => h.to)]),
  });
  const regular = plan.filter((p) => p.kind === "tool").length;
  checkBudgets(network.options.budgets, addUsage(loop.turnUsage, stepUsage), addUsage(loop.conversationUsage, stepUsage), { toolCalls: regular });
  const guardrails = network.options.toolGuardrails ?? [];
  const blocked = guardrails.length
    ? await Promise.all(plan.map((p) => (p.kind === "tool" ? firstBlock(guardrails, { name: p.call.name, args: argsOf(p.call), agent: agent.name }) : null)))
    : plan.map(() => null);
  const gated = await Promise.all(plan.map((p, i) => (p.kind === "tool" && blocked[i] === null ? requiresApproval(p.call, p.tool) : false)));
  const answered = await Promise.all(
    plan.map((planned, i): Promise<Answered> | null => {
      const reason = blocked[i];
      if (reason !== null && reason !== undefined) return Promise.resolve({ outcome: errorOutcome(`Blocked by a guardrail: ${reason}`), counts: false });
      return gated[i] ? null : answer(planned, toolContext(ctx, loop, agent.name), [...toolset.tools.keys()]);
    }),
  );
  signal.throwIfAborted();
  for (const [i, reason] of blocked.entries()) {
    if (reason !== null && reason !== undefined) yield { type: "guardrail", kind: "tool", agent: agent.name, reason, toolCallId: plan[i]!.call.id };
  }
  if (step.toolCalls.length === 0) {
    const outputBlocked = await firstBlock(agent.outputGuardrails, { text: step.text, agent: agent.name, context: loop.context });
    if (outputBlocked !== null) {
      // The blocked answer is not stored: the history ends where it was before this step.
      yield { type: "guardrail", kind: "output", agent: agent.name, reason: outputBlocked };
      throw new RuntimeError("guardrail_blocked", `The answer was blocked: ${outputBlocked}`);
    }
  }
  const turnUsage = addUsage(loop.turnUsage, { ...stepUsage, toolCalls: answered.filter((a, i) => a !== null && plan[i]!.kind === "tool" && !blocked[i]).length + gated.filter(Boolean).length });

  // The `drop` policy keeps extra transfers out of the history, so the model never sees them refused.
  const kept = plan.map((p) => !(p.kind === "refused-transfer" && p.extra && network.options.extraTransfers === "drop"));
  const keptCalls = step.toolCalls.filter((_, i) => kept[i]);
  const assistant: AssistantMessage = { role: "assistant", agent: agent.name, content: step.text || null, ...(keptCalls.length ? { toolCalls: keptCalls } : {}) };
  const transfer = plan.find((p) => p.kind === "transfer");
  const target = transfer?.edge.target;
  const handoff: HandoffRecord | undefined = transfer && target
    ? { from: agent.name, to: target.name, toolCallId: transfer.call.id, ...(transfer.reason ? { reason: transfer.reason } : {}), ...(transfer.input ? { input: transfer.input } : {}), stepIndex }
    : undefined;
  const results = plan.flatMap((planned, i) => (kept[i] ? [answered[i] ? toolMessage(planned.call, answered[i].outcome) : null] : []));
  const pending: PendingApproval[] = plan.flatMap((planned, i) =>
    gated[i] ? [{ toolCallId: planned.call.id, name: planned.call.name, args: argsOf(planned.call), agent: agent.name }] : [],
  );
  const handoffs = handoff ? [...loop.handoffs, handoff] : loop.handoffs;
  const errorSteps = countErrorSteps(loop.errorSteps, answered.filter((a): a is Answered => a !== null));
  const activeAgent = target ?? agent;
  const agentSteps = target ? 0 : loop.agentSteps;
  const context = transfer?.input ? { ...loop.context, ...transfer.input } : undefined;
  // The append system-prompt mode records the target's instructions in the history at the transfer.
  const appended: Message[] =
    target && network.options.systemPrompt === "append" ? [{ role: "system", agent: target.name, content: target.instructionsFor({ context: context ?? loop.context }) }] : [];

  const spent = { ...stepUsage, toolCalls: turnUsage.toolCalls - loop.turnUsage.toolCalls };
  const shared = { activeAgent: activeAgent.name, usage: spent, ...(handoff ? { handoff } : {}), ...(context ? { context } : {}), ...(compaction ? { compaction: compaction.compaction } : {}) };
  if (pending.length > 0) {
    // The transfer is committed before the suspension: the resumed leg runs as the target.
    // An appended system message waits with the step, so it follows the step's results in the history.
    await store.commitStep({ messages: [], ...shared, suspension: { stepIndex, assistant, results, pending, turnHandoffs: handoffs, agentSteps, errorSteps, turnUsage, trailing: appended } });
  } else {
    const complete = results.filter((r): r is ToolMessage => r !== null);
    await store.commitStep({ messages: [assistant, ...complete, ...appended], ...shared });
    loop.history.push(assistant, ...complete, ...appended);
  }

  for (const [i, planned] of plan.entries()) {
    const done = answered[i];
    if (done) yield { type: "tool-result", toolCallId: planned.call.id, name: planned.call.name, result: done.outcome.result, isError: done.outcome.isError };
  }
  for (const p of pending) yield { type: "approval-required", toolCallId: p.toolCallId, name: p.name, args: p.args, agent: p.agent };
  if (handoff) {
    loop.handoffCount++;
    yield { type: "handoff", ...handoff };
    await runHook(network, handoff);
  }
  Object.assign(loop, {
    agent: activeAgent,
    handoffs,
    agentSteps,
    errorSteps,
    lastHandoff: handoff ?? loop.lastHandoff,
    context: context ?? loop.context,
    turnUsage,
    conversationUsage: addUsage(loop.conversationUsage, spent),
  });
  yield { type: "step-finish", stepIndex, finishReason: step.finishReason, ...(step.usage ? { usage: step.usage } : {}) };

  if (pending.length > 0) {
    yield { type: "done", status: "awaiting_approval", text: step.text, agent: activeAgent.name, handoffs, handoffCount: loop.handoffCount, usage: turnUsage };
    return true;
  }
  const next = decideNextStep({ toolCalls: step.toolCalls.length, handoff: handoff !== undefined, errorSteps, limits });
  switch (next.kind) {
    case "final":
      yield { type: "done", status: "completed", text: step.text, agent: activeAgent.name, handoffs, handoffCount: loop.handoffCount, usage: turnUsage };
      return true;
    case "too-many-errors":
      throw tooManyErrors(limits);
    case "handoff":
    case "run-again":
      return false;
    default: {
      const exhaustive: never = next;
      throw new Error(`unknown decision ${JSON.stringify(exhaustive)}`);
    }
  }
}

/** onHandoff is caller code: a throw ends the turn (the transfer is already committed, the history valid). */
async function runHook(network: Network, handoff: HandoffRecord): Promise<void> {
  if (!network.options.onHandoff) return;
  try {
    await network.options.onHandoff({ from: handoff.from, to: handoff.to, ...(handoff.reason ? { reason: handoff.reason } : {}), ...(handoff.input ? { input: handoff.input } : {}) });
  } catch (error) {
    throw new RuntimeError("hook_failed", `onHandoff failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

