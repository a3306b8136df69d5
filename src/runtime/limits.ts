/** Per-turn limits of the loop; `runTurn` takes any of them, the rest are DEFAULT_LIMITS. */
export interface Limits {
  /** Model calls per agent in one turn; fresh after each accepted handoff. */
  maxSteps: number;
  /** Accepted handoffs in one user turn. */
  maxHandoffsPerTurn: number;
  /** Consecutive steps whose tool results are all errors before the turn is ended. */
  maxToolErrorSteps: number;
  /** Agents waiting for the conversation to come back (the caller stack's depth); a returning handoff past it is refused. */
  maxReturnDepth: number;
}

/** The limits a turn runs under unless told otherwise. */
export const DEFAULT_LIMITS: Limits = { maxSteps: 10, maxHandoffsPerTurn: 5, maxToolErrorSteps: 3, maxReturnDepth: 8 };
