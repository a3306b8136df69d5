import type OpenAI from "openai";
import { Stream } from "openai/streaming";
import type {
  ChatCompletionContentPart,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import type { FileRef, Message } from "../runtime/messages.ts";
import { type DataUrlOf, dataUrlText, describe, type FileContent, imageUrl, readRequestFiles } from "./file-parts.ts";
import { postStreaming } from "./spliced-json.ts";
import type { ModelEvent, ModelRequest, ModelSettings } from "../runtime/ports/model-port.ts";
import type { ToolSpec } from "../runtime/tools/tool.ts";
import { ChatStreamAssembler } from "./chat-stream-assembler.ts";
import { watchDoneSentinel } from "./done-sentinel.ts";
import { linkedAbort, type ProviderDefaults } from "./provider-defaults.ts";
import { streamProviderStep } from "./provider-stream.ts";

/** One step through Chat Completions with `stream: true`, for any OpenAI-compatible server. */
export function streamChatCompletion(client: OpenAI, defaults: ProviderDefaults, request: ModelRequest): AsyncGenerator<ModelEvent> {
  const settings = { ...defaults, ...request.settings };
  const assembler = new ChatStreamAssembler();
  return streamProviderStep(
    async (signal) => {
      const files = await readRequestFiles(request);
      const post = postStreaming(client, "/chat/completions", (dataUrl) => chatBody(request, settings, files, dataUrl), {
        signal,
        fetchOptions: defaults.fetchOptions,
      });
      return chunksUntilDone(await post.asResponse(), signal, assembler);
    },
    // Neither a finish reason nor `[DONE]` means the stream was cut: its half-assembled tool calls must not run.
    assembler,
    { signal: request.signal, idleTimeoutMs: settings.idleTimeoutMs, missing: "no finish reason arrived", log: defaults.log },
  );
}

function chatBody(
  request: ModelRequest,
  settings: ModelSettings,
  files: Map<string, FileContent>,
  dataUrl: DataUrlOf,
): ChatCompletionCreateParamsStreaming {
  return {
    model: request.model,
    messages: toChatMessages(request.instructions, request.messages, files, dataUrl),
    ...(request.tools.length
      ? {
          tools: request.tools.map(toChatTool),
          ...(settings.parallelToolCalls === undefined ? {} : { parallel_tool_calls: settings.parallelToolCalls }),
        }
      : {}),
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
    ...(settings.maxOutputTokens === undefined ? {} : { max_completion_tokens: settings.maxOutputTokens }),
    ...(settings.reasoningEffort === undefined ? {} : { reasoning_effort: settings.reasoningEffort }),
    stream: true,
    stream_options: { include_usage: true },
  };
}

/**
 * The answer's chunks through the `openai` package's own SSE parser, telling the assembler when
 * the provider closed the stream with `[DONE]`: a provider that sends no finish reason has still
 * finished its answer then.
 */
async function* chunksUntilDone(response: Response, signal: AbortSignal, assembler: ChatStreamAssembler): AsyncGenerator<unknown> {
  const sentinel = watchDoneSentinel(response.body ?? new ReadableStream());
  yield* Stream.fromSSEResponse<unknown>(new Response(sentinel.body, response), linkedAbort(signal));
  if (sentinel.seen) assembler.closedWithDone();
}

/**
 * The history as Chat Completions messages, the instructions first as the system message; a user's files as content
 * parts after their text (`files`: what `readRequestFiles` read; `dataUrl`: how their bytes are written, whole by default).
 */
export function toChatMessages(
  instructions: string,
  messages: readonly Message[],
  files: ReadonlyMap<string, FileContent> = new Map(),
  dataUrl: DataUrlOf = dataUrlText,
): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = instructions ? [{ role: "system", content: instructions }] : [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
        out.push({
          role: "user",
          content: message.files?.length ? userParts(message.content, message.files, files, dataUrl) : message.content,
        });
        break;
      case "system":
        out.push({ role: message.role, content: message.content });
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
      default: {
        const exhaustive: never = message;
        throw new Error(`unknown message ${JSON.stringify(exhaustive)}`);
      }
    }
  }
  return out;
}

/** A user's text and files as Chat Completions parts: `image_url` for images, `file` for PDFs, text for the rest. */
function userParts(
  text: string,
  refs: readonly FileRef[],
  files: ReadonlyMap<string, FileContent>,
  dataUrl: DataUrlOf,
): ChatCompletionContentPart[] {
  const parts: ChatCompletionContentPart[] = text ? [{ type: "text", text }] : [];
  for (const ref of refs) {
    const file = files.get(ref.id) ?? { kind: "text", file: ref, text: describe(ref) };
    if (file.kind === "image") parts.push({ type: "image_url", image_url: { url: imageUrl(file.url, dataUrl) } });
    else if (file.kind === "pdf") parts.push({ type: "file", file: { filename: ref.name, file_data: dataUrl(file.data) } });
    else parts.push({ type: "text", text: file.text });
  }
  return parts;
}

function toChatTool(spec: ToolSpec): ChatCompletionTool {
  return { type: "function", function: { name: spec.name, description: spec.description, parameters: spec.parameters } };
}
