import { approvalExpiry } from "./step/gate.ts";
import type { RouterOptions } from "./ports/router-port.ts";
import type { AnnouncedHandoffs } from "./handoff/announced.ts";
import type { Duration } from "./duration.ts";
import type { Agent } from "./agent.ts";
import type { Budgets } from "./budgets.ts";
import type { CompactionOptions } from "./compaction.ts";
import type { ToolGuardrail } from "./tools/guardrails.ts";
import { buildEdges, defaultScope, type HandoffEdge, type HandoffScope, isEnabled } from "./handoff/handoff.ts";
import { transferToolNames } from "./tools/tool-names.ts";
import { type TransferStyle, transferSpecs } from "./handoff/transfer-tools.ts";
import type { HandoffInfo, HandoffState } from "./handoff/types.ts";
import { type Tool, type ToolSpec, toolSpec } from "./tools/tool.ts";

/** How a network behaves where the peer systems differ, and its limits, budgets and hooks. */
export interface NetworkOptions {
  /** Model name for agents that do not name their own. */
  defaultModel?: string;
  /** Agents that traversal from the entry agent cannot reach. */
  register?: Agent[];
  /**
   * A closed network: exactly these agents (plus the entry agent). A handoff to any other agent
   * is rejected when the network is built.
   */
  agents?: Agent[];
  /**
   * Which handoffs an agent is offered. `network`: every agent of the network except itself.
   * `declared`: only its own handoffs and, in tree form, its children, parent and peers.
   * Defaults to `declared` when any agent has subAgents, else `network`.
   */
  transferScope?: HandoffScope;
  /** `per-target` (default): transfer_to_<name>; `single`: transfer_to_agent; `named`: one `handoff` tool. */
  toolStyle?: TransferStyle;
  /** Extra transfer calls in one step: `answer` each with an error (default) or `drop` them from the history. */
  extraTransfers?: "answer" | "drop";
  /** At a transfer the target's instructions `replace` the system prompt (default) or are `append`ed. */
  systemPrompt?: "replace" | "append";
  /** Accepted transfers over a conversation's life (default unlimited). */
  maxHandoffs?: number;
  /** Delegations (`Agent.asTool`) of one step that run at once; the rest wait for one to end (default 4). */
  maxParallelDelegations?: number;
  /** false refuses a handoff to an agent already active in this turn (a visited set). */
  allowRevisit?: boolean;
  /** Replaces the sentence added to each transfer tool's description. */
  describe?: (agentName: string) => string;
  /**
   * Runs once per committed change of hands of every kind (transfers, returns, hand-backs), told its
   * kind; a throw in a turn ends the turn with `hook_failed` (it is not swallowed).
   */
  onHandoff?: (info: HandoffInfo) => void | Promise<void>;
  /** Spending limits per turn and per conversation: model calls, tokens, tool calls. */
  budgets?: Budgets;
  /** The entry agent's router (an agent's own `router` wins): a user's message it is sure of is handed on before any model call. */
  router?: RouterOptions;
  /** Checks every regular tool call before the approval gate; a block answers the call with an error. */
  toolGuardrails?: ToolGuardrail[];
  /** Context compaction: the default token budget, turns kept verbatim, the summarizing model. */
  compaction?: CompactionOptions;
  /**
   * The images sent in full with each model request: the latest this many of the history's; older ones are named in words
   * (`[File "box.png", image/png, 1048576 bytes, sent earlier]`), so a conversation's old photos stop costing every step.
   * Unset: every image, every step. The stored history keeps them all.
   */
  imagesSent?: number;
  /**
   * An agent's final answer says it will hand over but no transfer was called: `warn` (default)
   * emits a `warning` event (code `handoff_announced_not_made`) and a trace attribute; `nudge` also
   * runs one more step with a short note (call the transfer tool now, or answer yourself), at most
   * once per turn; `off` does nothing.
   */
  announcedHandoffs?: AnnouncedHandoffs;
  /**
   * How long calls wait for approval before they are declined with reason `expired` (an agent's or a tool's own wins); unset: as long as it
   * takes.
   */
  approvalExpiresIn?: Duration;
}

/** The tools one agent is offered in a turn: its own tools plus its enabled transfers. */
export interface AgentToolset {
  tools: ReadonlyMap<string, Tool>;
  /** Enabled transfers by target name. */
  transfers: ReadonlyMap<string, HandoffEdge>;
  specs: readonly ToolSpec[];
}

/** A validated agent network: a registry by name and each agent's transfer edges, built once. */
export class Network {
  readonly entry: Agent;
  readonly defaultModel: string | undefined;
  readonly options: Readonly<NetworkOptions> & {
    toolStyle: TransferStyle;
    systemPrompt: "replace" | "append";
    extraTransfers: "answer" | "drop";
    allowRevisit: boolean;
  };
  #agents: Map<string, Agent>;
  #toolNames: Map<string, string>;
  #edges = new Map<string, HandoffEdge[]>();
  #parents = new Map<Agent, Agent>();
  /** Tool sets of agents whose transfers do not depend on the state, built once. */
  #staticToolsets = new Map<string, AgentToolset>();

