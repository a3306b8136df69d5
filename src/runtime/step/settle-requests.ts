/**
 * A resumed leg's first stage: the suspended step's requests answered, each as its kind settles it. What needs no run
 * is answered at once (a decline, a client tool's output); the rest run (an approved call) or run again with their
 * answers (a tool's question or choice, an MCP server's elicitation). A call that asks again keeps the step waiting;
 * otherwise the whole step is committed.
 */
import { errorOutcome, executeToolCall, isAsked, toolMessage } from "../tools/execute-tool-call.ts";
import type { RunEvent } from "../events.ts";
import type { ToolMessage } from "../messages.ts";
import type { TurnItem } from "../run-options.ts";
import { approvalRecord, type Suspension } from "../wait/suspension.ts";
import { type Decision, kindOf, type UserRequest } from "../wait/requests.ts";
import { commit } from "../commit.ts";
import { type StateUpdates, toolContext } from "../tools/tool-context.ts";
import { advance, holdingChange, type RunContext, type TurnState } from "../turn-state.ts";
import { countErrorSteps, tooManyErrors } from "./next-step.ts";
import { withRemoteTools } from "./prepare-step.ts";
import type { Answered } from "./call-record.ts";
import type { Tool } from "../tools/tool.ts";
import { requestEvent, requestFor } from "./call-request.ts";

/** One request's settlement: answered, or asked again (the call stopped on a further ask). */
type Settled = { request: UserRequest; answered: Answered } | { request: UserRequest; again: UserRequest };

/** Where the resumed leg goes on from; `waiting` when a call asked again and the step still waits. */
export interface SettledStep {
  state: TurnState;
  waiting: boolean;
}

export async function* settleRequests(
  run: RunContext,
  state: TurnState,
  suspension: Suspension,
  decisions: readonly Decision[],
): AsyncGenerator<TurnItem, SettledStep> {
  const updates: StateUpdates = new Map();
  const settled = await Promise.all(
    suspension.pending.map((request) => settle(run, state, suspension, request, decisionOn(decisions, request), updates)),
  );
  const results = suspension.results.map((result, i): ToolMessage | null => {
    if (result) return result;
    const call = suspension.assistant.toolCalls![i]!;
    const entry = settled.find((s) => s.request.toolCallId === call.id)!;
    if ("again" in entry) return null;
    const approval = approvalRecord(entry.request, decisionOn(decisions, entry.request));
    return { ...toolMessage(call, entry.answered.outcome), ...(approval ? { approval } : {}) };
  });
  const answered = settled.flatMap((s) => ("answered" in s ? [s] : []));
  const again = settled.flatMap((s) => ("again" in s ? [s.again] : []));
  const announced: RunEvent[] = answered.map(({ request, answered }) => ({
    type: "tool-result",
    toolCallId: request.toolCallId,
    name: request.name,
    result: answered.outcome.result,
    isError: answered.outcome.isError,
    ...(answered.outcome.files ? { files: answered.outcome.files } : {}),
    // Only a declined request is not counted by the error guard: that is what marks it here.
    ...(answered.counts ? {} : { denied: true as const }),
  }));
  const agentStates = updates.size ? Object.fromEntries(updates) : undefined;
  const errorSteps = countErrorSteps(
    state.progress.errorSteps,
    answered.map((a) => a.answered),
  );
  if (again.length > 0) {
    // Calls that asked again keep the step waiting, with the answers of the others already in place.
    const next = advance(state, { messages: [], agentStates, errorSteps, committed: true });
    const waiting: Suspension = { ...suspension, results, pending: again, progress: next.progress };
    for (const item of await commit(run, { messages: [], suspension: waiting }, [...announced, ...again.map(requestEvent)])) yield item;
    return { state: next, waiting: true };
  }
  const messages = [suspension.assistant, ...(results as ToolMessage[]), ...suspension.trailing];
  const next = advance(state, { messages, agentStates, errorSteps, committed: true });
  for (const item of await commit(run, { messages, suspension: null, ...holdingChange(state, next) }, announced)) yield item;
  if (next.progress.errorSteps >= run.limits.maxToolErrorSteps) throw tooManyErrors(run.limits);
  return { state: next, waiting: false };
}

/** The decision on a request; none (the host resumed without one) declines it. */
function decisionOn(decisions: readonly Decision[], request: UserRequest): Decision {
  return decisions.find((d) => d.toolCallId === request.toolCallId) ?? { toolCallId: request.toolCallId, approved: false };
}

async function settle(
  run: RunContext,
  state: TurnState,
  suspension: Suspension,
  request: UserRequest,
  decision: Decision,
  updates: StateUpdates,
): Promise<Settled> {
  const settled = kindOf(request).settle(request, decision);
  // A delegated run's request: its decision goes to that run (a decline too: its model reads it), which the call runs again to.
  if (!request.delegated && settled.kind === "answered") {
    const { kind: _answered, ...outcome } = settled;
    // A client tool's output is a result like any tool's; a decline is a verdict the error guard does not count.
    return { request, answered: { outcome, counts: !outcome.isError } };
  }
  // The call runs with its own agent's tool, even after a handoff (a delegated run's request names its agent: the call is the step's).
  const caller = request.delegated ? suspension.assistant.agent : request.agent;
  const owner = run.options.network.get(caller);
  const call = suspension.assistant.toolCalls!.find((c) => c.id === request.toolCallId)!;
  const tools = owner
    ? (await withRemoteTools(run, owner, run.options.network.toolset(owner.name))).toolset.tools
    : new Map<string, Tool>();
  const tool = tools.get(call.name);
  // What its ask returns when it runs again, by its kind (a question's answer, an elicitation's outcome as MCP has it).
  const asked = request.delegated ? [decision] : settled.kind === "runs-again" ? [settled.asked] : [];
  const answers = asked.length ? [...(request.earlier ?? []), ...asked] : [];
  const context = toolContext(run, state, caller, updates);
  const outcome = await executeToolCall(call, tool, context, [...tools.keys()], answers, request.recorded ?? []);
  if (!isAsked(outcome)) return { request, answered: { outcome, counts: true } };
  if (!owner) return { request, answered: { outcome: errorOutcome(`Agent '${caller}' no longer exists.`), counts: true } };
  return { request, again: requestFor(call, { kind: "asked", ...outcome }, tool, owner, run.options.network.options.approvalExpiresIn) };
}
