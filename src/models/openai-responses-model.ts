import type OpenAI from "openai";
import type { FunctionTool, ResponseInputItem } from "openai/resources/responses/responses";
import type { Message } from "../runtime/messages.ts";
import type { ModelEvent, ModelRequest } from "../runtime/ports/model-port.ts";
import type { ToolSpec } from "../runtime/tools/tool.ts";
import type { ProviderDefaults } from "./provider-defaults.ts";
import { streamProviderStep } from "./provider-stream.ts";
import { ResponsesStreamAssembler } from "./responses-stream-assembler.ts";

/**
 * One step through the Responses API: the instructions lead the input as a developer
 * message, function calls and outputs keep their call_id pairing, and nothing is stored
 * server-side (`store: false`), so the Durable Object's history is the only history.
 */
export function streamResponse(client: OpenAI, defaults: ProviderDefaults, request: ModelRequest): AsyncGenerator<ModelEvent> {
  const settings = { ...defaults, ...request.settings };
  return streamProviderStep(
    (signal) =>
      client.responses.create(
        {
          model: request.model,
          input: toResponsesInput(request.instructions, request.messages),
          ...(request.tools.length
            ? {
                tools: request.tools.map(toFunctionTool),
                ...(settings.parallelToolCalls === undefined ? {} : { parallel_tool_calls: settings.parallelToolCalls }),
              }
            : {}),
          ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
          ...(settings.maxOutputTokens === undefined ? {} : { max_output_tokens: settings.maxOutputTokens }),
          ...(settings.reasoningEffort === undefined ? {} : { reasoning: { effort: settings.reasoningEffort } }),
          store: false,
          stream: true,
        },
        { signal },
      ),
    new ResponsesStreamAssembler(),
    { signal: request.signal, idleTimeoutMs: settings.idleTimeoutMs, missing: "no response.completed event arrived", log: defaults.log },
  );
}

/** The history as Responses API input items, the instructions first as a developer message. */
export function toResponsesInput(instructions: string, messages: readonly Message[]): ResponseInputItem[] {
  const input: ResponseInputItem[] = instructions ? [{ role: "developer", content: instructions }] : [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
        input.push({ role: "user", content: message.content });
        break;
      case "system":
        input.push({ role: "developer", content: message.content });
        break;
      case "assistant":
        if (message.content) input.push({ role: "assistant", content: message.content });
        for (const call of message.toolCalls ?? [])
          input.push({ type: "function_call", call_id: call.id, name: call.name, arguments: call.arguments });
        break;
      case "tool":
        input.push({ type: "function_call_output", call_id: message.toolCallId, output: message.content });
        break;
      default: {
        const exhaustive: never = message;
        throw new Error(`unknown message ${JSON.stringify(exhaustive)}`);
      }
    }
  }
  return input;
}

function toFunctionTool(spec: ToolSpec): FunctionTool {
  return { type: "function", name: spec.name, description: spec.description, parameters: spec.parameters, strict: false };
}
