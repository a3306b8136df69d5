/**
 * The run loop: a turn is steps, each read top to bottom as its stages — prepare, call the model,
 * resolve the calls, build the commit, store it, announce it, decide what comes next.
 */
import { announcedHandoff, NUDGE_NOTE } from "./handoff/announced.ts";
import { RuntimeError, toRuntimeError } from "./errors.ts";
import type { RunEvent, TurnOutcome, TurnStatus } from "./events.ts";
import { firstBlock } from "./tools/guardrails.ts";
import { runHandoffHook } from "./handoff/hook.ts";
import { DEFAULT_LIMITS } from "./limits.ts";
import type { AssistantMessage, Message } from "./messages.ts";
import type { CallRecord } from "./step/call-record.ts";
import type { ModelRequest } from "./ports/model-port.ts";
import type { RunItemsOptions, RunTurnOptions, TurnInput, TurnItem } from "./run-options.ts";
import { commit, recordCalls } from "./commit.ts";
import type { StateUpdates } from "./tools/tool-context.ts";
import type { TurnStore } from "./ports/store-port.ts";
import { type ModelStepResult, streamModelCall } from "./step/call-model.ts";
import { decideNextStep, tooManyErrors } from "./step/next-step.ts";
import { checkStepLimits, type PreparedStep, prepareStep } from "./step/prepare-step.ts";
import { answerCalls, callsAhead, gateCalls, planCalls } from "./step/resolve-calls.ts";
import { callPlanOf } from "./handoff/rules.ts";
import { saidOf } from "./step/call-request.ts";
import { argsOf } from "./tools/execute-tool-call.ts";
import { settleRequests } from "./step/settle-requests.ts";
import { recallMemories } from "./memory/recall.ts";
import type { CallerFrame } from "./holding.ts";
import type { Agent } from "./agent.ts";
import { waitingStatus } from "./wait/requests.ts";
import { DEFAULT_PARALLEL_DELEGATIONS, NestedItems, Slots } from "./step/nested-items.ts";
import { NO_USAGE } from "./usage.ts";
import { readOnceALeg } from "./ports/files-port.ts";
import { delegates, whileNested } from "./step/nested-run.ts";
import { handBackFromRemote, remoteCall, remoteState, writeAhead } from "./step/remote-call.ts";
import { routedStep, routerOf } from "./step/route-first.ts";
import type { RemoteState } from "./ports/remote-port.ts";
import { buildStepCommit, type StepOutcome, stepUsage } from "./step/step-commit.ts";
import { advance, holdingChange, initialTurnState, type RunContext, type TurnState } from "./turn-state.ts";

/**
 * Runs one user turn (or its resumed leg) as an async generator of events; it ends with exactly
 * one `done` or `error`, and returns the outcome. Each step is committed through the store as a
 * whole before its results are announced, so the stored history is valid whatever fails.
 */
export function runTurn(options: RunTurnOptions): AsyncGenerator<RunEvent, TurnOutcome> {
  // Given a store, the loop stores each commit where it happens and yields none: only events come out.
  return runItems(options, options.store) as AsyncGenerator<RunEvent, TurnOutcome>;
}

/**
 * The same run as one ordered stream of events and commits, for hosts that store each commit with
 * the events before it. The consumer stores a commit before pulling the next item: results are
 * announced only after their step is stored. A commit that fails is thrown back with `throw()`.
 */
export function runTurnItems(options: RunItemsOptions): AsyncGenerator<TurnItem, TurnOutcome> {
  return runItems(options, undefined);
}

async function* runItems(options: RunItemsOptions, store: TurnStore | undefined): AsyncGenerator<TurnItem, TurnOutcome> {
  try {
    return yield* runLeg(options, store);
  } catch (error) {
    const failure = toRuntimeError(error);
    yield { type: "error", code: failure.code, message: failure.message, ...(failure.status ? { status: failure.status } : {}) };
    return { status: "failed", code: failure.code };
  }
}

