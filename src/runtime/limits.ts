export interface Limits {
  /** Model calls per agent in one turn; fresh after each accepted transfer (seed 001). */
  maxSteps: number;
  /** Accepted transfers in one user turn (seed 004). */
  maxHandoffsPerTurn: number;
  /** Consecutive steps whose tool results are all errors before the turn is ended. */
  maxToolErrorSteps: number;
}

export const DEFAULT_LIMITS: Limits = { maxSteps: 10, maxHandoffsPerTurn: 5, maxToolErrorSteps: 3 };
