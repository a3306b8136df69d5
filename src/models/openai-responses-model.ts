import type OpenAI from "openai";
import type { Stream } from "openai/streaming";
import type {
  FunctionTool,
  ResponseCreateParamsStreaming,
  ResponseInputContent,
  ResponseInputItem,
} from "openai/resources/responses/responses";
import type { FileRef, Message } from "../runtime/messages.ts";
import { type DataUrlOf, dataUrlText, describe, type FileContent, imageUrl, readRequestFiles } from "./file-parts.ts";
import { postStreaming } from "./spliced-json.ts";
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
    async (signal) => {
      const files = await readRequestFiles(request);
      const body = (dataUrl: DataUrlOf): ResponseCreateParamsStreaming => ({
        model: request.model,
        input: toResponsesInput(request.instructions, request.messages, files, dataUrl),
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
      });
      return postStreaming<Stream<unknown>>(client, "/responses", body, { signal, fetchOptions: defaults.fetchOptions });
    },
    new ResponsesStreamAssembler(),
    { signal: request.signal, idleTimeoutMs: settings.idleTimeoutMs, missing: "no response.completed event arrived", log: defaults.log },
  );
}

/**
 * The history as Responses API input items, the instructions first as a developer message; a user's files as
 * `input_image`, `input_file` or `input_text` parts after their text (`files`: what `readRequestFiles` read; `dataUrl`: how
 * their bytes are written, whole by default).
 */
export function toResponsesInput(
  instructions: string,
  messages: readonly Message[],
  files: ReadonlyMap<string, FileContent> = new Map(),
  dataUrl: DataUrlOf = dataUrlText,
): ResponseInputItem[] {
  const input: ResponseInputItem[] = instructions ? [{ role: "developer", content: instructions }] : [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
        input.push({
          role: "user",
          content: message.files?.length ? userParts(message.content, message.files, files, dataUrl) : message.content,
        });
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

/** A user's text and files as Responses input parts. */
function userParts(
  text: string,
  refs: readonly FileRef[],
  files: ReadonlyMap<string, FileContent>,
  dataUrl: DataUrlOf,
): ResponseInputContent[] {
  const parts: ResponseInputContent[] = text ? [{ type: "input_text", text }] : [];
  for (const ref of refs) {
    const file = files.get(ref.id) ?? { kind: "text", file: ref, text: describe(ref) };
    if (file.kind === "image") parts.push({ type: "input_image", image_url: imageUrl(file.url, dataUrl), detail: "auto" });
    else if (file.kind === "pdf") parts.push({ type: "input_file", filename: ref.name, file_data: dataUrl(file.data) });
    else parts.push({ type: "input_text", text: file.text });
  }
  return parts;
}

function toFunctionTool(spec: ToolSpec): FunctionTool {
  return { type: "function", name: spec.name, description: spec.description, parameters: spec.parameters, strict: false };
}
