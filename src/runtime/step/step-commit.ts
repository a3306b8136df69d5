/**
 * The fourth stage of a step, pure: from the model's answer and the records of its calls to what
 * is committed, what is announced after the commit, and the turn's next state.
 */
import { estimateTokens } from "../compaction.ts";
import type { RunEvent } from "../events.ts";
import { toolMessage } from "../tools/execute-tool-call.ts";
import { callPlanOf, type PlannedCall } from "../handoff/rules.ts";
import { type ChangeOfHands, changeHands, type HandoffDecision } from "../handoff/change-hands.ts";
import type { HandoffRecord, ReturnRecord, TransferRecord } from "../handoff/types.ts";
import type { Agent } from "../agent.ts";
import type { AssistantMessage, Message, ToolMessage } from "../messages.ts";
import type { NetworkOptions } from "../network.ts";
import type { StepCommit } from "../ports/store-port.ts";
import type { UserRequest } from "../wait/requests.ts";
import { requestEvent, requestFor, saidOf } from "./call-request.ts";
import { agentState } from "../tools/tool-context.ts";
import { advance, holdingChange, type TurnState } from "../turn-state.ts";
import { addUsage, modelCallUsage, NO_USAGE, type UsageTotals } from "../usage.ts";
import type { ModelStepResult } from "./call-model.ts";
import type { PreparedStep } from "./prepare-step.ts";
import type { RoutedBy } from "../ports/router-port.ts";
import type { Answered, CallRecord } from "./call-record.ts";
import { countErrorSteps } from "./next-step.ts";

export interface StepOutcome {
  commit: StepCommit;
  /** Announced once the commit is stored, in call order: results, approvals asked for, the handoff. */
  events: RunEvent[];
  next: TurnState;
  /** A transfer or an on-call return: the turn goes on as its target. */
  handoff: HandoffRecord | undefined;
  /** An on-answer return: the turn ends, and the next message goes to the caller. */
  returned: HandoffRecord | undefined;
  /** The step's change of hands, as decided (its kind for the hook), when it made one. */
  change: ChangeOfHands | undefined;
  pending: UserRequest[];
}

type AcceptedHandoff = Extract<PlannedCall, { kind: "transfer" }>;
type TakenHandoff = Extract<PlannedCall, { kind: "transfer" | "return" }>;

/** Who holds the conversation after the step, and the change of hands that made it so, when one did. */
interface Holder {
  decision: HandoffDecision | undefined;
  target: Agent | undefined;
  /** The change ends the turn (an on-answer return). */
  ends: boolean;
}

/** What the step's model calls spent: its answer and any summary calls. */
export function stepUsage(prepared: PreparedStep, step: ModelStepResult): UsageTotals {
  // A router's step called no model.
  return addUsage(prepared.compaction?.usage ?? NO_USAGE, step.routedBy ? {} : modelCallUsage(step.usage));
}

export function buildStepCommit(input: {
  state: TurnState;
  prepared: PreparedStep;
  step: ModelStepResult;
  records: readonly CallRecord[];
  options: Pick<NetworkOptions, "systemPrompt" | "compaction" | "approvalExpiresIn">;
  /** Agents' states the step's tools set. */
  stateUpdates?: ReadonlyMap<string, Record<string, unknown>>;
  /** The step's assistant message when it was already built (written ahead of the step's tools). */
  assistant?: AssistantMessage | undefined;
}): StepOutcome {
  const { state, prepared, step, records, options } = input;
  const agentStates = input.stateUpdates?.size ? Object.fromEntries(input.stateUpdates) : undefined;
  const { agent, compaction } = prepared;
  const spent = { ...stepUsage(prepared, step), toolCalls: records.filter((r) => r.plan.kind === "tool" && r.blocked === null).length };
  const kept = records.filter((r) => r.kept);
  const assistant = input.assistant ?? assistantMessage(agent.name, step.text, kept);
  const results = kept.map((r) => (r.answer ? toolMessage(r.call, r.answer.outcome) : null));
  const pending = records.filter((r) => r.awaits).map((r) => userRequest(r, prepared, options));
  const { holder, changed, context, appended } = handsAfter(input, pending.length > 0);
  const complete = pending.length === 0 ? [assistant, ...results.filter((r): r is ToolMessage => r !== null), ...appended] : [];
  const next = advance(state, {
    messages: complete,
    step: step.routedBy ? "router" : "model",
    spent,
    errorSteps: countErrorSteps(state.progress.errorSteps, answersOf(records)),
    handoff: changed && holder.target ? { change: changed, target: holder.target } : undefined,
    agentStates,
    context,
    compaction: compaction?.compaction,
    calibration: calibration(prepared, step, options),
    committed: true,
  });
  const commit: StepCommit = {
    messages: complete,
    usage: spent,
    ...holdingChange(state, next),
    ...(changed ? { handoff: changed.record } : {}),
    ...(compaction ? { compaction: compaction.compaction } : {}),
    // A handoff is committed before the suspension: the resumed leg runs as the target. An appended
    // system message waits with the step, so it follows the step's results in the history.
    ...(pending.length > 0 ? { suspension: { assistant, results, pending, progress: next.progress, trailing: appended } } : {}),
  };
  return {
    commit,
    events: announcements(records, pending, changed?.events ?? []),
    next,
    handoff: holder.ends ? undefined : changed?.record,
    returned: holder.ends ? changed?.record : undefined,
    change: changed,
    pending,
  };
}

/**
 * Who holds the conversation after the step (`waiting`: some of its calls wait for the user): the change of hands its
 * transfer or return made, the context a transfer's input adds, and the system message an appended prompt writes.
 */
