/** What a host passes `runTurn`: the network, the ports, the stored state and the input. */
import type { CallsInFlight } from "./calls-in-flight.ts";
import type { FilePort } from "./ports/files-port.ts";
import type { FileRef } from "./messages.ts";
import type { McpPort } from "./ports/mcp-port.ts";
import type { MemoryPort } from "./ports/memory-port.ts";
import type { RunEvent } from "./events.ts";
import type { ConversationSnapshot } from "./conversation-snapshot.ts";
import type { Limits } from "./limits.ts";
import type { Model } from "./ports/model-port.ts";
import type { Network } from "./network.ts";
import type { RemotePort } from "./ports/remote-port.ts";
import type { Scheduler } from "./ports/scheduler-port.ts";
import type { StepCommit, TurnStore } from "./ports/store-port.ts";
import type { Decision } from "./wait/requests.ts";
import type { Suspension } from "./wait/suspension.ts";
import type { UsageTotals } from "./usage.ts";

/**
 * A turn starts with a user message, resumes a suspended one with people's decisions, or is one
 * the host scheduled (a follow-up come due, a person who did not answer in time): its note is a
 * system message to whoever holds the conversation, who answers the user.
 */
export type TurnInput =
  | { kind: "message"; text: string; files?: readonly FileRef[] }
  | { kind: "resume"; suspension: Suspension; decisions: readonly Decision[] }
  | { kind: "scheduled"; note: string };

/** What a host passes `runTurn`: the network, the model and store ports, the stored conversation, and the input. */
export interface RunTurnOptions {
  conversationId: string;
  network: Network;
  model: Model;
  store: TurnStore;
  /** How agents reach their MCP servers; without it, agents that name servers get no tools from them. */
  mcp?: McpPort;
  /** How remote agents (`remoteAgent`) are reached; without it, handing to one gives the conversation straight back. */
  remote?: RemotePort;
  /** Where the conversation's files are read (by model adapters and tools); without it, a message with files fails `file_not_found`. */
  files?: FilePort;
  /**
   * The signed-in user's memory: recalled into the instructions of the agents that read it, written by their tools
   * (`ctx.memory`). Without it (an anonymous conversation) nothing is remembered beyond the conversation.
   */
  memory?: MemoryPort;
  /** Where tools schedule follow-ups (`ctx.schedule`, `scheduleFollowUp()`); without it, scheduling is refused. */
  scheduler?: Scheduler;
  /** The conversation as stored before this leg (`newConversation(agent)` for a new one). */
  conversation: ConversationSnapshot;
  input: TurnInput;
  limits?: Partial<Limits>;
  signal?: AbortSignal;
  /** The calls that delegated this run, outermost first: set for a delegated agent's run (`Agent.asTool`), absent otherwise. */
  path?: readonly string[];
  /**
   * What a delegated run's budgets count beside its own spending: the turn's and the conversation's outside it, as they stand
   * now (its delegating run's steps and its other delegations'). Set for a delegated agent's run; absent otherwise.
   */
  spentOutside?: () => { turn: UsageTotals; conversation: UsageTotals };
  /** Where a delegated run that waited for the user is read back from, for `runTurnItems` (with a store, the store's). */
  delegations?: Pick<TurnStore, "readDelegation">;
}

/**
 * What `runTurnItems` yields: the run's events; each step's commit after the events that came
 * before it, carrying the events the step announces once it is stored (`events`: tool results,
 * handoff, step-finish, warnings), to be stored with it in one transaction; and a step's calls
 * before its first tool starts (for the host to keep, with the events before them, until that commit).
 */
export type TurnItem =
  | RunEvent
  | { type: "commit"; commit: StepCommit; events: readonly RunEvent[] }
  /** A delegated agent's step, with the nested events it announces: stored in the delegation's own history. */
  | { type: "delegation-commit"; path: readonly string[]; agent: string; commit: StepCommit; events: readonly RunEvent[]; asked: number }
  | { type: "calls"; calls: CallsInFlight };

/** `runTurnItems` takes no store: its consumer stores the commits. */
export type RunItemsOptions = Omit<RunTurnOptions, "store">;
