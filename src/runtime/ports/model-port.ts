/** The model port: what the loop asks of a model, and what a model streams back. */
import type { Message, ToolCall } from "../messages.ts";
import type { FilePort } from "./files-port.ts";
import type { Usage } from "../usage.ts";

/** A function tool as the model APIs describe it: JSON Schema parameters. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Per-agent model options; unset fields fall back to the Worker's environment. */
export interface ModelSettings {
  /** Which OpenAI API to call: Chat Completions (default) or Responses. */
  api?: "chat" | "responses";
  temperature?: number;
  reasoningEffort?: "minimal" | "low" | "medium" | "high";
  maxOutputTokens?: number;
  parallelToolCalls?: boolean;
}

/** What the loop asks a model for one step. */
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
  /** Where the files the messages refer to are read: an adapter sends their bytes in the provider's wire format. */
  files?: FilePort;
}

/** What a model streams for one step: text as it comes, whole tool calls, and how it finished. */
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
