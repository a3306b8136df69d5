/**
 * The second stage of a step when a remote agent holds the conversation: its call through the
 * host's remote port, read as a model call (text deltas, a finish), and what is kept of it (the
 * remote context and task, as the agent's state). When the remote fails, hangs, answers garbage
 * or hands back, the conversation goes back to the agent that handed it over, which carries on.
 */
import type { Agent } from "../agent.ts";
import { commit } from "../commit.ts";
import { RuntimeError } from "../errors.ts";
import type { RunEvent } from "../events.ts";
import { changeHands } from "../handoff/change-hands.ts";
import type { HandBackRecord } from "../handoff/types.ts";
import type { Model, ModelEvent } from "../ports/model-port.ts";
import type { RemoteState } from "../ports/remote-port.ts";
import type { TurnItem } from "../run-options.ts";
import { agentState } from "../tools/tool-context.ts";
import { advance, holdingChange, type RunContext, type TurnState } from "../turn-state.ts";
import type { PreparedStep } from "./prepare-step.ts";

/** A remote's call as a model; once read, the remote state it leaves, and the summary of a hand-back it asked for. */
export interface RemoteCall {
  model: Model;
  state(): RemoteState;
  handBack(): string | undefined;
}

/**
 * Written ahead of a remote call: that the remote is given the history as it stands (`sent`), so
 * after a crash that cut the call off, the message is not sent again. Returns the state it leaves.
 */
export async function* writeAhead(run: RunContext, state: TurnState, agent: Agent): AsyncGenerator<TurnItem, TurnState> {
  const next = advance(state, {
    agentStates: { [agent.name]: { ...agentState(state, agent), sent: state.history.length } },
    committed: true,
  });
  for (const item of await commit(run, { messages: [], ...holdingChange(state, next) })) yield item;
  return next;
}

/** The remote port's call for the agent holding the conversation, as the model the step reads; `before`: its state until now. */
export function remoteCall(run: RunContext, state: TurnState, prepared: PreparedStep, before: RemoteState): RemoteCall {
  const agent = prepared.agent;
  const remote = agent.remote!;
  const sent = state.history.length;
  let kept = before;
  let handBack: string | undefined;
  const port = run.options.remote;
  const model: Model = {
    async *stream(): AsyncIterable<ModelEvent> {
      if (!port)
        throw new RuntimeError(
          "remote_failed",
          `Agent '${agent.name}' is a remote agent, and this host passed no remote port to reach it.`,
        );
      const request = { agent: agent.name, remote, messages: state.history, state: kept, signal: run.signal };
      for await (const event of port.stream(request)) {
        if (event.type === "remote-state") kept = { ...event.state, sent };
        else if (event.type === "hand-back") handBack = event.summary;
        else yield event;
      }
    },
  };
  return { model, state: () => ({ ...kept, sent }), handBack: () => handBack };
}

/** The remote's side as the conversation keeps it (the agent's state). */
export function remoteState(state: TurnState, agent: Agent): RemoteState {
  const kept = agentState(state, agent);
  return {
    ...(typeof kept.contextId === "string" ? { contextId: kept.contextId } : {}),
    ...(typeof kept.taskId === "string" ? { taskId: kept.taskId } : {}),
    ...(typeof kept.sent === "number" ? { sent: kept.sent } : {}),
  };
}

/**
 * The conversation goes back from the remote agent: to the agent of the caller frame it holds, else
 * to the one that handed it over, else to the entry agent. `said` is the remote's last answer,
 * stored as its message; the note, a system message to the agent that takes over, says why.
 */
export async function* handBackFromRemote(
  run: RunContext,
  state: TurnState,
  change: { said: string; note: string; remote: RemoteState; failure?: RuntimeError },
): AsyncGenerator<TurnItem, TurnState> {
  const from = state.agent;
  const { network } = run.options;
  const frame = state.holding.callers.at(-1);
  const framed = frame?.callee === from.name ? frame.caller : undefined;
  const handedBy = state.lastHandoff?.to === from.name ? state.lastHandoff.from : undefined;
  const target = [framed, handedBy, network.entry.name].map((name) => name && network.get(name)).find((a) => a && a !== from);
  if (!target)
    throw (
      change.failure ??
      new RuntimeError("remote_failed", `Remote agent '${from.name}' handed back, and no agent can take the conversation.`)
    );
  const record: HandBackRecord = { kind: "hand-back", from: from.name, to: target.name, note: change.note };
  const changed = changeHands(state.holding, { record, by: "remote", said: change.said });
  const { messages } = changed;
  const next = advance(state, {
    messages,
    step: "model",
    handoff: { change: changed, target },
    agentStates: { [from.name]: { ...change.remote } },
    committed: true,
  });
  const finishReason = change.failure ? "error" : "hand-back";
  const events: RunEvent[] = [
    { type: "step-finish", stepIndex: state.progress.stepIndex, finishReason },
    ...(change.failure ? [{ type: "warning" as const, code: change.failure.code, message: change.failure.message }] : []),
    ...changed.events,
  ];
  for (const item of await commit(run, { messages, ...holdingChange(state, next), handoff: record }, events)) yield item;
  return next;
}
