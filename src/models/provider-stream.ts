import type { ModelEvent } from "../runtime/ports/model-port.ts";
import { errorMessage, RuntimeError } from "../runtime/errors.ts";
import type { ToolCall } from "../runtime/messages.ts";
import type { Usage } from "../runtime/usage.ts";
import { APIError } from "openai";
import { type ProviderLog, providerCode, toModelError } from "./model-errors.ts";
import { linkedAbort } from "./provider-defaults.ts";
import type { ProviderFailure } from "./responses-stream-assembler.ts";
import { guardIdle, interrupted } from "./stream-guard.ts";

/** What both APIs' assemblers offer: text from each event, then the whole step. */
export interface StreamAssembler {
  push(event: never): string;
  readonly finished: boolean;
  readonly failure?: ProviderFailure | undefined;
  result(): { toolCalls: ToolCall[]; finishReason: string; usage?: Usage };
}

/**
 * One provider step, the same for Chat Completions and Responses: open the stream (failures before
 * the first byte are the client's to retry), forward text as it arrives, fail a stalled or cut
 * stream, and only then hand out the assembled tool calls, so no half-assembled call ever runs.
 */
export async function* streamProviderStep(
  open: (signal: AbortSignal) => Promise<AsyncIterable<unknown>>,
  assembler: StreamAssembler,
  options: { signal: AbortSignal; idleTimeoutMs: number; missing: string; log?: ProviderLog | undefined },
): AsyncGenerator<ModelEvent> {
  const controller = linkedAbort(options.signal);
  let stream: AsyncIterable<unknown>;
  try {
    stream = await open(controller.signal);
  } catch (error) {
    throw toModelError(error, options.log);
  }
  try {
    for await (const event of guardIdle(stream, options.idleTimeoutMs, () => controller.abort())) {
      const delta = assembler.push(event as never);
      if (delta) yield { type: "text-delta", delta };
    }
  } catch (error) {
    throw failedMidStream(error, options);
  }
  if (assembler.failure) {
    const code = providerCode(assembler.failure);
    options.log?.(`model provider failed the response${code ? ` (${code})` : ""}: ${assembler.failure.message.slice(0, 500)}`);
    throw interrupted(`the provider reported a failure${code ? ` (${code})` : ""}`);
  }
  // The client ends an aborted stream quietly: tell a cancellation apart from a cut stream.
  if (options.signal.aborted) throw new RuntimeError("run_aborted", "The model call was cancelled.");
  if (!assembler.finished) throw interrupted(options.missing);
  const { toolCalls, finishReason, usage } = assembler.result();
  for (const call of toolCalls) yield { type: "tool-call", call };
  yield usage ? { type: "finish", finishReason, usage } : { type: "finish", finishReason };
}

/**
 * After the first byte nothing is retried: a failure is an interruption, a timeout, or a
 * cancellation. What the provider or the connection said goes to the log, never to the client.
 */
function failedMidStream(error: unknown, options: { signal: AbortSignal; log?: ProviderLog | undefined }): RuntimeError {
  if (error instanceof RuntimeError) return error;
  if (options.signal.aborted) return new RuntimeError("run_aborted", "The model call was cancelled.", { cause: error });
  if (error instanceof APIError) return toModelError(error, options.log);
  options.log?.(`model stream failed: ${errorMessage(error)}`);
  return interrupted("the connection to the provider was lost");
}
