import type { Agent } from "./agent.ts";
import { type Tool, type ToolSpec, toolSpec } from "./tool.ts";
import { transferToolNames } from "./transfer-names.ts";

export interface NetworkOptions {
  /** Model name for agents that do not name their own. */
  defaultModel?: string;
  /** Agents linked later that traversal from the entry agent cannot reach (seed 004's explicit registration). */
  register?: Agent[];
  /**
   * Which transfers an agent is offered. `network` (default, seed 002): every transfer tool of the
   * network except the one to itself. `declared`: only the agent's own `handoffs`.
   */
  transferScope?: "network" | "declared";
}

/** The tools one agent is offered: its own tools plus its transfers, with the specs sent to the model. */
export interface AgentToolset {
  tools: ReadonlyMap<string, Tool>;
  /** Transfer tool name → target agent name. */
  transfers: ReadonlyMap<string, string>;
  specs: readonly ToolSpec[];
}

/** A validated agent network: a registry by name and each agent's tool set, built once. */
export class Network {
  readonly entry: Agent;
  readonly agents: ReadonlyMap<string, Agent>;
  readonly defaultModel: string | undefined;
  readonly #toolNames: Map<string, string>;
  readonly #toolsets = new Map<string, AgentToolset>();

  constructor(entry: Agent, options: NetworkOptions = {}) {
    this.entry = entry;
    this.defaultModel = options.defaultModel;
    this.agents = collectAgents([entry, ...(options.register ?? [])]);
    this.#toolNames = transferToolNames([...this.agents.keys()]);
    for (const agent of this.agents.values()) {
      if (!agent.model && !options.defaultModel) {
        throw new TypeError(`Agent '${agent.name}' has no model and the network has no defaultModel: set one of them.`);
      }
      const targets =
        options.transferScope === "declared"
          ? agent.handoffs.map((target) => target.name)
          : [...this.agents.keys()];
      this.#toolsets.set(agent.name, this.#buildToolset(agent, targets));
    }
  }

  get(name: string): Agent | undefined {
    return this.agents.get(name);
  }

  toolset(agentName: string): AgentToolset {
    const toolset = this.#toolsets.get(agentName);
    if (!toolset) throw new TypeError(`Agent '${agentName}' is not part of this network.`);
    return toolset;
  }

  transferToolName(agentName: string): string | undefined {
    return this.#toolNames.get(agentName);
  }

  modelFor(agent: Agent): string {
    return agent.model ?? this.defaultModel ?? "";
  }

  #buildToolset(agent: Agent, targets: readonly string[]): AgentToolset {
    const transfers = new Map<string, string>();
    const transferSpecs: ToolSpec[] = [];
    for (const targetName of targets) {
      const target = this.agents.get(targetName);
      const toolName = this.#toolNames.get(targetName);
      if (!target || !toolName || targetName === agent.name) continue;
      transfers.set(toolName, targetName);
      transferSpecs.push(transferToolSpec(toolName, target));
    }
    const tools = new Map<string, Tool>();
    for (const t of agent.tools) {
      if (tools.has(t.name)) throw new TypeError(`Agent '${agent.name}' has two tools named '${t.name}': rename one.`);
      tools.set(t.name, t);
      // An agent's own tool wins over a transfer of the same name on its own turf (seed 002).
      if (transfers.delete(t.name)) transferSpecs.splice(transferSpecs.findIndex((s) => s.name === t.name), 1);
    }
    return { tools, transfers, specs: [...[...tools.values()].map(toolSpec), ...transferSpecs] };
  }
}

function transferToolSpec(toolName: string, target: Agent): ToolSpec {
  const sentence = `Transfer the conversation to '${target.name}'.`;
  return {
    name: toolName,
    description: target.description ? `${sentence} ${target.description}` : sentence,
    parameters: {
      type: "object",
      properties: {
        reason: { type: "string", description: "Why this agent should take over, in one sentence." },
      },
      additionalProperties: false,
    },
  };
}

/** Every agent reachable from the roots, by name; rejects empty and duplicate names. */
function collectAgents(roots: readonly Agent[]): Map<string, Agent> {
  const byName = new Map<string, Agent>();
  const pending = [...roots];
  for (let agent = pending.shift(); agent; agent = pending.shift()) {
    if (!agent.name.trim()) throw new TypeError("An agent has an empty name: give every agent a unique name.");
    const known = byName.get(agent.name);
    if (known === agent) continue;
    if (known) throw new TypeError(`Two different agents are named '${agent.name}': agent names must be unique in a network.`);
    byName.set(agent.name, agent);
    pending.push(...agent.handoffs);
  }
  return byName;
}