async function* runLeg(options: RunItemsOptions, store: TurnStore | undefined): AsyncGenerator<TurnItem, TurnOutcome> {
  const { network } = options;
  const run = runContext(options, store);
  const { activeAgent, callers: stored } = options.conversation.holding;
  const agent = network.get(activeAgent) ?? network.entry;
  const missing = network.get(activeAgent) ? undefined : activeAgent;
  // A deploy may have removed agents on the caller stack: their frames are skipped.
  const callers = stored.filter((f) => network.get(f.caller) && network.get(f.callee));
  let state = initialTurnState(options, agent, callers);
  yield* legStart(
    options,
    agent,
    missing,
    stored.filter((f) => !callers.includes(f)),
  );
  try {
    const accepted = yield* acceptInput(run, state, options.input, missing);
    state = accepted.state;
    if (accepted.ended) return accepted.ended;
    yield* recallMemories(run, state);
    for (;;) {
      // A person holds the conversation (handed over, or holding it when the message came): no model is called.
      if (state.agent.human) return yield* awaitHuman(state);
      const step = yield* runStep(run, state);
      if (step.ended) return step.ended;
      state = step.state;
    }
  } catch (error) {
    if (!run.signal.aborted) throw error;
    // Cancelled: what was committed stays, the step in flight never happened, and the turn ends as asked.
    yield doneEvent(state, "cancelled", "");
    return { status: "cancelled" };
  }
}

/** What every stage of the leg runs with: its options and limits, its signal, the store, its delegations and what they spent. */
function runContext(options: RunItemsOptions, store: TurnStore | undefined): RunContext {
  return {
    options,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    signal: options.signal ?? new AbortController().signal,
    store,
    runItems: runTurnItems,
    nested: new NestedItems(),
    delegations: new Slots(options.network.options.maxParallelDelegations ?? DEFAULT_PARALLEL_DELEGATIONS),
    path: options.path ?? [],
    delegated: { usage: NO_USAGE, byCall: new Map() },
    once: { nudged: false },
    memory: { recalled: [] },
    files: options.files && readOnceALeg(options.files),
  };
}

/** The leg's `run-start`, and a warning for each agent a deploy removed: the holder (`missing`), and callers that cannot return. */
function* legStart(options: RunItemsOptions, agent: Agent, missing: string | undefined, gone: readonly CallerFrame[]): Generator<RunEvent> {
  const { network, model, input } = options;
  yield {
    type: "run-start",
    conversationId: options.conversationId,
    agent: agent.name,
    model: model.label ?? network.modelFor(agent),
    ...(model.label ? { demo: true } : {}),
    ...(input.kind === "resume" ? { resumed: true } : {}),
    ...(input.kind === "scheduled" ? { scheduled: true } : {}),
  };
  // A deploy removed the agent that held the conversation: the entry agent takes over, and says so.
  if (missing)
    yield {
      type: "warning",
      code: "agent_missing",
      message: `Agent '${missing}' no longer exists; '${agent.name}' took over the conversation.`,
    };
  for (const frame of gone) {
    const removed = network.get(frame.caller) ? frame.callee : frame.caller;
    const message = `The handoff from '${frame.caller}' to '${frame.callee}' cannot return: '${removed}' no longer exists.`;
    yield { type: "warning", code: "caller_missing", message };
  }
}

/** The leg's input taken in: a message, a scheduled note, or the user's decisions on a suspended step (which may ask again). */
async function* acceptInput(
  run: RunContext,
  state: TurnState,
  input: TurnInput,
  missing: string | undefined,
): AsyncGenerator<TurnItem, { state: TurnState; ended?: TurnOutcome }> {
  if (input.kind === "message") return { state: yield* acceptMessage(run, state, input, missing) };
  if (input.kind === "scheduled") return { state: yield* acceptNote(run, state, input.note) };
  const settled = yield* settleRequests(run, state, input.suspension, input.decisions);
  if (!settled.waiting) return { state: settled.state };
  // A call asked the user again: the turn waits for that answer.
  yield doneEvent(settled.state, "awaiting_input", "");
  return { state: settled.state, ended: { status: "awaiting_input" } };
}

