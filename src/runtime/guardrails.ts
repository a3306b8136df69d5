/** Guardrails: caller functions that may block a turn's input, its final text, or a tool call. */

export type GuardrailVerdict = { block: true; reason: string } | { block: false } | undefined | void;

export interface GuardrailInput {
  text: string;
  agent: string;
  context: Readonly<Record<string, unknown>>;
}

export type Guardrail = (input: GuardrailInput) => GuardrailVerdict | Promise<GuardrailVerdict>;

export interface ToolCallInput {
  name: string;
  args: unknown;
  agent: string;
}

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
      return `the guardrail failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  return null;
}
