export interface Limits {
  /** Model calls per agent in one turn; fresh after each accepted handoff. */
  maxSteps: number;
  /** Accepted handoffs in one user turn. */
  maxHandoffsPerTurn: number;
  /** Consecutive steps whose tool results are all errors before the turn is ended. */
  maxToolErrorSteps: number;
}

export const DEFAULT_LIMITS: Limits = { maxSteps: 10, maxHandoffsPerTurn: 5, maxToolErrorSteps: 3 };
