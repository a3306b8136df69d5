/**
 * The run loop: a turn is steps, each read top to bottom as its stages — prepare, call the model,
 * resolve the calls, build the commit, store it, announce it, decide what comes next.
 */
import { RuntimeError, toRuntimeError } from "./errors.ts";
import type { RunEvent, TurnOutcome } from "./events.ts";
import { argsOf } from "./execute-tool-call.ts";
import { firstBlock } from "./guardrails.ts";
import { runHandoffHook } from "./handoff/hook.ts";
import { DEFAULT_LIMITS } from "./limits.ts";
import type { Message } from "./messages.ts";
import type { RunItemsOptions, RunTurnOptions, TurnItem } from "./run-options.ts";
import { type ModelStepResult, streamModelCall } from "./step/call-model.ts";
import { decideNextStep, tooManyErrors } from "./step/next-step.ts";
import { type PreparedStep, prepareStep } from "./step/prepare-step.ts";
import { resolveCalls } from "./step/resolve-calls.ts";
import { settleApprovals } from "./step/settle-approvals.ts";
import { buildStepCommit, stepUsage } from "./step/step-commit.ts";
import { advance, initialTurnState, type RunContext, type TurnState } from "./turn-state.ts";

/**
 * Runs one user turn (or its resumed leg) as an async generator of events; it ends with exactly
 * one `done` or `error`, and returns the outcome. Each step is committed through the store as a
 * whole before its results are announced, so the stored history is valid whatever fails.
 */
export async function* runTurn(options: RunTurnOptions): AsyncGenerator<RunEvent, TurnOutcome> {
  const items = runTurnItems(options);
  let next = await items.next();
  while (!next.done) {
    const item = next.value;
    if (item.type !== "commit") {
      yield item;
      next = await items.next();
      continue;
    }
    try {
      await options.store.commitStep(item.commit);
    } catch (error) {
      // Thrown back into the loop, which ends the turn with an error event.
      next = await items.throw(error);
      continue;
    }
    next = await items.next();
  }
  return next.value;
}

/**
 * The same run as one ordered stream of events and commits, for hosts that store each commit with
 * the events before it. The consumer stores a commit before pulling the next item: results are
 * announced only after their step is stored. A commit that fails is thrown back with `throw()`.
 */
export async function* runTurnItems(options: RunItemsOptions): AsyncGenerator<TurnItem, TurnOutcome> {
  try {
    return yield* runLeg(options);
  } catch (error) {
    const failure = options.signal?.aborted ? new RuntimeError("run_aborted", "The run was cancelled.") : toRuntimeError(error);
    yield { type: "error", code: failure.code, message: failure.message, ...(failure.status ? { status: failure.status } : {}) };
    return { status: "failed", code: failure.code };
  }
}

async function* runLeg(options: RunItemsOptions): AsyncGenerator<TurnItem, TurnOutcome> {
  const { network, model, input } = options;
  const run: RunContext = {
    options,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    signal: options.signal ?? new AbortController().signal,
    runTurn,
  };
  const agent = network.get(options.activeAgent) ?? network.entry;
  const missing = network.get(options.activeAgent) ? undefined : options.activeAgent;
  let state = initialTurnState(options, agent);
  yield {
    type: "run-start",
    conversationId: options.conversationId,
    agent: agent.name,
    model: model.label ?? network.modelFor(agent),
    ...(model.label ? { demo: true } : {}),
    ...(input.kind === "resume" ? { resumed: true } : {}),
  };
  // A deploy removed the agent that held the conversation: the entry agent takes over, and says so.
  if (missing)
    yield {
      type: "warning",
      code: "agent_missing",
      message: `Agent '${missing}' no longer exists; '${agent.name}' took over the conversation.`,
    };
  if (input.kind === "message") {
    state = yield* acceptMessage(state, input.text, missing);
  } else {
    state = yield* settleApprovals(run, state, input.suspension, input.decisions);
  }
  for (;;) {
    const step = yield* runStep(run, state);
    if (step.ended) return step.ended;
    state = step.state;
  }
}