/** A scheduled turn's note, stored as a system message to the holder before its first model call. */
async function* acceptNote(run: RunContext, state: TurnState, note: string): AsyncGenerator<TurnItem, TurnState> {
  const messages: Message[] = [{ role: "system", agent: state.agent.name, content: note }];
  for (const item of await commit(run, { messages, ...holdingChange(state, state) })) yield item;
  return advance(state, { messages, committed: true });
}

/** The user's message, past the input guardrails, is stored before the first model call (with a note when its holder is gone). */
async function* acceptMessage(
  run: RunContext,
  state: TurnState,
  input: Extract<TurnInput, { kind: "message" }>,
  missing: string | undefined,
): AsyncGenerator<TurnItem, TurnState> {
  const { agent } = state;
  const { text, files } = input;
  const note: Message[] = missing
    ? [
        {
          role: "system",
          agent: agent.name,
          content: `Note: the agent '${missing}' that held this conversation no longer exists; '${agent.name}' took over.`,
        },
      ]
    : [];
  const blocked = await firstBlock(agent.inputGuardrails, { text, agent: agent.name, context: state.holding.context });
  if (blocked !== null) {
    // Nothing of a blocked input is stored or sent to a model.
    yield { type: "guardrail", kind: "input", agent: agent.name, reason: blocked };
    throw new RuntimeError("guardrail_blocked", `The message was blocked: ${blocked}`);
  }
  const messages: Message[] = [...note, { role: "user", content: text, ...(files?.length ? { files: [...files] } : {}) }];
  // A holder or caller frames a deploy removed are replaced in the store with the message.
  for (const item of await commit(run, { messages, ...holdingChange(state, state) })) yield item;
  return advance(state, { messages, committed: true });
}

/** One model call and its tools, as named stages: prepare, call, answer the calls, check the answer, commit. */
async function* runStep(run: RunContext, state: TurnState): AsyncGenerator<TurnItem, { state: TurnState; ended?: TurnOutcome }> {
  run.signal.throwIfAborted();
  checkStepLimits(run, state);
  const remote = state.agent.remote ? { remote: state.agent.remote.url } : {};
  yield { type: "step-start", stepIndex: state.progress.stepIndex, agent: state.agent.name, ...remote };
  const prepared = await prepareStep(run, state);
  for (const warning of prepared.warnings) yield warning;
  if (prepared.compaction) yield prepared.compaction.event;
  // Text deltas stream as they arrive; the calls are announced once the call has ended.
  const called = yield* callHolder(run, state, prepared);
  if ("handedBack" in called) {
    const record = called.handedBack.lastHandoff;
    if (record) await runHandoffHook(run.options.network, record, "remote-hand-back");
    return { state: called.handedBack };
  }
  const { step } = called;
  // A remote call's write-ahead was committed: the step commits from the state it left.
  run.signal.throwIfAborted();
  const answered = yield* answerStepCalls(run, called.state, prepared, called);
  const answerBlocked = step.toolCalls.length === 0 ? await outputBlock(called.state, prepared, step) : null;
  if (answerBlocked !== null) {
    // A blocked answer is not stored: the history ends before this step.
    yield { type: "guardrail", kind: "output", agent: prepared.agent.name, reason: answerBlocked };
    throw new RuntimeError("guardrail_blocked", `The answer was blocked: ${answerBlocked}`);
  }
  return yield* commitStep(run, called.state, prepared, step, answered);
}

/** A step's calls once answered: their records, the agents' state they changed, and the assistant message written ahead. */
type AnsweredCalls = { records: CallRecord[]; stateUpdates: StateUpdates; assistant: AssistantMessage | undefined };

