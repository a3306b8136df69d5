import { RuntimeError } from "./errors.ts";
import { addUsage, type UsageTotals } from "./usage.ts";

/** Limits on model calls, tokens and tool calls; absent ones are unlimited. */
export type BudgetLimits = Partial<UsageTotals>;

/** Spending limits that protect whoever pays, per turn and over the conversation's life. */
export interface Budgets {
  perTurn?: BudgetLimits;
  perConversation?: BudgetLimits;
}

/**
 * Throws `budget_exceeded`, naming the budget, when spending `next` on top of what the turn and
 * the conversation have spent would pass a limit. Tokens are known only after a call, so a token
 * budget stops the next call once it has been reached.
 */
export function checkBudgets(budgets: Budgets | undefined, turn: UsageTotals, conversation: UsageTotals, next: Partial<UsageTotals>): void {
  if (!budgets) return;
  for (const [scope, limits, spent] of [
    ["perTurn", budgets.perTurn, turn],
    ["perConversation", budgets.perConversation, conversation],
  ] as const) {
    for (const key of ["modelCalls", "toolCalls", "inputTokens", "outputTokens"] as const) {
      const limit = limits?.[key];
      if (limit === undefined) continue;
      const after = spent[key] + (next[key] ?? 0);
      const over = key === "modelCalls" || key === "toolCalls" ? after > limit : spent[key] >= limit && (next.modelCalls ?? 0) > 0;
      if (over) {
        throw new RuntimeError(
          "budget_exceeded",
          `The ${scope}.${key} budget (${limit}) would be exceeded (${spent[key]} spent); the turn was stopped.`,
        );
      }
    }
  }
}

/** What the turn and the conversation have spent so far, as a run's budgets count it: its own steps and its delegated runs'. */
export function spentSoFar(
  run: { delegated: { usage: UsageTotals } },
  state: { progress: { usage: UsageTotals }; conversationUsage: UsageTotals },
): { turn: UsageTotals; conversation: UsageTotals } {
  const delegated = run.delegated.usage;
  return { turn: addUsage(state.progress.usage, delegated), conversation: addUsage(state.conversationUsage, delegated) };
}

/** The budgets a delegated run is held to: the turn's left over after what it has spent, and the conversation's as they are. */
export function remainingBudgets(budgets: Budgets | undefined, turnSpent: UsageTotals): Budgets | undefined {
  if (!budgets?.perTurn) return budgets;
  const left = Object.fromEntries(
    Object.entries(budgets.perTurn).map(([key, limit]) => [key, Math.max(0, (limit as number) - turnSpent[key as keyof UsageTotals])]),
  );
  return { ...budgets, perTurn: left };
}
