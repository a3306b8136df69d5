import { RuntimeError } from "./errors.ts";
import type { Usage } from "./events.ts";

/** What a turn or a conversation has spent. */
export interface UsageTotals {
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  toolCalls: number;
}

export type BudgetLimits = Partial<UsageTotals>;

/** Spending limits that protect whoever pays, per turn and over the conversation's life. */
export interface Budgets {
  perTurn?: BudgetLimits;
  perConversation?: BudgetLimits;
}

export const NO_USAGE: UsageTotals = { modelCalls: 0, inputTokens: 0, outputTokens: 0, toolCalls: 0 };

export function addUsage(totals: UsageTotals, step: Partial<UsageTotals>): UsageTotals {
  return {
    modelCalls: totals.modelCalls + (step.modelCalls ?? 0),
    inputTokens: totals.inputTokens + (step.inputTokens ?? 0),
    outputTokens: totals.outputTokens + (step.outputTokens ?? 0),
    toolCalls: totals.toolCalls + (step.toolCalls ?? 0),
  };
}

export function modelCallUsage(usage: Usage | undefined): Partial<UsageTotals> {
  return { modelCalls: 1, inputTokens: usage?.inputTokens ?? 0, outputTokens: usage?.outputTokens ?? 0 };
}

/**
 * Throws `budget_exceeded`, naming the budget, when spending `next` on top of what the turn and
 * the conversation have spent would pass a limit. Tokens are known only after a call, so a token
 * budget stops the next call once it has been reached.
 */
export function checkBudgets(budgets: Budgets | undefined, turn: UsageTotals, conversation: UsageTotals, next: Partial<UsageTotals>): void {
  if (!budgets) return;
  for (const [scope, limits, spent] of [["perTurn", budgets.perTurn, turn], ["perConversation", budgets.perConversation, conversation]] as const) {
    for (const key of ["modelCalls", "toolCalls", "inputTokens", "outputTokens"] as const) {
      const limit = limits?.[key];
      if (limit === undefined) continue;
      const after = spent[key] + (next[key] ?? 0);
      const over = key === "modelCalls" || key === "toolCalls" ? after > limit : spent[key] >= limit && (next.modelCalls ?? 0) > 0;
      if (over) {
        throw new RuntimeError("budget_exceeded", `The ${scope}.${key} budget (${limit}) would be exceeded (${spent[key]} spent); the turn was stopped.`);
      }
    }
  }
}
