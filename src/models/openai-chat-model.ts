import type OpenAI from "openai";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { type Message, type ModelEvent, type ModelRequest, RuntimeError, type ToolSpec } from "../runtime/index.ts";
import { type ChatChunk, ChatStreamAssembler } from "./chat-stream-assembler.ts";
import { toModelError } from "./model-errors.ts";
import { linkedAbort, type ProviderDefaults } from "./provider-defaults.ts";
import { assertComplete, guardIdle, interrupted } from "./stream-guard.ts";

/** One step through Chat Completions with `stream: true`, for any OpenAI-compatible server. */
export async function* streamChatCompletion(client: OpenAI, defaults: ProviderDefaults, request: ModelRequest): AsyncGenerator<ModelEvent> {
  const settings = { ...defaults, ...request.settings };
  const controller = linkedAbort(request.signal);
  let stream: AsyncIterable<unknown>;
  try {
    stream = await client.chat.completions.create(
      {
        model: request.model,
        messages: toChatMessages(request.instructions, request.messages),
        ...(request.tools.length
          ? { tools: request.tools.map(toChatTool), ...(settings.parallelToolCalls === undefined ? {} : { parallel_tool_calls: settings.parallelToolCalls }) }
          : {}),
        ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
        ...(settings.maxOutputTokens === undefined ? {} : { max_completion_tokens: settings.maxOutputTokens }),
        ...(settings.reasoningEffort === undefined ? {} : { reasoning_effort: settings.reasoningEffort }),
        stream: true,
        stream_options: { include_usage: true },
      },
      { signal: controller.signal },
    );
  } catch (error) {
    throw toModelError(error);
  }
  const assembler = new ChatStreamAssembler();
  try {
    for await (const chunk of guardIdle(stream, settings.idleTimeoutMs, () => controller.abort())) {
      const delta = assembler.push(chunk as ChatChunk);
      if (delta) yield { type: "text-delta", delta };
    }
  } catch (error) {
    throw failedMidStream(error, request.signal);
  }
  // No finish reason: the stream was cut, and its half-assembled tool calls must not run.
  assertComplete(assembler.finished, request.signal, "no finish reason arrived");
  const { toolCalls, finishReason, usage } = assembler.result();
  for (const call of toolCalls) yield { type: "tool-call", call };
  yield usage ? { type: "finish", finishReason, usage } : { type: "finish", finishReason };
}

/** After the first byte nothing is retried: a failure is an interruption, a timeout, or a cancellation. */
export function failedMidStream(error: unknown, signal: AbortSignal): RuntimeError {
  if (error instanceof RuntimeError) return error;
  if (signal.aborted) return new RuntimeError("run_aborted", "The model call was cancelled.", { cause: error });
  return interrupted(error instanceof Error ? error.message : String(error));
}

export function toChatMessages(instructions: string, messages: readonly Message[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = instructions ? [{ role: "system", content: instructions }] : [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
      case "system":
        out.push({ role: message.role, content: message.content });
        break;
      case "assistant":
        out.push({
          role: "assistant",
          content: message.content,
          ...(message.toolCalls?.length
            ? { tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: "function" as const, function: { name: call.name, arguments: call.arguments } })) }
            : {}),
        });
        break;
      case "tool":
        out.push({ role: "tool", tool_call_id: message.toolCallId, content: message.content });
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
