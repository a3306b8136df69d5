import { type Duration, durationMs } from "./duration.ts";
import * as z from "zod";
import type { Guardrail } from "./tools/guardrails.ts";
import type { HandoffOptions } from "./handoff/types.ts";
import type { McpServerConfig } from "./ports/mcp-port.ts";
import type { ModelSettings } from "./ports/model-port.ts";
import type { RemoteAgentConfig } from "./ports/remote-port.ts";
import type { MemoryAccess } from "./ports/memory-port.ts";
import type { RouterOptions } from "./ports/router-port.ts";
import type { ReturnMode } from "./holding.ts";
import type { Tool } from "./tools/tool.ts";
import type { StartedDelegation } from "./ports/scheduler-port.ts";

/** What an agent's instructions and tools can read: the context handoffs have carried so far. */
export interface AgentContext {
  context: Readonly<Record<string, unknown>>;
  /** This agent's own state in the conversation (its `state` schema's), kept across its tenures. */
  state: Readonly<Record<string, unknown>>;
}

/** A handoff target with its options; `handoff(billing, { inputSchema })` makes one. */
export interface Handoff extends HandoffOptions {
  agent: Agent;
}

/** An agent's definition: `new Agent(config)`. */
export interface AgentConfig {
  name: string;
  /** One sentence for routers: it is added to the description of every transfer tool that targets this agent. */
  description?: string;
  /** The system prompt while this agent holds the conversation; a function reads the handoff context. */
  instructions: string | ((ctx: AgentContext) => string);
  /** Model name; the network's default applies when absent. */
  model?: string;
  /** API, temperature, reasoning effort, output tokens, parallel tool calls. */
  modelSettings?: ModelSettings;
  tools?: Tool[];
  /** Remote MCP servers whose tools this agent has, beside its own (named `<server>_<tool>`). */
  mcpServers?: McpServerConfig[];
  handoffs?: Array<Agent | Handoff>;
  /** Tree form: children are targets, and so are the parent and siblings unless disallowed. */
  subAgents?: Agent[];
  disallowTransferToParent?: boolean;
  disallowTransferToPeers?: boolean;
  /** Run on the user's message before the first model call of a turn this agent starts. */
  inputGuardrails?: Guardrail[];
  /** Run on this agent's final text before it is stored. */
  outputGuardrails?: Guardrail[];
  /** Token budget of a request while this agent holds the conversation; over it, older turns are summarized. */
  contextBudget?: number;
  /**
   * A small state of this agent's own, kept with the conversation across its tenures: its
   * instructions function and its tools read it, tools change it with `ctx.setState`. Every field
   * needs a default: the state starts as the schema's parse of `{}`.
   */
  state?: z.ZodObject;
  /** A person, not a model (made with `humanAgent`): handed the conversation, the turn ends and the person answers. */
  human?: boolean;
  /** How long this agent's calls wait for approval before they are declined with reason `expired` (a tool's own wins). */
  approvalExpiresIn?: Duration;
  /** A person only: how long the conversation waits for their first answer before `onTimeout`. */
  answerWithin?: Duration;
  /**
   * A person only: who takes the conversation back when no one answered in time (the agent that handed it over by default), and the note it
   * reads.
   */
  onTimeout?: PersonTimeout;
  /** Served elsewhere and reached over A2A (made with `remoteAgent`): the loop calls the host's remote port, not a model. */
  remote?: RemoteAgentConfig;
  /** How handoffs to this agent give the conversation back when the handoff itself does not say (`handoff(agent, { returns })`). */
  returns?: ReturnMode;
  /** A router that hands a user's message on before this agent's model is called, when it is sure (`RouterOptions`). */
  router?: RouterOptions;
  /** Messages this agent is for, to train a router on (`routerFromExamples` of `handoff-runtime/router`). */
  examples?: readonly string[];
  /**
   * Whether it reads the signed-in user's memory (recalled into its instructions), writes it (`ctx.memory.remember`), both
   * or neither. Unset: `read-write` while it holds a conversation, `none` delegated (`asTool`) or remote.
   */
  memory?: MemoryAccess;
}

