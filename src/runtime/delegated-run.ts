/**
 * The one runner of a delegated agent (`Agent.asTool`, `ctx.delegate`), in the turn or in the background: the agent runs on
 * a fresh context (or from its stored wait, with the user's decisions) under the path of the calls that delegated it, with
 * its own holder (handoffs inside it stay inside it) and the conversation's budgets. What it yields is the same either way:
 * its steps for the host to store in its history, and its events nested under the path. Only the caller differs: a turn's
 * delegating call hands the items to its step and asks the user through its own asks; a background run is driven from the
 * host's alarm and its result goes to a follow-up turn.
 */
import type { Agent } from "./agent.ts";
import type { ConversationSnapshot } from "./conversation-snapshot.ts";
import type { DelegatedEvent, TurnOutcome } from "./events.ts";
import { Network } from "./network.ts";
import type { RunItemsOptions, TurnInput, TurnItem } from "./run-options.ts";
import { nest } from "./step/nested-items.ts";
import type { Suspension } from "./wait/suspension.ts";

/** A delegated run's step, as the host stores it: its history's messages under `path`, and its events, nested. */
export type DelegatedStep = Extract<TurnItem, { type: "delegation-commit" }>;

/** What a delegated run yields: a step of its own or of a run delegated within it, or an event for live readers. */
export type DelegatedItem = { type: "step"; step: DelegatedStep } | { type: "event"; event: DelegatedEvent };

/** How the run ended: the loop's outcome, its final text or failure, and the wait it ended in (its step's suspension). */
export interface DelegatedEnd {
  outcome: TurnOutcome;
  text: string;
  failure: string;
  waiting: Suspension | null;
}

/** The run: who it is, where it starts from, under which calls; the ports and limits are the delegating run's or host's. */
export interface DelegatedRunOptions
  extends Pick<RunItemsOptions, "model" | "mcp" | "remote" | "memory" | "limits" | "signal" | "delegations" | "spentOutside"> {
  conversationId: string;
  /** The conversation's network: the run gets one of its own, entered at `delegate`. */
  network: Network;
  delegate: Agent;
  conversation: ConversationSnapshot;
  input: TurnInput;
  path: string[];
  /** How many of the delegating call's asks its decisions have taken (stored with each step: what resumes a nested run). */
  asked: number;
  /** The loop, passed in so tools need not import it. */
  runItems: (options: RunItemsOptions) => AsyncGenerator<TurnItem, TurnOutcome>;
}

export async function* delegatedRun(options: DelegatedRunOptions): AsyncGenerator<DelegatedItem, DelegatedEnd> {
  const { conversation, path, asked, delegate } = options;
  let holder = conversation.holding.activeAgent;
  let waiting: Suspension | null = null;
  let text = "";
  let failure = "";
  const items = options.runItems({
    conversationId: `${options.conversationId}/${delegate.name}`,
    network: delegatedNetwork(options.network, delegate),
    model: options.model,
    ...(options.mcp ? { mcp: options.mcp } : {}),
    // A remote A2A agent asked as a tool is reached as a holder is: its task's text is the answer.
    ...(options.remote ? { remote: options.remote } : {}),
    // Recalled and written only by a delegated agent that declares it (`memory` on the agent).
    ...(options.memory ? { memory: options.memory } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.delegations ? { delegations: options.delegations } : {}),
    ...(options.spentOutside ? { spentOutside: options.spentOutside } : {}),
    conversation,
    input: options.input,
    path,
  });
  for (let next = await items.next(); ; next = await items.next()) {
    if (next.done) return { outcome: next.value, text, failure, waiting };
    const item = next.value;
    if (item.type === "calls") continue;
    if (item.type === "commit") {
      if (item.commit.suspension !== undefined) waiting = item.commit.suspension;
      const events = item.events.map((event) => nest(path, holder, event));
      yield { type: "step", step: { type: "delegation-commit", path, agent: holder, commit: item.commit, events, asked } };
      continue;
    }
    if (item.type === "delegation-commit") {
      yield { type: "step", step: item };
      continue;
    }
    if (item.type === "run-start" || item.type === "step-start") holder = item.agent;
    if (item.type === "error") failure = item.message;
    if (item.type === "done") text = item.text;
    yield { type: "event", event: nest(path, holder, item) as DelegatedEvent };
  }
}

/**
 * The network a delegated run has: the delegated agent and those it hands to (its own holder, never the conversation's),
 * under the conversation's budgets (its run counts what was spent outside it: its start's usage, or `spentOutside`).
 */
export function delegatedNetwork(parent: Network, delegate: Agent): Network {
  const { maxParallelDelegations, budgets, approvalExpiresIn } = parent.options;
  return new Network(delegate, {
    defaultModel: parent.defaultModel,
    transferScope: "declared",
    ...(maxParallelDelegations ? { maxParallelDelegations } : {}),
    ...(budgets ? { budgets } : {}),
    // Its requests wait as long as the conversation's would.
    ...(approvalExpiresIn === undefined ? {} : { approvalExpiresIn }),
  });
}