/** The user's message, past the input guardrails, is stored before the first model call (with a note when its holder is gone). */
async function* acceptMessage(state: TurnState, text: string, missing: string | undefined): AsyncGenerator<TurnItem, TurnState> {
  const { agent } = state;
  const note: Message[] = missing
    ? [
        {
          role: "system",
          agent: agent.name,
          content: `Note: the agent '${missing}' that held this conversation no longer exists; '${agent.name}' took over.`,
        },
      ]
    : [];
  const blocked = await firstBlock(agent.inputGuardrails, { text, agent: agent.name, context: state.context });
  if (blocked !== null) {
    // Nothing of a blocked input is stored or sent to a model.
    yield { type: "guardrail", kind: "input", agent: agent.name, reason: blocked };
    throw new RuntimeError("guardrail_blocked", `The message was blocked: ${blocked}`);
  }
  const messages: Message[] = [...note, { role: "user", content: text }];
  yield { type: "commit", commit: { messages, activeAgent: agent.name } };
  return advance(state, { messages });
}

/** One model call and its tools, as named stages. */
async function* runStep(run: RunContext, state: TurnState): AsyncGenerator<TurnItem, { state: TurnState; ended?: TurnOutcome }> {
  const { network } = run.options;
  const prepared = yield* prepareStep(run, state);
  const step = yield* callModel(run, prepared);
  const records = await resolveCalls(run, state, prepared, step.toolCalls, stepUsage(prepared, step));
  for (const r of records) {
    if (r.blocked !== null) yield { type: "guardrail", kind: "tool", agent: prepared.agent.name, reason: r.blocked, toolCallId: r.call.id };
  }
  if (step.toolCalls.length === 0) yield* checkAnswer(state, prepared, step);
  const outcome = buildStepCommit({ state, prepared, step, records, options: network.options });
  yield { type: "commit", commit: outcome.commit };
  yield* outcome.events;
  if (outcome.handoff) await runHandoffHook(network, outcome.handoff);
  const next = outcome.next;
  yield {
    type: "step-finish",
    stepIndex: prepared.stepIndex,
    finishReason: step.finishReason,
    ...(step.usage ? { usage: step.usage } : {}),
  };
  const done = {
    text: step.text,
    agent: next.agent.name,
    handoffs: [...next.handoffs],
    handoffCount: next.handoffCount,
    usage: next.turnUsage,
  };
  const decision = decideNextStep({
    toolCalls: step.toolCalls.length,
    handoff: outcome.handoff !== undefined,
    pendingApprovals: outcome.pending.length,
    errorSteps: next.errorSteps,
    limits: run.limits,
  });
  switch (decision.kind) {
    case "awaiting-approval":
      yield { type: "done", status: "awaiting_approval", ...done };
      return { state: next, ended: { status: "awaiting_approval" } };
    case "final":
      yield { type: "done", status: "completed", ...done };
      return { state: next, ended: { status: "completed" } };
    case "too-many-errors":
      throw tooManyErrors(run.limits);
    case "handoff":
    case "run-again":
      return { state: next };
    default: {
      const exhaustive: never = decision;
      throw new Error(`unknown decision ${JSON.stringify(exhaustive)}`);
    }
  }
}

/** The model call: text deltas stream as they arrive; the calls are announced once it ends. */
async function* callModel(run: RunContext, prepared: PreparedStep): AsyncGenerator<RunEvent, ModelStepResult> {
  const { network, model } = run.options;
  const { agent } = prepared;
  const step = yield* streamModelCall(model, {
    agent: agent.name,
    model: network.modelFor(agent),
    instructions: prepared.instructions,
    messages: prepared.messages,
    tools: prepared.toolset.specs,
    settings: agent.modelSettings,
    signal: run.signal,
  });
  run.signal.throwIfAborted();
  for (const call of step.toolCalls) yield { type: "tool-call", toolCallId: call.id, name: call.name, args: argsOf(call) };
  return step;
}

/** The output guardrails judge a final answer; a blocked one is not stored, so the history ends before this step. */
async function* checkAnswer(state: TurnState, prepared: PreparedStep, step: ModelStepResult): AsyncGenerator<RunEvent, void> {
  const blocked = await firstBlock(prepared.agent.outputGuardrails, {
    text: step.text,
    agent: prepared.agent.name,
    context: state.context,
  });
  if (blocked === null) return;
  yield { type: "guardrail", kind: "output", agent: prepared.agent.name, reason: blocked };
  throw new RuntimeError("guardrail_blocked", `The answer was blocked: ${blocked}`);
}
