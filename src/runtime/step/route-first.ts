/**
 * The router's step: while an agent with a router holds the conversation, the user's message is
 * put to it before any model call; when it names one of the agent's transfer targets at or above
 * its threshold, the step is that transfer call, made by the router (no model is called: the step
 * spends no model call or token), and everything after it — the rules, the history, the events,
 * the target answering in the same turn — is a transfer's as a model would have made it. A router
 * that throws is taken as abstaining.
 */
import type { Agent } from "../agent.ts";
import { NAMED_TRANSFER_TOOL, SINGLE_TRANSFER_TOOL } from "../handoff/transfer-tools.ts";
import type { RoutedBy, RouterOptions } from "../ports/router-port.ts";
import type { RunContext, TurnState } from "../turn-state.ts";
import type { ModelStepResult } from "./call-model.ts";
import type { PreparedStep } from "./prepare-step.ts";

/** The router an agent listens to: its own, else the network's when it is the entry agent. */
export function routerOf(run: RunContext, agent: Agent): RouterOptions | undefined {
  const { network } = run.options;
  return agent.router ?? (agent === network.entry ? network.options.router : undefined);
}

/** The step's transfer call when the router is sure of a target, else undefined (the model decides). */
export async function routedStep(run: RunContext, state: TurnState, prepared: PreparedStep): Promise<ModelStepResult | undefined> {
  const options = routerOf(run, prepared.agent);
  const message = state.history.at(-1);
  // Only a user's message that starts the turn, before the holder's first step.
  if (!options || run.options.input.kind !== "message" || state.progress.agentSteps > 0 || message?.role !== "user") return undefined;
  const targets = [...prepared.toolset.transfers.keys()];
  // A router that fails (its embeddings endpoint down, say) decides nothing: the model does.
  const decision = await Promise.resolve()
    .then(() => options.router.route({ message: message.content, agent: prepared.agent.name, targets, history: state.history }))
    .catch(() => null);
  if (!decision || decision.confidence < options.threshold || !targets.includes(decision.agent)) return undefined;
  const routedBy: RoutedBy = { name: options.name ?? "router", confidence: decision.confidence };
  const reason = `${routedBy.name}: ${decision.confidence.toFixed(2)}`;
  const call = transferCall(run, decision.agent, reason);
  // Unique in the conversation (a step index restarts each turn): at most one routed call per turn, each after more history.
  const id = `router_${state.history.length}`;
  return {
    text: "",
    toolCalls: [{ id, ...call }],
    finishReason: "tool_calls",
    routedBy,
    routed: { toolCallId: id, target: decision.agent, reason },
  };
}

/**
 * The transfer call a model would make to `target` in the network's transfer style, so the
 * target's model sees the same history as after a model's transfer; it is written from the
 * decision, and the loop plans from the decision, not from this call.
 */
function transferCall(run: RunContext, target: string, reason: string): { name: string; arguments: string } {
  const { network } = run.options;
  switch (network.options.toolStyle) {
    case "single":
      return { name: SINGLE_TRANSFER_TOOL, arguments: JSON.stringify({ agent_name: target, reason }) };
    case "named":
      return { name: NAMED_TRANSFER_TOOL, arguments: JSON.stringify({ name: target, reason }) };
    default:
      return { name: network.transferToolName(target)!, arguments: JSON.stringify({ reason }) };
  }
}