/** The step's calls: announced, gated, written ahead for a host that keeps them, then answered (a delegation's events as it runs). */
async function* answerStepCalls(
  run: RunContext,
  state: TurnState,
  prepared: PreparedStep,
  called: { step: ModelStepResult; remote?: RemoteState },
): AsyncGenerator<TurnItem, AnsweredCalls> {
  const { step } = called;
  const plan = planCalls(run, state, prepared, step.toolCalls, step.routed);
  for (const p of plan)
    yield { type: "tool-call", toolCallId: p.call.id, name: p.call.name, args: argsOf(p.call), plan: callPlanOf(p), ...saidOf(p) };
  const gates = await gateCalls(run, state, prepared, plan, stepUsage(prepared, step));
  // The calls that start are recorded before the first of them does, for a host that keeps them.
  const ahead = !run.store || run.store.recordCalls ? callsAhead(prepared, step, plan, gates) : undefined;
  const recorded = ahead && (await recordCalls(run, ahead));
  if (recorded) yield recorded;
  const stateUpdates: StateUpdates = new Map();
  if (called.remote) stateUpdates.set(prepared.agent.name, { ...called.remote });
  // A delegated agent's events and steps come out as it runs; other tools' none.
  const answering = answerCalls(run, state, prepared, plan, gates, stateUpdates, stepUsage(prepared, step));
  const records = yield* whileNested(run, answering, delegates(plan));
  for (const r of records) {
    if (r.blocked !== null) yield { type: "guardrail", kind: "tool", agent: prepared.agent.name, reason: r.blocked, toolCallId: r.call.id };
  }
  return { records, stateUpdates, assistant: ahead?.assistant };
}

/** The step committed with what it announces, its handoff's hook run, and what comes next: another step, or the leg's end. */
async function* commitStep(
  run: RunContext,
  state: TurnState,
  prepared: PreparedStep,
  step: ModelStepResult,
  answered: AnsweredCalls,
): AsyncGenerator<TurnItem, { state: TurnState; ended?: TurnOutcome }> {
  const { network } = run.options;
  const outcome = buildStepCommit({ state, prepared, step, ...answered, options: network.options });
  const finish: RunEvent = {
    type: "step-finish",
    stepIndex: prepared.stepIndex,
    finishReason: step.finishReason,
    ...(step.usage ? { usage: step.usage } : {}),
  };
  // A final answer that announces a handoff it did not make is warned of with the step it belongs to.
  const announced = step.toolCalls.length === 0 ? announcement(run, prepared, step.text) : null;
  const announcedEvents = announced ? [announced.warning] : [];
  for (const item of await commit(run, outcome.commit, [...outcome.events, finish, ...announcedEvents])) yield item;
  if (outcome.change) await runHandoffHook(network, outcome.change.record, outcome.change.kind);
  const next = outcome.next;
  const end = stepEnd(run, step, outcome);
  // Asked (nudge) once: one more step, to call a transfer tool or answer itself.
  if (announced?.nudge && end.outcome?.status === "completed") return { state: yield* nudge(run, prepared, next) };
  if (end.done) yield end.done;
  return end.outcome ? { state: next, ended: end.outcome } : { state: next };
}

/**
 * The step's call: the model, or the remote agent that holds the conversation. A remote that fails
 * or hands back gives the conversation back to the agent that handed it over, which carries on.
 */
async function* callHolder(
  run: RunContext,
  state: TurnState,
  prepared: PreparedStep,
): AsyncGenerator<TurnItem, { step: ModelStepResult; state: TurnState; remote?: RemoteState } | { handedBack: TurnState }> {
  if (!prepared.agent.remote) {
    // A router sure of the message makes the step's transfer itself; else the model is called.
    const routed = routerOf(run, prepared.agent) ? await routedStep(run, state, prepared) : undefined;
    return { step: routed ?? (yield* streamModelCall(run.options.model, modelRequest(run, prepared))), state };
  }
  const before = remoteState(state, prepared.agent);
  state = yield* writeAhead(run, state, prepared.agent);
  const call = remoteCall(run, state, prepared, before);
  let step: ModelStepResult;
  try {
    step = yield* streamModelCall(call.model, modelRequest(run, prepared));
  } catch (error) {
    if (run.signal.aborted) throw error;
    const failure = toRuntimeError(error);
    // The failed task takes no more messages; the remote context stays, for a later handoff to it.
    const { taskId: _, ...remote } = call.state();
    const note = `it could not go on (${failure.code}): ${failure.message}`;
    return { handedBack: yield* handBackFromRemote(run, state, { said: "", note, remote, failure }) };
  }
  const summary = call.handBack();
  if (summary !== undefined)
    return {
      handedBack: yield* handBackFromRemote(run, state, { said: step.text, note: summary || "its part is done.", remote: call.state() }),
    };
  return { step, state, remote: call.state() };
}

