/** What a tool sees of the run, and delegation: another agent run on a fresh context. */
import { Agent } from "../agent.ts";
import { newConversation } from "../conversation-snapshot.ts";
import { Network } from "../network.ts";
import { RuntimeError } from "../errors.ts";
import type { ScheduledFollowUp } from "../ports/scheduler-port.ts";
import { nest } from "../step/nested-items.ts";
import type { CallContext, DelegateAgent, ToolContext } from "./tool.ts";
import type { RunContext, TurnState } from "../turn-state.ts";

/** States tools of one step set, by agent name: committed with the step. */
export type StateUpdates = Map<string, Record<string, unknown>>;

export function toolContext(run: RunContext, state: TurnState, agent: string, updates: StateUpdates): CallContext {
  const owner = run.options.network.get(agent);
  return {
    conversationId: run.options.conversationId,
    agent,
    signal: run.signal,
    context: state.holding.context,
    // The state as the call starts: a tool that sets it sees its own change through what it passed.
    state: updates.get(agent) ?? agentState(state, owner),
    setState: (next) => {
      if (!owner?.stateSchema) throw new TypeError(`Agent '${agent}' has no state: give it a \`state\` schema to keep one.`);
      updates.set(agent, owner.stateSchema.parse(next));
    },
    delegate: (delegate, request, toolCallId) => delegateTo(run, delegate, request, toolCallId),
    schedule: (request, toolCallId) => scheduleFollowUp(run, agent, request, toolCallId),
  };
}

/** A tool's follow-up, through the host's schedule: a time, or minutes from now. */
async function scheduleFollowUp(
  run: RunContext,
  agent: string,
  request: Parameters<ToolContext["schedule"]>[0],
  toolCallId: string,
): Promise<ScheduledFollowUp> {
  const scheduler = run.options.scheduler;
  if (!scheduler) throw new RuntimeError("schedule_refused", "This conversation has no schedule: follow-ups cannot be scheduled here.");
  if (typeof request.note !== "string" || !request.note.trim())
    throw new RuntimeError("schedule_refused", "A follow-up needs a note: what to do when it is due.");
  if ((request.at === undefined) === (request.inMinutes === undefined))
    throw new RuntimeError("schedule_refused", "Give a follow-up one of `at` (a time) or `inMinutes`.");
  const at = request.at === undefined ? Date.now() + request.inMinutes! * 60_000 : new Date(request.at).getTime();
  if (!Number.isFinite(at))
    throw new RuntimeError("schedule_refused", `The follow-up's time ${JSON.stringify(request.at ?? request.inMinutes)} is not a time.`);
  return scheduler.schedule({ at, note: request.note.trim(), agent, toolCallId });
}

/** An agent's state in the turn: as stored, else the one it starts with. */
export function agentState(state: Pick<TurnState, "holding">, agent: Agent | undefined): Readonly<Record<string, unknown>> {
  return (agent && state.holding.agentStates[agent.name]) ?? agent?.initialState ?? {};
}

/** The agent runs on a fresh context with only the request, within the turn's bound on delegations at once; its final text comes back. */
async function delegateTo(run: RunContext, delegate: DelegateAgent, request: string, toolCallId: string): Promise<string> {
  if (!(delegate instanceof Agent)) throw new TypeError("delegate() takes an Agent.");
  return run.delegations.run(() => runDelegation(run, delegate, request, [...run.path, toolCallId]));
}

/**
 * The delegated run: its events go to the delegating step nested under `path` as they come, its steps to its own history;
 * a grandchild's come up whole. Handoffs inside it stay inside it: it has its own holder, never the conversation's.
 */
async function runDelegation(run: RunContext, delegate: Agent, request: string, path: string[]): Promise<string> {
  const { options } = run;
  const network = new Network(delegate, {
    defaultModel: options.network.defaultModel,
    transferScope: "declared",
    ...(options.network.options.maxParallelDelegations ? { maxParallelDelegations: options.network.options.maxParallelDelegations } : {}),
  });
  let holder = delegate.name;
  let text = "";
  for await (const item of run.runItems({
    conversationId: `${options.conversationId}/${delegate.name}`,
    network,
    model: options.model,
    ...(options.mcp ? { mcp: options.mcp } : {}),
    conversation: newConversation(delegate.name),
    input: { kind: "message", text: request },
    limits: run.limits,
    signal: run.signal,
    path,
  })) {
    if (item.type === "calls") continue;
    if (item.type === "commit") {
      const events = item.events.map((event) => nest(path, holder, event));
      run.nested.push({ type: "delegation-commit", path, agent: holder, commit: item.commit, events });
      continue;
    }
    if (item.type === "delegation-commit" || item.type === "delegated") {
      run.nested.push(item);
      continue;
    }
    if (item.type === "run-start" || item.type === "step-start") holder = item.agent;
    run.nested.push(nest(path, holder, item));
    if (item.type === "error") throw new Error(`'${delegate.name}' failed: ${item.message}`);
    if (item.type === "done" && item.status === "cancelled") throw new Error(`'${delegate.name}' was cancelled.`);
    if (item.type === "done")
      text = item.status === "completed" ? item.text : `'${delegate.name}' is waiting for an approval it cannot get here.`;
  }
  return text;
}
