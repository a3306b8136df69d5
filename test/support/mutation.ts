import { inject } from "vitest";

/**
 * Whether StrykerJS runs this suite (its vitest runner provides `mode`: a dry run, or a mutant's run).
 * A test that takes tens of seconds by design (one that counts 600 turns) is left out of mutation
 * runs: every mutant its lines reach that survives would run it again.
 */
export const underMutation = (): boolean => inject("mode") !== undefined;
