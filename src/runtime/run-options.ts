/** What a host passes `runTurn`: the network, the ports, the stored state and the input. */
import type { McpPort } from "./mcp.ts";
import type { Compaction } from "./compaction.ts";
import type { RunEvent } from "./events.ts";
import type { CallerFrame, HandoffRecord } from "./handoff/types.ts";
import type { Limits } from "./limits.ts";
import type { Message } from "./messages.ts";
import type { Model } from "./model-port.ts";
import type { Network } from "./network.ts";
import type { StepCommit, TurnStore } from "./store-port.ts";
import type { ApprovalDecision, Suspension } from "./suspension.ts";
import type { UsageTotals } from "./usage.ts";

/** A turn starts with a user message, or resumes a suspended one with people's decisions. */
export type TurnInput =
  | { kind: "message"; text: string }
  | { kind: "resume"; suspension: Suspension; decisions: readonly ApprovalDecision[] };

/** What a host passes `runTurn`: the network, the model and store ports, the stored conversation, and the input. */
export interface RunTurnOptions {
  conversationId: string;
  network: Network;
  model: Model;
  store: TurnStore;
  /** How agents reach their MCP servers; without it, agents that name servers get no tools from them. */
  mcp?: McpPort;
  /** The committed history before this leg. */
  history: readonly Message[];
  /** The agent holding the conversation; an unknown name falls back to the entry agent. */
  activeAgent: string;
  /** Accepted transfers over the conversation's life before this leg. */
  handoffCount: number;
  /** The transfer that brought the active agent, if any: its historyFilter still applies. */
  lastHandoff?: HandoffRecord;
  /** Agents waiting for the conversation to come back (returning handoffs), the next to get it last. */
  callers?: readonly CallerFrame[];
  /** Each agent's own state, by name, as stored (see `AgentConfig.state`). */
  agentStates?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** What handoffs have carried so far (typed handoff input). */
  context?: Record<string, unknown>;
  /** What the conversation has spent before this leg, for its budgets. */
  usage?: UsageTotals;
  /** The latest compaction of the stored history. */
  compaction?: Compaction;
  input: TurnInput;
  limits?: Partial<Limits>;
  signal?: AbortSignal;
}

/** What `runTurnItems` yields: the run's events, and each step's commit after the events it stores. */
export type TurnItem = RunEvent | { type: "commit"; commit: StepCommit };

/** `runTurnItems` takes no store: its consumer stores the commits. */
export type RunItemsOptions = Omit<RunTurnOptions, "store">;