/** The announced-but-unmade handoff guard (network option `announcedHandoffs`, `warn` by default): its warning, and whether to nudge. */
function announcement(run: RunContext, prepared: PreparedStep, text: string): { warning: RunEvent; nudge: boolean } | null {
  const mode = run.options.network.options.announcedHandoffs ?? "warn";
  if (mode === "off") return null;
  const said = announcedHandoff(
    text,
    [...prepared.toolset.transfers.values()].map((edge) => edge.agent),
  );
  if (said === null) return null;
  const nudge = mode === "nudge" && !run.once.nudged;
  const agent = prepared.agent.name;
  const message = `'${agent}' said "${said}" but called no transfer tool${nudge ? ": it is asked once to call one now or answer itself" : ""}.`;
  return { warning: { type: "warning", code: "handoff_announced_not_made", message }, nudge };
}

/** The nudge: a note to the agent that announced a handoff, committed before its next step. */
async function* nudge(run: RunContext, prepared: PreparedStep, next: TurnState): AsyncGenerator<TurnItem, TurnState> {
  run.once.nudged = true;
  const messages: Message[] = [{ role: "system", agent: prepared.agent.name, content: NUDGE_NOTE }];
  for (const item of await commit(run, { messages, ...holdingChange(next, next) })) yield item;
  return advance(next, { messages, committed: true });
}

/** The turn ends waiting for the person who holds the conversation. */
async function* awaitHuman(state: TurnState): AsyncGenerator<TurnItem, TurnOutcome> {
  yield doneEvent(state, "awaiting_human", "");
  return { status: "awaiting_human" };
}

/** The `done` event of a leg that ends with `state`. */
function doneEvent(state: TurnState, status: TurnStatus, text: string): RunEvent {
  const { progress } = state;
  return {
    type: "done",
    status,
    text,
    agent: state.agent.name,
    handoffs: [...progress.handoffs],
    handoffCount: state.holding.handoffCount,
    usage: progress.usage,
  };
}

/** What the step's end means for the turn: a `done` event and the outcome when it ends, a throw when it must stop. */
function stepEnd(run: RunContext, step: ModelStepResult, outcome: StepOutcome): { done?: RunEvent; outcome?: TurnOutcome } {
  const next = outcome.next;
  const decision = decideNextStep({
    toolCalls: step.toolCalls.length,
    handoff: outcome.handoff !== undefined,
    pendingRequests: outcome.pending.length,
    errorSteps: next.progress.errorSteps,
    limits: run.limits,
  });
  switch (decision.kind) {
    case "awaiting-user":
    case "final": {
      const status = decision.kind === "final" ? "completed" : waitingStatus(outcome.pending);
      return { done: doneEvent(next, status, step.text), outcome: { status } };
    }
    case "too-many-errors":
      throw tooManyErrors(run.limits);
    case "handoff":
    case "run-again":
      return {};
    default: {
      const exhaustive: never = decision;
      throw new Error(`unknown decision ${JSON.stringify(exhaustive)}`);
    }
  }
}

/** What the model is asked in this step. */
function modelRequest(run: RunContext, prepared: PreparedStep): ModelRequest {
  const { agent } = prepared;
  return {
    agent: agent.name,
    model: run.options.network.modelFor(agent),
    instructions: prepared.instructions,
    messages: prepared.messages,
    tools: prepared.toolset.specs,
    settings: agent.modelSettings,
    signal: run.signal,
    ...(run.files ? { files: run.files } : {}),
  };
}

/** The output guardrails' verdict on a final answer: the first block's reason, or null. */
function outputBlock(state: TurnState, prepared: PreparedStep, step: ModelStepResult): Promise<string | null> {
  return firstBlock(prepared.agent.outputGuardrails, { text: step.text, agent: prepared.agent.name, context: state.holding.context });
}
