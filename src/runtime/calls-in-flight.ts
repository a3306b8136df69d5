/**
 * Tool calls written ahead of running: before the first tool of a step starts, the host is given
 * the step's assistant message and which of its calls start, and keeps them until the step's
 * commit. A host that dies in between answers every call of that step from this record, so the
 * history holds each call that may have had an effect, exactly once, and the model is told.
 */
import type { AssistantMessage, Message, ToolMessage } from "./messages.ts";
import { INTERRUPTED_CALL } from "./wait/suspension.ts";

/** A step's calls, written ahead of its tools. */
export interface CallsInFlight {
  /** The step's assistant message, with every call the history keeps. */
  assistant: AssistantMessage;
  /** The calls that start (the tools that run); the step's other calls never run. */
  started: string[];
}

/** The answer of a call of the step that never started (a transfer, a call waiting for approval, a blocked one). */
export const NOT_RUN_CALL = "This call was not run: the conversation's process restarted before its step was complete.";

/**
 * The messages that complete a step cut off by a crash: its assistant message, then an error
 * answer for each of its calls (interrupted for the calls that started, not run for the others).
 */
export function settleCallsInFlight(calls: CallsInFlight): { messages: Message[]; answers: ToolMessage[] } {
  const started = new Set(calls.started);
  const answers = (calls.assistant.toolCalls ?? []).map(
    (call): ToolMessage => ({
      role: "tool",
      toolCallId: call.id,
      name: call.name,
      content: started.has(call.id) ? INTERRUPTED_CALL : NOT_RUN_CALL,
      isError: true,
    }),
  );
  return { messages: [calls.assistant, ...answers], answers };
}