/**
 * What happens when no person answered in time: the conversation goes back to `handBackTo` (else the agent that handed it over) with
 * `note`.
 */
export interface PersonTimeout {
  handBackTo?: string;
  note?: string;
}

/**
 * A person the model can hand the conversation to like an agent (for example a support desk):
 * the turn ends with status `awaiting_human`, the user's next messages are stored for the person
 * and start no model call, and the person answers and hands back through the host's operator API.
 */
export function humanAgent(options: {
  name: string;
  description: string;
  answerWithin?: Duration;
  onTimeout?: PersonTimeout;
  /** Messages a person is for, to train a router on. */
  examples?: readonly string[];
}): Agent {
  return new Agent({
    name: options.name,
    description: options.description,
    instructions: "",
    human: true,
    ...(options.examples ? { examples: options.examples } : {}),
    ...(options.answerWithin === undefined ? {} : { answerWithin: options.answerWithin }),
    ...(options.onTimeout ? { onTimeout: options.onTimeout } : {}),
  });
}

/**
 * An agent served somewhere else that speaks A2A (another Worker, a partner's service): a handoff
 * target like any agent. While it holds the conversation each user message goes to its remote
 * context and its streamed text is its answer; `returns: "on-answer"` gives the conversation back
 * once its task completes. If it fails, hangs or answers garbage, the conversation goes back to the
 * agent that handed it over, which is told why and answers the user.
 */
