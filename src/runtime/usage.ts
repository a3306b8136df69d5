/** What model calls and tools spend, per step, per turn and over a conversation. */

/** Tokens one model call reported. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** What a turn or a conversation has spent. */
export interface UsageTotals {
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  toolCalls: number;
}

/** Nothing spent. */
export const NO_USAGE: UsageTotals = { modelCalls: 0, inputTokens: 0, outputTokens: 0, toolCalls: 0 };

/** Totals plus what a step spent. */
export function addUsage(totals: UsageTotals, step: Partial<UsageTotals>): UsageTotals {
  return {
    modelCalls: totals.modelCalls + (step.modelCalls ?? 0),
    inputTokens: totals.inputTokens + (step.inputTokens ?? 0),
    outputTokens: totals.outputTokens + (step.outputTokens ?? 0),
    toolCalls: totals.toolCalls + (step.toolCalls ?? 0),
  };
}

/** Totals less what part of them was. */
export function subtractUsage(totals: UsageTotals, part: UsageTotals): UsageTotals {
  return {
    modelCalls: totals.modelCalls - part.modelCalls,
    inputTokens: totals.inputTokens - part.inputTokens,
    outputTokens: totals.outputTokens - part.outputTokens,
    toolCalls: totals.toolCalls - part.toolCalls,
  };
}

export function modelCallUsage(usage: Usage | undefined): Partial<UsageTotals> {
  return { modelCalls: 1, inputTokens: usage?.inputTokens ?? 0, outputTokens: usage?.outputTokens ?? 0 };
}
