/**
 * Delegation in the background (`asTool({ background: true })`): the call has answered that the
 * work started, and the host runs the delegated agent later, apart from any turn (a Durable Object
 * does it from its alarm). This is that run, host-agnostic: its steps for the host to store in the
 * delegated run's history, its events nested under the call that asked, and what came of it as the
 * note of the follow-up turn that brings the result to the agent that asked. A run that asks the user
 * waits for them as a turn does (its requests decided by the same routes) while the conversation goes
 * on, and the host runs it again from its stored wait with their decisions.
 */
import { Agent } from "./agent.ts";
import { newConversation } from "./conversation-snapshot.ts";
import type { DelegatedEvent } from "./events.ts";
import type { ConversationSnapshot } from "./conversation-snapshot.ts";
import type { Message } from "./messages.ts";
import type { Network } from "./network.ts";
import type { BackgroundRequest } from "./ports/scheduler-port.ts";
import type { StepCommit } from "./ports/store-port.ts";
import { runTurnItems } from "./run-loop.ts";
import type { RunItemsOptions } from "./run-options.ts";
import { type Decision, forwardedRequest, type UserRequest } from "./wait/requests.ts";
import type { Suspension } from "./wait/suspension.ts";
import { type DelegatedEnd, delegatedRun } from "./delegated-run.ts";
import type { UsageTotals } from "./usage.ts";

/**
 * What a background run yields: a step to store in its history (`path`: the calls above it; `asked`: how many of its
 * delegating call's asks its decisions have taken, for a run delegated within it), or an event for live readers.
 */
export type BackgroundItem =
  | { type: "step"; path: readonly string[]; agent: string; commit: StepCommit; asked: number }
  | { type: "event"; event: DelegatedEvent };

/** How a background run ended: the note the agent that asked reads in its follow-up turn tells it. */
export type BackgroundOutcome =
  | { status: "completed"; text: string }
  | { status: "failed"; message: string }
  /** Stopped, or cut off by a restart before its result was stored (the host cannot know what its last step did). */
  | { status: "interrupted" };

/**
 * What a background run comes to: its end, or a wait for the user (`requests`, each under the path of the call that asked
 * the run, as a delegated run's requests are asked in a turn); the host keeps the wait and runs it again once they are decided.
 */
export type BackgroundResult = BackgroundOutcome | { status: "awaiting_approval" | "awaiting_input"; requests: UserRequest[] };

/** A background run's stored wait, with the user's decisions on its requests: where it carries on from. */
export interface BackgroundResume {
  conversation: ConversationSnapshot;
  suspension: Suspension;
  decisions: Decision[];
}

/** What a background run needs: the conversation's network and ports, the delegation, and what the conversation has spent. */
export interface BackgroundRun extends Pick<RunItemsOptions, "model" | "mcp" | "remote" | "limits" | "signal" | "delegations"> {
  conversationId: string;
  network: Network;
  delegation: BackgroundRequest;
  /** What the conversation has spent when the run starts: its budgets count on from there. */
  spent: UsageTotals;
  /** Its wait, decided: the run carries on from it rather than from the request. */
  resume?: BackgroundResume;
}

/** The delegated agent of a background delegation, found by name among the tools of the network's agents (and theirs). */
export function findDelegate(network: Network, name: string): Agent | undefined {
  const seen = new Set<Agent>();
  const search = (agents: Iterable<Agent>): Agent | undefined => {
    for (const agent of agents) {
      if (seen.has(agent)) continue;
      seen.add(agent);
      const delegates = agent.tools.flatMap((t) => (t.delegatesTo instanceof Agent ? [t.delegatesTo] : []));
      const found = delegates.find((d) => d.name === name) ?? search(delegates);
      if (found) return found;
    }
    return undefined;
  };
  return search(network.agents.values());
}

/**
 * Runs the delegated agent on a fresh context with only the request (or from its decided wait), under the path of the call
 * that asked; handoffs inside it stay inside it. A run that asks the user ends in a wait the host keeps.
 */
export async function* runInBackground(run: BackgroundRun): AsyncGenerator<BackgroundItem, BackgroundResult> {
  const { delegation, resume } = run;
  const delegate = findDelegate(run.network, delegation.agent);
  if (!delegate) return { status: "failed", message: `'${delegation.agent}' is no longer part of this network.` };
  const path = [delegation.toolCallId];
  const items = delegatedRun({
    conversationId: run.conversationId,
    network: run.network,
    delegate,
    conversation: { ...(resume?.conversation ?? newConversation(delegate.name)), usage: run.spent },
    input: resume
      ? { kind: "resume", suspension: resume.suspension, decisions: resume.decisions }
      : { kind: "message", text: delegation.request },
    path,
    asked: 0,
    runItems: runTurnItems,
    model: run.model,
    ...(run.mcp ? { mcp: run.mcp } : {}),
    ...(run.remote ? { remote: run.remote } : {}),
    ...(run.limits ? { limits: run.limits } : {}),
    ...(run.signal ? { signal: run.signal } : {}),
    ...(run.delegations ? { delegations: run.delegations } : {}),
  });
  for (let next = await items.next(); ; next = await items.next()) {
    if (next.done) return ended(next.value, path);
    const item = next.value;
    if (item.type === "event") {
      yield item;
      continue;
    }
    const { step } = item;
    yield { type: "step", path: step.path, agent: step.agent, commit: step.commit, asked: step.asked };
    for (const event of step.events) yield { type: "event", event: event as DelegatedEvent };
  }
}

function ended({ outcome, text, failure, waiting }: DelegatedEnd, path: string[]): BackgroundResult {
  switch (outcome.status) {
    case "failed":
      return { status: "failed", message: failure || outcome.code };
    case "cancelled":
      return { status: "interrupted" };
    case "awaiting_approval":
    case "awaiting_input": {
      const requests = (waiting?.pending ?? []).map((r) => forwardedRequest(r, path));
      return { status: outcome.status, requests };
    }
    default:
      return { status: "completed", text };
  }
}

/**
 * What came of a run cut off by a restart, from its stored history: a last assistant message with no calls is its answer
 * (its result was not stored after it); anything else, and it was interrupted.
 */
export function recoveredOutcome(history: readonly Message[]): BackgroundOutcome {
  const last = history.at(-1);
  if (last?.role === "assistant" && !last.toolCalls?.length && last.content) return { status: "completed", text: last.content };
  return { status: "interrupted" };
}

/** The note of the follow-up turn that brings a background run's result to the agent that asked. */
export function backgroundNote(delegation: BackgroundRequest, outcome: BackgroundOutcome): string {
  const asked = `'${delegation.agent}', which ${delegation.askedBy} asked in the background (call ${delegation.toolCallId})`;
  switch (outcome.status) {
    case "completed":
      return `${asked}, has finished: ${outcome.text}`;
    case "failed":
      return `${asked}, failed: ${outcome.message}. Tell the user, and try another way if there is one.`;
    case "interrupted":
      return `${asked}, was interrupted before it finished: what it did is unknown. Tell the user, and ask it again if it is still needed.`;
  }
}
