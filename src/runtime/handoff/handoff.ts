/** Handoff targets and the edges of a network: which handoffs each agent may make. */
import type { Agent, Handoff } from "../agent.ts";
import type { HandoffOptions, HandoffState } from "./types.ts";

/** A handoff target with options (typed input, isEnabled, a history filter), for an agent's `handoffs`. */
export function handoff(agent: Agent, options: HandoffOptions = {}): Handoff {
  return { agent, ...options };
}

/** One handoff an agent may make, as the network resolved it: the declared `Handoff` and the transfer tool the model calls for it. */
export interface HandoffEdge extends Handoff {
  toolName: string;
}

/**
 * `network`: every other agent of the network is a target. `declared`: only the agent's own
 * handoffs and, in tree form, its children, parent and peers.
 */
export type HandoffScope = "network" | "declared";

/** The scope when none is set: `declared` once any agent has sub-agents (a tree), else `network`. */
export function defaultScope(agents: Iterable<Agent>): HandoffScope {
  return [...agents].some((a) => a.subAgents.length > 0) ? "declared" : "network";
}

/** Every agent's edges. A declared handoff keeps its options when the scope adds the same target. */
export function buildEdges(
  agents: ReadonlyMap<string, Agent>,
  parents: ReadonlyMap<Agent, Agent>,
  scope: HandoffScope,
  toolNames: ReadonlyMap<string, string>,
): Map<string, HandoffEdge[]> {
  const edges = new Map<string, HandoffEdge[]>();
  for (const agent of agents.values()) {
    const own = new Map<Agent, Handoff>(agent.handoffs.map((h) => [h.agent, h]));
    for (const target of treeTargets(agent, parents)) if (!own.has(target)) own.set(target, { agent: target });
    if (scope === "network") for (const other of agents.values()) if (!own.has(other)) own.set(other, { agent: other });
    own.delete(agent);
    edges.set(
      agent.name,
      [...own.values()].map((declared) => ({
        // A target's own `returns` applies to handoffs that do not set one.
        ...(declared.agent.returns ? { returns: declared.agent.returns } : {}),
        ...declared,
        toolName: toolNames.get(declared.agent.name)!,
      })),
    );
  }
  return edges;
}

/** A function `isEnabled` without a state (listing the agents) counts as enabled. */
export function isEnabled(edge: HandoffEdge, state: HandoffState | undefined): boolean {
  if (typeof edge.isEnabled === "function") return state ? edge.isEnabled(state) : true;
  return edge.isEnabled !== false;
}

/** Tree form: children, the parent and siblings, less what the agent disallows. */
function treeTargets(agent: Agent, parents: ReadonlyMap<Agent, Agent>): Agent[] {
  const parent = parents.get(agent);
  const peers = parent && !agent.disallowTransferToPeers ? parent.subAgents.filter((a) => a !== agent) : [];
  return [...agent.subAgents, ...(parent && !agent.disallowTransferToParent ? [parent] : []), ...peers];
}