export function remoteAgent(options: { name: string; description: string; returns?: ReturnMode } & RemoteAgentConfig): Agent {
  const { name, description, returns, ...remote } = options;
  if (!/^(https?:)\/\//.test(remote.url)) throw new TypeError(`Remote agent '${name}': url must be an http(s) URL, got '${remote.url}'.`);
  return new Agent({ name, description, instructions: "", remote, ...(returns ? { returns } : {}) });
}

function initialState(config: AgentConfig): Readonly<Record<string, unknown>> {
  if (!config.state) return {};
  const parsed = config.state.safeParse({});
  if (!parsed.success)
    throw new TypeError(
      `Agent '${config.name}': every field of its state needs a default (the state starts as {}): ${z.prettifyError(parsed.error)}`,
    );
  return parsed.data;
}

/**
 * An agent is a value: name, instructions, model, tools and handoff targets. It is a class only
 * so that cyclic links can be made after construction (`addHandoff`).
 */
export class Agent {
  readonly name: string;
  readonly description: string;
  readonly instructions: string | ((ctx: AgentContext) => string);
  readonly model: string | undefined;
  readonly modelSettings: ModelSettings;
  readonly tools: readonly Tool[];
  readonly mcpServers: readonly McpServerConfig[];
  readonly subAgents: readonly Agent[];
  readonly disallowTransferToParent: boolean;
  readonly disallowTransferToPeers: boolean;
  readonly inputGuardrails: readonly Guardrail[];
  readonly outputGuardrails: readonly Guardrail[];
  readonly contextBudget: number | undefined;
  readonly stateSchema: z.ZodObject | undefined;
  /** A person (`humanAgent`): the loop never calls a model for it. */
  readonly human: boolean;
  /** The state this agent starts with in a conversation: `{}` without a schema. */
  readonly initialState: Readonly<Record<string, unknown>>;
  /** Milliseconds its calls wait for approval, when it sets a deadline. */
  readonly approvalExpiresInMs: number | undefined;
  /** A person: milliseconds the conversation waits for their first answer, when they have a deadline. */
  readonly answerWithinMs: number | undefined;
  readonly onTimeout: PersonTimeout;
  /** Served elsewhere (`remoteAgent`): the loop calls the host's remote port for it. */
  readonly remote: RemoteAgentConfig | undefined;
  readonly returns: ReturnMode | undefined;
  readonly router: RouterOptions | undefined;
  readonly examples: readonly string[];
  /** What it declared of the user's memory (unset: see `memoryAccess`). */
  readonly memory: MemoryAccess | undefined;
  readonly #handoffs: Handoff[];

  constructor(config: AgentConfig) {
    this.name = config.name;
    this.description = config.description ?? "";
    this.instructions = config.instructions;
    this.model = config.model;
    this.modelSettings = { ...config.modelSettings };
    this.tools = [...(config.tools ?? [])];
    this.mcpServers = [...(config.mcpServers ?? [])];
    this.subAgents = [...(config.subAgents ?? [])];
    this.disallowTransferToParent = config.disallowTransferToParent ?? false;
    this.disallowTransferToPeers = config.disallowTransferToPeers ?? false;
    this.inputGuardrails = [...(config.inputGuardrails ?? [])];
    this.outputGuardrails = [...(config.outputGuardrails ?? [])];
    this.contextBudget = config.contextBudget;
    this.stateSchema = config.state;
    this.human = config.human ?? false;
    this.initialState = initialState(config);
    this.approvalExpiresInMs =
      config.approvalExpiresIn === undefined
        ? undefined
        : durationMs(config.approvalExpiresIn, `Agent '${config.name}': approvalExpiresIn`);
    this.answerWithinMs =
      config.answerWithin === undefined ? undefined : durationMs(config.answerWithin, `Agent '${config.name}': answerWithin`);
    this.onTimeout = { ...config.onTimeout };
    this.remote = config.remote;
    this.returns = config.returns;
    this.router = config.router;
    this.examples = [...(config.examples ?? [])];
    this.memory = config.memory;
    this.#handoffs = (config.handoffs ?? []).map((h) => (h instanceof Agent ? { agent: h } : h));
  }

  get handoffs(): readonly Handoff[] {
    return this.#handoffs;
  }

  /** Adds a target; used for links back to an agent defined earlier (cycles). */
  addHandoff(target: Agent | Handoff): this {
    const h = target instanceof Agent ? { agent: target } : target;
    if (!this.#handoffs.some((existing) => existing.agent === h.agent)) this.#handoffs.push(h);
    return this;
  }

  instructionsFor(ctx: AgentContext): string {
    return typeof this.instructions === "string" ? this.instructions : this.instructions(ctx);
  }

  /**
   * Delegation, not a handoff: a tool that runs this agent on a fresh context with the
   * given request and returns its answer. The conversation stays with the agent that called it.
   * `background`: the call answers at once that the work has started; the host runs this agent
   * apart from the turn, and the calling agent gets its answer as a follow-up turn.
   */
  asTool(options: { name?: string; description?: string; background?: boolean } = {}): Tool {
    const agent = this;
    const background = options.background === true;
    const does = background
      ? `Start '${agent.name}' on a piece of work in the background: its answer comes to you later, as a follow-up.`
      : `Ask '${agent.name}' and get its answer back.`;
    return {
      name: options.name ?? `ask_${agent.name.toLowerCase().replace(/[^a-z0-9_]/g, "_")}`,
      description: options.description ?? `${does} ${agent.description}`.trim(),
      parameters: z.object({ request: z.string().min(1).describe("What to ask, with everything the agent needs: it sees nothing else.") }),
      delegatesTo: agent,
      ...(background
        ? { execute: async (args, ctx) => startedAnswer(await ctx.delegateInBackground(agent, (args as { request: string }).request)) }
        : { delegates: true, execute: (args, ctx) => ctx.delegate(agent, (args as { request: string }).request) }),
    };
  }
}

/** What a background delegation's call answers: the work has started, and where its result will come. */
function startedAnswer(started: StartedDelegation): Record<string, unknown> {
  const note =
    `'${started.agent}' is working on it in the background. ` + "Its answer comes to you as a follow-up when it is done: tell the user so.";
  return { started: true, id: started.id, agent: started.agent, note };
}

/**
 * What an agent may do with the signed-in user's memory: what it declared, else read and write while it holds the
 * conversation, nothing when it runs delegated (`asTool`) or elsewhere (a remote agent).
 */
export function memoryAccess(agent: Agent, delegated: boolean): { read: boolean; write: boolean } {
  const declared = agent.memory ?? (delegated || agent.remote || agent.human ? "none" : "read-write");
  return { read: declared === "read" || declared === "read-write", write: declared === "write" || declared === "read-write" };
}