  constructor(entry: Agent, options: NetworkOptions = {}) {
    this.entry = entry;
    this.defaultModel = options.defaultModel;
    this.options = { toolStyle: "per-target", systemPrompt: "replace", extraTransfers: "answer", allowRevisit: true, ...options };
    this.#agents = new Map();
    this.#toolNames = new Map();
    this.#build([entry, ...(options.agents ?? []), ...(options.register ?? [])]);
  }

  get agents(): ReadonlyMap<string, Agent> {
    return this.#agents;
  }

  /** Registers agents linked after the network was built; earlier tool names do not change. */
  register(...agents: Agent[]): this {
    this.#build([...this.#agents.values(), ...agents]);
    return this;
  }

  get(name: string): Agent | undefined {
    return this.#agents.get(name);
  }

  transferToolName(agentName: string): string | undefined {
    return this.#toolNames.get(agentName);
  }

  /** The model an agent's steps call: its own, the network's default, or for a remote agent `a2a:<its url>`. */
  modelFor(agent: Agent): string {
    if (agent.remote) return `a2a:${agent.remote.url}`;
    return agent.model ?? this.defaultModel ?? "";
  }

  /** Every handoff the agent may make, enabled or not. */
  edges(agentName: string): readonly HandoffEdge[] {
    const edges = this.#edges.get(agentName);
    if (!edges) throw new TypeError(`Agent '${agentName}' is not part of this network.`);
    return edges;
  }

  /** The agent's tools and the transfers enabled for this state, with the specs sent to the model. */
  toolset(agentName: string, state?: HandoffState): AgentToolset {
    const cached = this.#staticToolsets.get(agentName);
    if (cached) return cached;
    const agent = this.#agents.get(agentName);
    if (!agent) throw new TypeError(`Agent '${agentName}' is not part of this network.`);
    const tools = new Map(agent.tools.map((t) => [t.name, t] as const));
    const transfers = new Map<string, HandoffEdge>();
    for (const edge of this.edges(agentName)) {
      // An agent's own tool wins over a transfer tool of the same name.
      if (isEnabled(edge, state) && !tools.has(edge.toolName)) transfers.set(edge.agent.name, edge);
    }
    const specs = [
      ...[...tools.values()].map(toolSpec),
      ...transferSpecs(this.options, [...transfers.values()]).filter((s) => !tools.has(s.name)),
    ];
    const toolset = { tools, transfers, specs };
    if (this.edges(agentName).every((edge) => typeof edge.isEnabled !== "function")) this.#staticToolsets.set(agentName, toolset);
    return toolset;
  }

  #build(roots: readonly Agent[]): void {
    const agents = collectAgents(roots, this.#parents);
    if (this.options.agents) {
      const closed = new Set([this.entry, ...this.options.agents, ...(this.options.register ?? [])]);
      for (const agent of agents.values()) {
        for (const target of [...agent.handoffs.map((h) => h.agent), ...agent.subAgents]) {
          if (!closed.has(target)) {
            throw new TypeError(
              `Agent '${agent.name}' hands off to '${target.name}', which is not part of this network: add it to the network's agents.`,
            );
          }
        }
      }
    }
    const names = transferToolNames([...this.#toolNames.keys(), ...[...agents.keys()].filter((n) => !this.#toolNames.has(n))]);
    for (const agent of agents.values()) {
      // A remote agent is served elsewhere and a person answers themselves: neither calls a model here.
      if (!agent.remote && !agent.human && !agent.model && !this.defaultModel) {
        throw new TypeError(`Agent '${agent.name}' has no model and the network has no defaultModel: set one of them.`);
      }
      // Deadlines fail where they are set, not when a call first waits.
      for (const t of [undefined, ...agent.tools]) approvalExpiry(t, agent, this.options.approvalExpiresIn);
      if (agent.onTimeout.handBackTo !== undefined && !agents.get(agent.onTimeout.handBackTo))
        throw new TypeError(
          `Person '${agent.name}': onTimeout.handBackTo names '${agent.onTimeout.handBackTo}', which is not an agent of this network.`,
        );
    }
    const edges = buildEdges(agents, this.#parents, this.options.transferScope ?? defaultScope(agents.values()), names);
    this.#agents = agents;
    this.#toolNames = names;
    this.#edges = edges;
    this.#staticToolsets.clear();
  }
}

/** Every agent reachable from the roots, by name; rejects empty and duplicate names and second parents. */
function collectAgents(roots: readonly Agent[], parents: Map<Agent, Agent>): Map<string, Agent> {
  const byName = new Map<string, Agent>();
  const pending = [...roots];
  for (let agent = pending.shift(); agent; agent = pending.shift()) {
    if (!agent.name.trim()) throw new TypeError("An agent has an empty name: give every agent a unique name.");
    const known = byName.get(agent.name);
    if (known === agent) continue;
    if (known) throw new TypeError(`Two different agents are named '${agent.name}': agent names must be unique in a network.`);
    byName.set(agent.name, agent);
    for (const child of agent.subAgents) {
      const parent = parents.get(child);
      if (parent && parent !== agent) {
        throw new TypeError(
          `Agent '${child.name}' has two parents ('${parent.name}' and '${agent.name}'): an agent belongs to one parent in a tree.`,
        );
      }
      parents.set(child, agent);
    }
    pending.push(...agent.handoffs.map((h) => h.agent), ...agent.subAgents);
  }
  return byName;
}
