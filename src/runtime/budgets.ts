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

/**
 * What the turn and the conversation have spent so far, as a run's budgets count it: its own steps, its delegated runs', and
 * (a delegated run) what was spent outside it, live: delegations running at once each count the others' steps.
 */
export function spentSoFar(
  run: { delegated: { usage: UsageTotals }; options: { spentOutside?: () => { turn: UsageTotals; conversation: UsageTotals } } },
  state: { progress: { usage: UsageTotals }; conversationUsage: UsageTotals },
): { turn: UsageTotals; conversation: UsageTotals } {
  const delegated = run.delegated.usage;
  const outside = run.options.spentOutside?.();
  const turn = addUsage(state.progress.usage, delegated);
  const conversation = addUsage(state.conversationUsage, delegated);
  return outside
    ? { turn: addUsage(turn, outside.turn), conversation: addUsage(conversation, outside.conversation) }
    : { turn, conversation };
}
