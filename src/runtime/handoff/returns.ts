/** Returning handoffs: the caller stack's rules, and the `return_to_<caller>` tool an on-call target is offered. */
import type { ToolSpec } from "../tools/tool.ts";
import { sanitizeAgentName } from "../tools/tool-names.ts";
import type { ReturnFrame } from "./types.ts";

/** The prefix of return tools: `return_to_<caller>`. */
export const RETURN_PREFIX = "return_to_";

/** The frame the holder can close with its return tool: the top one, when it is on-call and names the holder. */
export function openReturn(callers: readonly ReturnFrame[], holder: string): ReturnFrame | undefined {
  const top = callers.at(-1);
  return top && top.mode === "on-call" && top.callee === holder ? top : undefined;
}

/** The frame the holder's final answer closes: the top one, when it is on-answer and names the holder. */
export function answerReturn(callers: readonly ReturnFrame[], holder: string): ReturnFrame | undefined {
  const top = callers.at(-1);
  return top && top.mode === "on-answer" && top.callee === holder ? top : undefined;
}

/** The return tool's name for a caller, folded like transfer tool names. */
export function returnToolName(caller: string): string {
  return `${RETURN_PREFIX}${sanitizeAgentName(caller)}`.slice(0, 64);
}

/** The return tool as the model sees it: a required summary, which the caller finds in the history. */
export function returnToolSpec(frame: ReturnFrame): ToolSpec {
  return {
    name: returnToolName(frame.caller),
    description: `Give the conversation back to '${frame.caller}', which handed it to you, once your part is done. Say in the summary what you found or did: '${frame.caller}' reads it and carries on.`,
    parameters: {
      type: "object",
      properties: {
        summary: { type: "string", minLength: 1, description: "What you found or did, for the agent that takes the conversation back." },
      },
      required: ["summary"],
      additionalProperties: false,
    },
  };
}