function handsAfter(input: Parameters<typeof buildStepCommit>[0], waiting: boolean) {
  const { state, prepared, step, records, options } = input;
  const taken = records.map((r) => r.plan).find((p): p is TakenHandoff => p.kind === "transfer" || p.kind === "return");
  const accepted = taken?.kind === "transfer" ? taken : undefined;
  // A remote agent waiting for the user's input has not given its answer yet: an on-answer frame stays open.
  const finalAnswer = step.toolCalls.length === 0 && !waiting && step.finishReason !== "input_required";
  const holder = nextHolder(prepared, taken, finalAnswer, step.routedBy);
  const changed = holder.decision && holder.target ? changeHands(state.holding, holder.decision) : undefined;
  const context = accepted?.input ? { ...state.holding.context, ...accepted.input } : undefined;
  const appended = appendedPrompt(accepted, options, context ?? state.holding.context, state);
  return { holder, changed, context, appended };
}

/** The step's assistant message: its text and the calls the history keeps, each with its plan. */
export function assistantMessage(agent: string, text: string, kept: ReadonlyArray<Pick<CallRecord, "call" | "plan">>): AssistantMessage {
  const toolCalls = kept.map((r) => ({ ...r.call, plan: callPlanOf(r.plan), ...saidOf(r.plan) }));
  return { role: "assistant", agent, content: text || null, ...(toolCalls.length ? { toolCalls } : {}) };
}

/**
 * A transfer hands the conversation on (a returning one opens a caller frame); an on-call return
 * closes the top frame and the caller carries on; a final answer closes an on-answer frame and ends
 * the turn with the caller holding the conversation.
 */
function nextHolder(prepared: PreparedStep, taken: TakenHandoff | undefined, finalAnswer: boolean, routedBy?: RoutedBy): Holder {
  const from = prepared.agent.name;
  const stepIndex = prepared.stepIndex;
  if (taken?.kind === "transfer") {
    const decision = { record: transferRecord(taken, from, stepIndex, routedBy), returns: taken.edge.returns };
    return { decision, target: taken.edge.agent, ends: false };
  }
  const closing = taken?.kind === "return" ? prepared.returnTo : finalAnswer ? prepared.answerTo : undefined;
  if (!closing) return { decision: undefined, target: undefined, ends: false };
  const to = closing.frame.caller;
  const record: ReturnRecord =
    taken?.kind === "return"
      ? { kind: "return", mode: "on-call", from, to, toolCallId: taken.call.id, reason: taken.summary, stepIndex }
      : // An on-answer return makes no call of its own: it names the transfer that opened its frame.
        { kind: "return", mode: "on-answer", from, to, openedBy: closing.frame.toolCallId, stepIndex };
  return { decision: { record }, target: closing.target, ends: !taken };
}

function transferRecord(accepted: AcceptedHandoff, from: string, stepIndex: number, routedBy?: RoutedBy): TransferRecord {
  return {
    kind: "transfer",
    from,
    to: accepted.edge.agent.name,
    toolCallId: accepted.call.id,
    ...(accepted.reason ? { reason: accepted.reason } : {}),
    ...(accepted.input ? { input: accepted.input } : {}),
    stepIndex,
    ...(routedBy ? { router: routedBy } : {}),
  };
}

/** The append mode records the target's instructions in the history at the handoff. */
function appendedPrompt(
  accepted: AcceptedHandoff | undefined,
  options: Pick<NetworkOptions, "systemPrompt">,
  context: Readonly<Record<string, unknown>>,
  state: Pick<TurnState, "holding">,
): Message[] {
  if (!accepted || options.systemPrompt !== "append") return [];
  const target = accepted.edge.agent;
  return [{ role: "system", agent: target.name, content: target.instructionsFor({ context, state: agentState(state, target) }) }];
}

/** What is announced once the commit is stored: every answer in call order, the requests to the user, the handoff. */
function announcements(records: readonly CallRecord[], pending: readonly UserRequest[], handoff: readonly RunEvent[]): RunEvent[] {
  const events: RunEvent[] = [];
  for (const r of records) {
    if (r.answer)
      events.push({
        type: "tool-result",
        toolCallId: r.call.id,
        name: r.call.name,
        result: r.answer.outcome.result,
        isError: r.answer.outcome.isError,
        ...(r.answer.outcome.files ? { files: r.answer.outcome.files } : {}),
      });
  }
  for (const p of pending) events.push(requestEvent(p));
  return events.concat(handoff);
}

/** Only a context budget needs the token estimate, and only then is it worth correcting by what the provider counted. */
function calibration(prepared: PreparedStep, step: ModelStepResult, options: Pick<NetworkOptions, "compaction">): number | undefined {
  if (!step.usage?.inputTokens || !(prepared.agent.contextBudget ?? options.compaction?.contextBudget)) return undefined;
  return step.usage.inputTokens / Math.max(1, estimateTokens(prepared.instructions, prepared.messages, prepared.toolset.specs));
}

function answersOf(records: readonly CallRecord[]): Answered[] {
  const answers: Answered[] = [];
  for (const r of records) if (r.answer) answers.push(r.answer);
  return answers;
}

/** A call that waits for the user, of its kind, with its deadline when the ask, the tool, its agent or the network sets one. */
function userRequest(record: CallRecord, prepared: PreparedStep, options: Pick<NetworkOptions, "approvalExpiresIn">): UserRequest {
  return requestFor(record.call, record.awaits!, prepared.toolset.tools.get(record.call.name), prepared.agent, options.approvalExpiresIn);
}
