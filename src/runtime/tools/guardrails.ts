/** Guardrails: caller functions that may block a turn's input, its final text, or a tool call. */
import { errorMessage } from "../errors.ts";

/** What a guardrail answers: block with a reason, or let it through (`{ block: false }`, or nothing). */
export type GuardrailVerdict = { block: true; reason: string } | { block: false } | undefined | void;

/** What an input or output guardrail judges: the text, the agent holding the conversation, the context. */
export interface GuardrailInput {
  text: string;
  agent: string;
  context: Readonly<Record<string, unknown>>;
}

/** Judges a turn's input (the agent's `inputGuardrails`) or its final text (`outputGuardrails`); a throw blocks. */
export type Guardrail = (input: GuardrailInput) => GuardrailVerdict | Promise<GuardrailVerdict>;

/** What a tool guardrail judges: one regular tool call before the approval gate. */
export interface ToolCallInput {
  name: string;
  args: unknown;
  agent: string;
}

/** Judges one tool call (the network's `toolGuardrails`); a block answers the call with an error, a throw blocks. */
export type ToolGuardrail = (call: ToolCallInput) => GuardrailVerdict | Promise<GuardrailVerdict>;

/**
 * The first block among the guardrails, as its reason; null when all pass. A guardrail that
 * throws blocks: a check that could not run must not let the input through.
 */
export async function firstBlock<T>(
  guardrails: ReadonlyArray<(input: T) => GuardrailVerdict | Promise<GuardrailVerdict>>,
  input: T,
): Promise<string | null> {
  for (const guardrail of guardrails) {
    try {
      const verdict = await guardrail(input);
      if (verdict?.block) return verdict.reason;
    } catch (error) {
      return `the guardrail failed: ${errorMessage(error)}`;
    }
  }
  return null;
}
