import * as z from "zod";
import type { Duration } from "../duration.ts";
import type { Memory, MemoryType, RecallOptions } from "../ports/memory-port.ts";
import type { FileRef } from "../messages.ts";
import type { NewFile } from "../ports/files-port.ts";
import type { ToolSpec } from "../ports/model-port.ts";
import type { ScheduledFollowUp, StartedDelegation } from "../ports/scheduler-port.ts";
import type { ElicitationAnswer } from "../wait/requests.ts";
import type { AnswerTo, Ask, CallAsks, Elicitation } from "../wait/asks.ts";

/** An `Agent`, as a tool sees it; declared here so that tools and agents do not import each other. */
export interface DelegateAgent {
  readonly name: string;
}

/** What a tool's execute function can see about the call it answers. */
export interface ToolContext {
  conversationId: string;
  agent: string;
  toolCallId: string;
  /**
   * Stable for this call however often it runs (`<conversationId>:<toolCallId>`): a tool with side
   * effects passes it to the system it changes, so a retry after an interruption is safe.
   */
  idempotencyKey: string;
  signal: AbortSignal;
  /** What handoffs have carried into the conversation (typed handoff input). */
  context: Readonly<Record<string, unknown>>;
  /** The calling agent's own state (its `state` schema's); `{}` for an agent without one. */
  state: Readonly<Record<string, unknown>>;
  /** Replaces the calling agent's state, checked against its schema; committed with the step. */
  setState(next: Record<string, unknown>): void;
  /**
   * Runs another agent (an `Agent`) on a fresh context and resolves to its final text (agent-as-tool). Its steps are kept
   * in its own history, and its events stream nested under this call.
   */
  delegate(agent: DelegateAgent, request: string): Promise<string>;
  /**
   * Starts another agent (an `Agent`) on the request in the background and resolves at once: the host runs it apart from
   * the turn, and the calling agent gets its result as a follow-up. Refused (code `schedule_refused`) without a schedule.
   */
  delegateInBackground(agent: DelegateAgent, request: string): Promise<StartedDelegation>;
  /**
   * Schedules a follow-up: when due, whoever holds the conversation then runs a turn with `note`
   * as a system message. `at` is a time (a Date, ISO 8601 or epoch ms), or `inMinutes` from now.
   * Refused (a RuntimeError, code `schedule_refused`) outside the host's bounds or without a schedule.
   */
  schedule(request: { note: string; at?: Date | string | number; inMinutes?: number }): Promise<ScheduledFollowUp>;
  /**
   * Asks the user and resolves to their answer: a question's (`{ message, schema }`), checked against its schema, or a
   * choice's (`{ message, options, other? }`), the option they picked (or their own words, with `other`). The turn
   * waits durably (across requests and restarts) until the user answers; then this call runs again from its start and
   * `ask` returns the answer, so code before it runs again. Declined or expired, the call is answered so and does not
   * run again.
   */
  ask<A extends Ask>(question: A): Promise<AnswerTo<A>>;
  /** Asks the user on an MCP server's behalf (form, or an https URL): accept with the form's content, decline or cancel. */
  elicit(request: Elicitation): Promise<ElicitationAnswer>;
  /**
   * Runs `run` once per call: when the call runs again after the user answers an ask, resolves to what `run` resolved to
   * the first time (kept as JSON with the request) without running it again. Wrap what an ask depends on, and what must
   * not happen twice (a remote call whose answer the user is asked about, a side effect before an ask).
   */
  remember<T>(run: () => Promise<T>): Promise<T>;
  /**
   * The conversation's files: `read` a file the user sent (or a tool saved) by its reference or id; `save` a file this call
   * makes (a label, a chart), which the call's result shows the user. Refused (code `file_not_found`) where the host keeps no files.
   */
  files: ToolFiles;
  /**
   * The signed-in user's memory, across conversations: `remember` what they asked to be remembered (a preference, an
   * address), `recall` what fits a query. Refused (code `memory_unavailable`) in an anonymous conversation, and for an
   * agent whose `memory` declaration does not allow it.
   */
  memory: ToolMemory;
}

/** What a tool does with the user's memory. */
export interface ToolMemory {
  /** Keeps `text` (a `fact` unless `type` says otherwise); a newer memory of the same `key` supersedes the older one. */
  remember(text: string, options?: { type?: MemoryType; key?: string }): Promise<Memory>;
  recall(query: string, options?: RecallOptions): Promise<Memory[]>;
}

/** What a tool does with the conversation's files. */
export interface ToolFiles {
  read(file: FileRef | string): Promise<Uint8Array>;
  save(file: NewFile): Promise<FileRef>;
}

/** A function the model can call: zod parameters, an execute function, and whether a person must approve it. */
export interface Tool<Schema extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  parameters: Schema;
  /** JSON Schema sent to the model as is, in place of the one derived from `parameters` (a remote tool's, as its server gave it). */
  inputSchema?: Record<string, unknown>;
  /** A person must approve the call before it runs; a function decides per call. */
  needsApproval?: boolean | ((args: z.infer<Schema>) => boolean | Promise<boolean>);
  /**
   * What an approval asks, in words for the person who decides ("Refund 129 USD for order A1001?"): the request's `message`,
   * shown above the arguments. Without it, clients say which agent wants to run which tool.
   */
  approvalMessage?: (args: z.infer<Schema>) => string;
  /**
   * What a call does, in words for the user ("Looked up order A1001"): the `tool-call` event's and the stored call's
   * `said`, which pages show in place of the tool's name (kept in the details and the trace).
   */
  describe?: (args: z.infer<Schema>) => string;
  /**
   * How long a call waits for approval before it is declined with reason `expired` (over the agent's and network's `approvalExpiresIn`).
   */
  approvalExpiresIn?: Duration;
  /** The tool runs another agent (`Agent.asTool`): its events stream, nested under the call, while it runs. */
  delegates?: boolean;
  /** The agent this tool delegates to (`Agent.asTool`, in the background or not): a host finds a background run's agent by it. */
  delegatesTo?: DelegateAgent;
  /** A client tool's output, when it declares one: the user's client answers with a value that fits it. */
  outputSchema?: z.ZodType;
  /** Runs the call. A tool without one is a client tool: the user's client runs it and sends its output back. */
  execute?(args: z.infer<Schema>, ctx: ToolContext): unknown;
}

/** Identity helper that infers the argument type of execute from the zod schema. */
export function tool<Schema extends z.ZodType>(definition: Tool<Schema>): Tool {
  return definition as unknown as Tool;
}

export type { ToolSpec } from "../ports/model-port.ts";

const specCache = new WeakMap<Tool, ToolSpec>();

function derivedSchema(parameters: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(parameters) as Record<string, unknown>;
  return schema;
}

export function toolSpec(t: Tool): ToolSpec {
  let spec = specCache.get(t);
  if (!spec) {
    spec = { name: t.name, description: t.description, parameters: t.inputSchema ?? derivedSchema(t.parameters) };
    specCache.set(t, spec);
  }
  return spec;
}

/** A tool's context before it is given its call: `schedule` takes the call's id then. */
export type CallContext = Omit<
  ToolContext,
  "toolCallId" | "idempotencyKey" | "schedule" | "ask" | "elicit" | "remember" | "delegate" | "delegateInBackground"
> & {
  schedule(request: Parameters<ToolContext["schedule"]>[0], toolCallId: string): Promise<ScheduledFollowUp>;
  delegate(agent: DelegateAgent, request: string, toolCallId: string, asks: CallAsks): Promise<string>;
  delegateInBackground(agent: DelegateAgent, request: string, toolCallId: string): Promise<StartedDelegation>;
};
