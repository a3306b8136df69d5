/** The first stage of a step: the limits it must pass, then the tools and instructions it is sent, and compaction. */
import type { Agent } from "../agent.ts";
import { checkBudgets, spentSoFar } from "../budgets.ts";
import { type CompactionResult, compactIfNeeded, visibleHistory } from "../context-window.ts";
import { RuntimeError } from "../errors.ts";
import type { RunEvent } from "../events.ts";
import { remoteTools } from "../tools/mcp-tools.ts";
import type { Message } from "../messages.ts";
import type { AgentToolset, Network } from "../network.ts";
import { answerReturn, openReturn, returnToolSpec } from "../handoff/returns.ts";
import { agentState } from "../tools/tool-context.ts";
import type { ReturnFrame } from "../handoff/types.ts";
import { toolSpec } from "../tools/tool.ts";
import { withRecalled } from "../memory/recall.ts";
import type { RunContext, TurnState } from "../turn-state.ts";

export interface PreparedStep {
  stepIndex: number;
  agent: Agent;
  toolset: AgentToolset;
  instructions: string;
  /** What the model is sent: the visible history, with a new compaction if one was made. */
  messages: readonly Message[];
  compaction: CompactionResult | undefined;
  /** MCP servers whose tools are missing from this step, and why. */
  warnings: RunEvent[];
  /** The frame the holder's return tool closes (on-call), with the agent it returns to. */
  returnTo?: { frame: ReturnFrame; target: Agent } | undefined;
  /** The frame the holder's final answer closes (on-answer), with the agent it returns to. */
  answerTo?: { frame: ReturnFrame; target: Agent } | undefined;
}

/** The limits a step must pass before it starts: the agent's steps in this turn, and the budgets' model calls. */
export function checkStepLimits(run: RunContext, state: TurnState): void {
  if (state.progress.agentSteps >= run.limits.maxSteps) {
    throw new RuntimeError("max_steps", `Agent '${state.agent.name}' reached maxSteps (${run.limits.maxSteps}) in this turn.`);
  }
  const { turn, conversation } = spentSoFar(run, state);
  checkBudgets(run.options.network.options.budgets, turn, conversation, { modelCalls: 1 });
}

export async function prepareStep(run: RunContext, state: TurnState): Promise<PreparedStep> {
  const { network } = run.options;
  const { agent, holding } = state;
  const { stepIndex } = state.progress;
  const { toolset, warnings } = await withRemoteTools(
    run,
    agent,
    network.toolset(agent.name, {
      activeAgent: agent.name,
      handoffCount: holding.handoffCount,
      turnHandoffs: state.progress.handoffs,
      context: holding.context,
    }),
  );
  // In the append mode the system prompt stays the entry agent's; targets' instructions are in the history.
  const speaker = network.options.systemPrompt === "append" ? network.entry : agent;
  const own = speaker.instructionsFor({ context: holding.context, state: agentState(state, speaker) });
  const instructions = withRecalled(run, agent, own);
  const returnTo = withTarget(network, openReturn(holding.callers, agent.name));
  const answerTo = withTarget(network, answerReturn(holding.callers, agent.name));
  const offered = returnTo ? { ...toolset, specs: [...toolset.specs, returnToolSpec(returnTo.frame)] } : toolset;
  // A remote agent keeps its own context: the history is not summarized for it.
  const compaction = agent.remote ? undefined : await compactIfNeeded(run, state, instructions, offered.specs);
  const messages = visibleHistory(network, compaction ? { ...state, compaction: compaction.compaction } : state);
  return { stepIndex, agent, toolset: offered, instructions, messages, compaction, warnings, returnTo, answerTo };
}

function withTarget(network: Network, frame: ReturnFrame | undefined): { frame: ReturnFrame; target: Agent } | undefined {
  const target = frame && network.get(frame.caller);
  return frame && target ? { frame, target } : undefined;
}

/**
 * The agent's toolset with its MCP servers' tools added after its own tools and transfers, whose
 * names they never take. A server that cannot be listed is a warning; the step goes on without it.
 */
export async function withRemoteTools(
  run: RunContext,
  agent: Agent,
  toolset: AgentToolset,
): Promise<{ toolset: AgentToolset; warnings: RunEvent[] }> {
  if (agent.mcpServers.length === 0) return { toolset, warnings: [] };
  const taken = new Set([...toolset.tools.keys(), ...toolset.specs.map((s) => s.name)]);
  const remote = await remoteTools(run.options.mcp, agent.mcpServers, taken, run.signal);
  const tools = new Map(toolset.tools);
  for (const t of remote.tools) tools.set(t.name, t);
  return {
    toolset: { tools, transfers: toolset.transfers, specs: [...toolset.specs, ...remote.tools.map(toolSpec)] },
    warnings: remote.warnings.map(({ server, message }) => ({
      type: "warning",
      code: "mcp_unavailable",
      message: `The tools of the MCP server '${server}' are not available this step: ${message}`,
    })),
  };
}
