/**
 * A reference model of the handoff rules, written to be obviously right rather than fast: given
 * who holds the conversation, what the turn has done so far, the limits and one step's calls in
 * the model's order, it says which transfer is taken, why each other one is refused, and who
 * holds the conversation next. The property tests hold the run loop to it after every commit.
 */

export type Refusal = "unknown" | "self" | "extra" | "turn-limit" | "life-limit" | "visited";
export type Verdict = { kind: "accepted"; target: string } | { kind: "refused"; why: Refusal };

/** What a refusal's message must say, so the model can act on it. */
export const REFUSAL_TEXT: Record<Refusal, RegExp> = {
  unknown: /is not an available transfer/,
  self: /already holds the conversation/,
  extra: /^Only one transfer per step is taken/,
  "turn-limit": /^Handoff limit \(\d+\) reached/,
  "life-limit": /^Handoff limit for this conversation \(\d+\) reached/,
  visited: /already visited in this turn/,
};

export interface ReferenceRules {
  /** The targets the holder's transfer tools offer (its enabled transfers). */
  offered(holder: string): ReadonlySet<string>;
  maxHandoffsPerTurn: number;
  maxHandoffs: number | undefined;
  allowRevisit: boolean;
}

export interface ReferenceState {
  holder: string;
  /** Accepted transfers over the conversation's life. */
  handoffCount: number;
  /** Who held the conversation when the turn began, and each accepted transfer of the turn. */
  turnStart: string;
  turnHandoffs: Array<{ from: string; to: string }>;
}

export function startTurn(state: ReferenceState): ReferenceState {
  return { ...state, turnStart: state.holder, turnHandoffs: [] };
}

/**
 * One step. `calls` lists the step's calls in order; `target` is set for a transfer call (the
 * agent it names) and absent for any other tool.
 */
export function referenceStep(
  state: ReferenceState,
  calls: ReadonlyArray<{ id: string; target?: string | undefined }>,
  rules: ReferenceRules,
): { verdicts: Map<string, Verdict>; next: ReferenceState } {
  const offered = rules.offered(state.holder);
  const visited = new Set([state.turnStart, ...state.turnHandoffs.map((h) => h.to)]);
  const verdicts = new Map<string, Verdict>();
  let taken: string | undefined;
  for (const call of calls) {
    if (call.target === undefined) continue;
    const why = refusal(call.target);
    if (why) verdicts.set(call.id, { kind: "refused", why });
    else {
      taken = call.target;
      verdicts.set(call.id, { kind: "accepted", target: call.target });
    }
  }
  if (taken === undefined) return { verdicts, next: state };
  return {
    verdicts,
    next: {
      ...state,
      holder: taken,
      handoffCount: state.handoffCount + 1,
      turnHandoffs: [...state.turnHandoffs, { from: state.holder, to: taken }],
    },
  };

  function refusal(target: string): Refusal | undefined {
    if (!offered.has(target)) return target === state.holder ? "self" : "unknown";
    if (taken !== undefined) return "extra";
    if (state.turnHandoffs.length >= rules.maxHandoffsPerTurn) return "turn-limit";
    if (rules.maxHandoffs !== undefined && state.handoffCount >= rules.maxHandoffs) return "life-limit";
    if (!rules.allowRevisit && visited.has(target)) return "visited";
    return undefined;
  }
}
