/** The second stage of a step: one model call, streamed. */
import type { RunEvent } from "../events.ts";
import type { ToolCall } from "../messages.ts";
import type { Model, ModelRequest } from "../ports/model-port.ts";
import type { Usage } from "../usage.ts";
import type { RoutedBy } from "../ports/router-port.ts";

export interface ModelStepResult {
  text: string;
  toolCalls: ToolCall[];
  finishReason: string;
  usage?: Usage;
  /** The step is a router's transfer, made with no model call. */
  routedBy?: RoutedBy;
  /** The router's decision itself: the loop plans the transfer from it, never by reading its call back. */
  routed?: RoutedTransfer;
}

/** A router's transfer as decided: its call (written in the network's style, for the history), its target and reason. */
export interface RoutedTransfer {
  toolCallId: string;
  target: string;
  reason: string;
}

/** Streams one model call: text deltas are yielded as they arrive; tool calls come back whole. */
export async function* streamModelCall(model: Model, request: ModelRequest): AsyncGenerator<RunEvent, ModelStepResult> {
  let text = "";
  const toolCalls: ToolCall[] = [];
  let finishReason = "stop";
  let usage: Usage | undefined;
  for await (const event of model.stream(request)) {
    switch (event.type) {
      case "text-delta":
        if (!event.delta) break;
        text += event.delta;
        yield { type: "text-delta", delta: event.delta };
        break;
      case "tool-call":
        // Providers pad names with whitespace now and then; the trimmed name is the one stored.
        toolCalls.push({ ...event.call, name: event.call.name.trim() });
        break;
      case "finish":
        finishReason = event.finishReason;
        usage = event.usage;
        break;
      default: {
        const exhaustive: never = event;
        throw new Error(`unknown model event ${JSON.stringify(exhaustive)}`);
      }
    }
  }
  // A provider that says "stop" after sending tool calls still asked for them.
  if (toolCalls.length > 0 && finishReason === "stop") finishReason = "tool_calls";
  return usage ? { text, toolCalls, finishReason, usage } : { text, toolCalls, finishReason };
}
