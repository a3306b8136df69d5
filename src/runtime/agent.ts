import type { Tool } from "./tool.ts";

export interface AgentConfig {
  name: string;
  /** One sentence for routers: it is added to the description of every transfer tool that targets this agent. */
  description?: string;
  /** The system prompt while this agent holds the conversation. */
  instructions: string;
  /** Model name; the network's default applies when absent. */
  model?: string;
  tools?: Tool[];
  handoffs?: Agent[];
}

/**
 * An agent is a value: name, instructions, model, tools and handoff targets.
 * It is a class only so that cyclic links can be made after construction (`addHandoff`).
 */
export class Agent {
  readonly name: string;
  readonly description: string;
  readonly instructions: string;
  readonly model: string | undefined;
  readonly tools: readonly Tool[];
  readonly #handoffs: Agent[];

  constructor(config: AgentConfig) {
    this.name = config.name;
    this.description = config.description ?? "";
    this.instructions = config.instructions;
    this.model = config.model;
    this.tools = [...(config.tools ?? [])];
    this.#handoffs = [...(config.handoffs ?? [])];
  }

  get handoffs(): readonly Agent[] {
    return this.#handoffs;
  }

  /** Adds a target; used for links back to an agent defined earlier (cycles). */
  addHandoff(target: Agent): this {
    if (!this.#handoffs.includes(target)) this.#handoffs.push(target);
    return this;
  }
}
