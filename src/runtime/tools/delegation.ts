/**
 * Delegation (`Agent.asTool`, `ctx.delegate`): another agent runs on a fresh context with only the
 * request, as part of the turn. Its events go to the delegating step nested under the path of calls
 * as they come, its steps to a history of its own. When it waits for the user (an approval, a
 * question…), each of its requests is asked on its behalf through the delegating call's own asks,
 * so the whole turn waits in the one wait; once the user has decided them all, the call runs again,
 * and the delegated run resumes from where it stored its wait, with those decisions.
 */
import { Agent } from "../agent.ts";
import { newConversation } from "../conversation-snapshot.ts";
import type { TurnInput } from "../run-options.ts";
import type { StoredDelegation, TurnStore } from "../ports/store-port.ts";
import { type DelegatedEnd, delegatedRun } from "../delegated-run.ts";
import { type Decision, forwardedRequest } from "../wait/requests.ts";
import type { RunContext } from "../turn-state.ts";
import type { DelegateAgent } from "./tool.ts";
import type { CallAsks } from "../wait/asks.ts";
import { addUsage, NO_USAGE, subtractUsage, type UsageTotals } from "../usage.ts";

/** The agent runs within the turn's bound on delegations at once; its final text comes back. */
export async function delegateTo(run: RunContext, delegate: DelegateAgent, request: string, call: DelegatingCall): Promise<string> {
  if (!(delegate instanceof Agent)) throw new TypeError("delegate() takes an Agent.");
  return run.delegations.run(() => runDelegation(run, delegate, request, [...run.path, call.toolCallId], call));
}

/**
 * The call that delegates: its id, its asks (what the delegated run asks the user goes through them), and what the turn and
 * the conversation have spent, live (the delegating run's steps, and its delegations' as they pass up).
 */
export interface DelegatingCall {
  toolCallId: string;
  asks: CallAsks;
  spent: () => { turn: UsageTotals; conversation: UsageTotals };
}

/** Where the delegated run starts: a fresh one, or its stored wait resumed with the user's decisions (asked again, answered). */
async function startOf(run: RunContext, delegate: Agent, request: string, path: string[], asks: CallAsks) {
  const stored: StoredDelegation | undefined = delegationsOf(run)?.readDelegation?.(path);
  if (!stored?.suspension)
    return { input: { kind: "message", text: request } as TurnInput, conversation: newConversation(delegate.name), asked: 0 };
  const { suspension } = stored;
  // The call runs again from its start: the answers it was given before come back to the asks it made before.
  for (let i = 0; i < stored.asked; i++) await asks.forward(forwardedRequest(suspension.pending[0]!, path));
  const decisions: Decision[] = [];
  for (const pending of suspension.pending)
    decisions.push({ ...(await asks.forward(forwardedRequest(pending, path))), toolCallId: pending.toolCallId });
  const input: TurnInput = { kind: "resume", suspension, decisions };
  return { input, conversation: stored.conversation, asked: stored.asked + decisions.length };
}

/**
 * The delegated run (`delegatedRun`), its items handed to the delegating step as they come. A wait it ends in is asked of the
 * user through `asks`, which stops the delegating call until every request has its decision.
 */
async function runDelegation(run: RunContext, delegate: Agent, request: string, path: string[], call: DelegatingCall): Promise<string> {
  const { options } = run;
  const start = await startOf(run, delegate, request, path, call.asks);
  const items = delegatedRun({
    conversationId: options.conversationId,
    network: options.network,
    delegate,
    // Its budgets count its own spending, and the rest of the turn's live (see spentOutside).
    conversation: { ...start.conversation, usage: NO_USAGE },
    input: start.input,
    path,
    asked: start.asked,
    runItems: run.runItems,
    model: options.model,
    ...(options.mcp ? { mcp: options.mcp } : {}),
    ...(options.remote ? { remote: options.remote } : {}),
    ...(options.memory ? { memory: options.memory } : {}),
    limits: run.limits,
    signal: run.signal,
    spentOutside: () => spentOutside(run, call),
    ...(delegationsOf(run) ? { delegations: delegationsOf(run) } : {}),
  });
  for (let next = await items.next(); ; next = await items.next()) {
    if (next.done) return answerOf(delegate, next.value, path, call.asks);
    const item = next.value;
    if (item.type === "step") spend(run, call.toolCallId, item.step.commit.usage);
    run.nested.push(item.type === "step" ? item.step : item.event);
  }
}

/** The delegated run's answer: its final text, once what it waits for is asked of the user (the first ask with no answer stops here). */
async function answerOf(delegate: Agent, end: DelegatedEnd, path: string[], asks: CallAsks): Promise<string> {
  if (end.failure) throw new Error(`'${delegate.name}' failed: ${end.failure}`);
  if (end.outcome.status === "cancelled") throw new Error(`'${delegate.name}' was cancelled.`);
  for (const pending of end.waiting?.pending ?? []) await asks.forward(forwardedRequest(pending, path));
  return end.text;
}

/** A delegated step's spending, as it passes up: the delegating run's, and its call's (which its other delegations count). */
function spend(run: RunContext, toolCallId: string, usage: Partial<UsageTotals> | undefined): void {
  if (!usage) return;
  run.delegated.usage = addUsage(run.delegated.usage, usage);
  run.delegated.byCall.set(toolCallId, addUsage(run.delegated.byCall.get(toolCallId) ?? NO_USAGE, usage));
}

/** What a delegated run's budgets count beside its own: everything the turn has spent, less what this call's run has. */
function spentOutside(run: RunContext, call: DelegatingCall): { turn: UsageTotals; conversation: UsageTotals } {
  const all = call.spent();
  const own = run.delegated.byCall.get(call.toolCallId) ?? NO_USAGE;
  return { turn: subtractUsage(all.turn, own), conversation: subtractUsage(all.conversation, own) };
}

/** Where delegated runs are read back from: the host's reader, else the store's. */
function delegationsOf(run: RunContext): Pick<TurnStore, "readDelegation"> | undefined {
  return run.options.delegations ?? run.store;
}
