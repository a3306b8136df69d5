import type OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import type { Message, Model, ModelEvent, ModelRequest, ToolSpec } from "../runtime/index.ts";
import { type ChatChunk, ChatStreamAssembler } from "./chat-stream-assembler.ts";
import { toModelError } from "./model-errors.ts";

export interface ChatModelOptions {
  temperature?: number;
  maxOutputTokens?: number;
  parallelToolCalls?: boolean;
}

/** Chat Completions with `stream: true` through the `openai` package, for any compatible server. */
export class OpenAIChatModel implements Model {
  readonly #client: OpenAI;
  readonly #options: ChatModelOptions;

  constructor(client: OpenAI, options: ChatModelOptions = {}) {
    this.#client = client;
    this.#options = options;
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelEvent> {
    const assembler = new ChatStreamAssembler();
    try {
      const stream = await this.#client.chat.completions.create(
        {
          model: request.model,
          messages: toChatMessages(request.instructions, request.messages),
          ...(request.tools.length
            ? {
                tools: request.tools.map(toChatTool),
                ...(this.#options.parallelToolCalls === undefined ? {} : { parallel_tool_calls: this.#options.parallelToolCalls }),
              }
            : {}),
          ...(this.#options.temperature === undefined ? {} : { temperature: this.#options.temperature }),
          ...(this.#options.maxOutputTokens === undefined ? {} : { max_completion_tokens: this.#options.maxOutputTokens }),
          stream: true,
          stream_options: { include_usage: true },
        },
        { signal: request.signal },
      );
      for await (const chunk of stream) {
        const delta = assembler.push(chunk as ChatChunk);
        if (delta) yield { type: "text-delta", delta };
      }
    } catch (error) {
      throw toModelError(error);
    }
    const { toolCalls, finishReason, usage } = assembler.result();
    for (const call of toolCalls) yield { type: "tool-call", call };
    yield usage ? { type: "finish", finishReason, usage } : { type: "finish", finishReason };
  }
}

export function toChatMessages(instructions: string, messages: readonly Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = instructions ? [{ role: "system", content: instructions }] : [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
        out.push({ role: "user", content: message.content });
        break;
      case "assistant":
        out.push({
          role: "assistant",
          content: message.content,
          ...(message.toolCalls?.length
            ? {
                tool_calls: message.toolCalls.map((call) => ({
                  id: call.id,
                  type: "function" as const,
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        });
        break;
      case "tool":
        out.push({ role: "tool", tool_call_id: message.toolCallId, content: message.content });
        break;
      case "system":
        out.push({ role: "system", content: message.content });
        break;
      default: {
        const exhaustive: never = message;
        throw new Error(`unknown message ${JSON.stringify(exhaustive)}`);
      }
    }
  }
  return out;
}

function toChatTool(spec: ToolSpec): ChatCompletionTool {
  return { type: "function", function: { name: spec.name, description: spec.description, parameters: spec.parameters } };
}
