import type { ToolCall } from "../runtime/messages.ts";
import type { Usage } from "../runtime/usage.ts";

/** The fields of a Chat Completions chunk this runtime reads; providers add and omit others. */
export interface ChatChunk {
  choices?: Array<{
    index?: number;
    delta?: {
      content?: string | null;
      tool_calls?: Array<{
        index?: number;
        id?: string | null;
        function?: { name?: string | null; arguments?: string | null };
      }> | null;
    } | null;
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

interface Slot {
  index: number | undefined;
  id: string;
  name: string;
  arguments: string;
}

/**
 * Assembles streamed Chat Completions chunks into text and whole tool calls, following what
 * providers really send: ids only on a call's first chunk (or repeated as ""), `index` missing,
 * several calls in one chunk, usage in a chunk with no choices, extra choices (ignored).
 */
export class ChatStreamAssembler {
  readonly #slots: Slot[] = [];
  #finishReason: string | undefined;
  #closedWithDone = false;
  #usage: Usage | undefined;

  /** Reads one chunk; returns the text it adds, if any. */
  push(chunk: ChatChunk): string {
    if (chunk.usage) {
      this.#usage = { inputTokens: chunk.usage.prompt_tokens ?? 0, outputTokens: chunk.usage.completion_tokens ?? 0 };
    }
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0);
    if (!choice) return "";
    if (choice.finish_reason) this.#finishReason = choice.finish_reason;
    for (const delta of choice.delta?.tool_calls ?? []) {
      const slot = this.#slotFor(delta.index, delta.id ?? "");
      if (delta.id && !slot.id) slot.id = delta.id;
      if (delta.function?.name && !slot.name) slot.name = delta.function.name;
      slot.arguments += delta.function?.arguments ?? "";
    }
    return typeof choice.delta?.content === "string" ? choice.delta.content : "";
  }

  /** The provider closed the stream with `[DONE]`: the answer is whole, finish reason or not. */
  closedWithDone(): void {
    this.#closedWithDone = true;
  }

  /** Whether a finish reason or `[DONE]` arrived: a stream with neither was cut short. */
  get finished(): boolean {
    return this.#finishReason !== undefined || this.#closedWithDone;
  }

  result(): { toolCalls: ToolCall[]; finishReason: string; usage?: Usage } {
    const toolCalls = this.#slots
      .filter((slot) => slot.name.trim() !== "")
      .map((slot) => ({ id: slot.id || `call_${crypto.randomUUID().replaceAll("-", "")}`, name: slot.name, arguments: slot.arguments }));
    // A provider that sends no finish reason says by what it sent why it stopped.
    const finishReason = this.#finishReason ?? (toolCalls.length ? "tool_calls" : "stop");
    return this.#usage ? { toolCalls, finishReason, usage: this.#usage } : { toolCalls, finishReason };
  }

  #slotFor(index: number | undefined, id: string): Slot {
    if (index !== undefined) {
      const existing = this.#slots.find((slot) => slot.index === index);
      if (existing) return existing;
    } else {
      // No index: a new id opens a call; anything else continues the latest one.
      const byId = id ? this.#slots.find((slot) => slot.id === id) : undefined;
      if (byId) return byId;
      const latest = this.#slots.at(-1);
      if (latest && !id) return latest;
    }
    const slot: Slot = { index, id: "", name: "", arguments: "" };
    this.#slots.push(slot);
    return slot;
  }
}
