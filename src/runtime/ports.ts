/** The ports through which the loop talks to its host: the model and the store. */
import type { HandoffRecord, Usage } from "./events.ts";
import type { Message, ToolCall } from "./messages.ts";
import type { UsageTotals } from "./budgets.ts";
import type { Compaction } from "./compaction.ts";
import type { Suspension } from "./suspension.ts";
import type { ToolSpec } from "./tool.ts";

/** Per-agent model options; unset fields fall back to the Worker's environment. */
export interface ModelSettings {
  /** Which OpenAI API to call: Chat Completions (default) or Responses. */
  api?: "chat" | "responses";
  temperature?: number;
  reasoningEffort?: "minimal" | "low" | "medium" | "high";
  maxOutputTokens?: number;
  parallelToolCalls?: boolean;
}

export interface ModelRequest {
  /** The agent making the call; for logs and for models that route by agent. */
  agent: string;
  model: string;
  /** The active agent's instructions: the system prompt of this call. */
  instructions: string;
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  settings: ModelSettings;
  signal: AbortSignal;
}

export type ModelEvent =
  | { type: "text-delta"; delta: string }
  | { type: "tool-call"; call: ToolCall }
  | { type: "finish"; finishReason: string; usage?: Usage };

/** A model streams one step. Adapters throw RuntimeError with a model_* code on failure. */
export interface Model {
  /** A label for run-start when the model is not a real provider's (the offline demo). */
  readonly label?: string;
  stream(request: ModelRequest): AsyncIterable<ModelEvent>;
}

/** What one step adds to the conversation, committed as a whole or not at all. */
export interface StepCommit {
  messages: Message[];
  activeAgent: string;
  handoff?: HandoffRecord;
  /** A suspension to store (the step waits for approvals), or null to clear the stored one. */
  suspension?: Suspension | null;
  /** The conversation's context after a handoff that carried input. */
  context?: Record<string, unknown>;
  /** What this step spent: its model calls (summaries included), tokens and tool calls. */
  usage?: Partial<UsageTotals>;
  /** A new compaction of the history (what the model is sent; the stored history is unchanged). */
  compaction?: Compaction;
}

/** Store ports may be synchronous so the Durable Object's SQLite fits without awaiting. */
export interface TurnStore {
  commitStep(commit: StepCommit): void | Promise<void>;
}
