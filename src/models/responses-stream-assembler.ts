import type { ToolCall } from "../runtime/messages.ts";
import type { Usage } from "../runtime/usage.ts";

/** The fields of Responses API stream events this runtime reads. */
export interface ResponsesEvent {
  type: string;
  delta?: string;
  item_id?: string;
  output_index?: number;
  arguments?: string;
  item?: { id?: string; type?: string; call_id?: string; name?: string; arguments?: string };
  response?: {
    status?: string;
    usage?: { input_tokens?: number; output_tokens?: number } | null;
    error?: { message?: string; code?: string } | null;
  };
  message?: string;
  code?: string;
}

/** A failure the provider reported inside the stream: its words are for the log, its code for the client. */
export interface ProviderFailure {
  message: string;
  code?: string | undefined;
}

interface Slot {
  key: string;
  callId: string;
  name: string;
  arguments: string;
}

/**
 * Assembles a Responses API stream: output text deltas, function calls keyed by item (their
 * `call_id` kept for the pairing with `function_call_output`), usage from `response.completed`.
 * Reasoning items are skipped: this runtime drops them consistently, so no orphaned reasoning
 * item is ever sent back after a handoff or a history filter.
 */
export class ResponsesStreamAssembler {
  readonly #slots: Slot[] = [];
  #status: string | undefined;
  #usage: Usage | undefined;
  #failure: ProviderFailure | undefined;

  push(event: ResponsesEvent): string {
    switch (event.type) {
      case "response.output_text.delta":
        return event.delta ?? "";
      case "response.output_item.added":
      case "response.output_item.done":
        if (event.item?.type === "function_call") {
          const slot = this.#slot(event.item.id ?? `#${event.output_index}`);
          slot.callId = event.item.call_id ?? slot.callId;
          slot.name = event.item.name ?? slot.name;
          if (event.type === "response.output_item.done" && event.item.arguments !== undefined) slot.arguments = event.item.arguments;
        }
        return "";
      case "response.function_call_arguments.delta":
        this.#slot(event.item_id ?? `#${event.output_index}`).arguments += event.delta ?? "";
        return "";
      case "response.function_call_arguments.done":
        if (event.arguments !== undefined) this.#slot(event.item_id ?? `#${event.output_index}`).arguments = event.arguments;
        return "";
      case "response.completed":
      case "response.incomplete":
        this.#status = event.response?.status ?? (event.type === "response.completed" ? "completed" : "incomplete");
        if (event.response?.usage) {
          this.#usage = { inputTokens: event.response.usage.input_tokens ?? 0, outputTokens: event.response.usage.output_tokens ?? 0 };
        }
        return "";
      case "response.failed":
      case "error":
        this.#failure = { message: event.response?.error?.message ?? event.message ?? "", code: event.response?.error?.code ?? event.code };
        return "";
      default:
        return "";
    }
  }

  /** The provider's own failure report, if the stream carried one. */
  get failure(): ProviderFailure | undefined {
    return this.#failure;
  }

  /** Whether the stream reached its terminating event. */
  get finished(): boolean {
    return this.#status !== undefined;
  }

  result(): { toolCalls: ToolCall[]; finishReason: string; usage?: Usage } {
    const toolCalls = this.#slots
      .filter((slot) => slot.name.trim() !== "")
      .map((slot) => ({ id: slot.callId || slot.key, name: slot.name, arguments: slot.arguments }));
    const finishReason = this.#status === "incomplete" ? "length" : toolCalls.length ? "tool_calls" : "stop";
    return this.#usage ? { toolCalls, finishReason, usage: this.#usage } : { toolCalls, finishReason };
  }

  #slot(key: string): Slot {
    let slot = this.#slots.find((s) => s.key === key);
    if (!slot) {
      slot = { key, callId: "", name: "", arguments: "" };
      this.#slots.push(slot);
    }
    return slot;
  }
}
