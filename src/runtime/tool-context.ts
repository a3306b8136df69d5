/** What a tool sees of the run, and delegation: another agent run on a fresh context. */
import { Agent } from "./agent.ts";
import { newConversation } from "./conversation-snapshot.ts";
import { Network } from "./network.ts";
import type { DelegateAgent, ToolContext } from "./tool.ts";
import type { RunContext, TurnState } from "./turn-state.ts";

/** States tools of one step set, by agent name: committed with the step. */
export type StateUpdates = Map<string, Record<string, unknown>>;

export function toolContext(
  run: RunContext,
  state: TurnState,
  agent: string,
  updates: StateUpdates,
): Omit<ToolContext, "toolCallId" | "idempotencyKey"> {
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
    delegate: (delegate, request) => delegateTo(run, delegate, request),
  };
}

/** An agent's state in the turn: as stored, else the one it starts with. */
export function agentState(state: Pick<TurnState, "holding">, agent: Agent | undefined): Readonly<Record<string, unknown>> {
  return (agent && state.holding.agentStates[agent.name]) ?? agent?.initialState ?? {};
}

/** The agent runs on a fresh context with only the request; its final text comes back. */
async function delegateTo(run: RunContext, delegate: DelegateAgent, request: string): Promise<string> {
  if (!(delegate instanceof Agent)) throw new TypeError("delegate() takes an Agent.");
  const network = new Network(delegate, { defaultModel: run.options.network.defaultModel, transferScope: "declared" });
  let text = "";
  for await (const event of run.runTurn({
    conversationId: `${run.options.conversationId}/${delegate.name}`,
    network,
    model: run.options.model,
    ...(run.options.mcp ? { mcp: run.options.mcp } : {}),
    store: { commitStep: () => {} },
    conversation: newConversation(delegate.name),
    input: { kind: "message", text: request },
    limits: run.limits,
    signal: run.signal,
  })) {
    if (event.type === "error") throw new Error(`'${delegate.name}' failed: ${event.message}`);
    if (event.type === "done" && event.status === "cancelled") throw new Error(`'${delegate.name}' was cancelled.`);
    if (event.type === "done")
      text = event.status === "completed" ? event.text : `'${delegate.name}' is waiting for an approval it cannot get here.`;
  }
  return text;
}
