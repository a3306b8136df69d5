/**
 * Scores of an eval run: routing accuracy per turn and per expected agent (precision and recall),
 * the confusion matrix, pass^k (a case passes only if all k samples pass), handoffs and refused
 * transfers per case, announced-but-unmade handoffs, tokens and cost, latency p50/p95; and the A/B
 * comparison of two runs with a 95% confidence interval of the difference.
 */
import type { EvalSample } from "./runner.ts";

/** Dollars per million tokens, by model name (or `*` for any). */
export type PriceTable = Record<string, { input: number; output: number }>;

/** How well the turns expected to end with one agent did: precision and recall. */
export interface AgentScore {
  agent: string;
  /** Turns expected to end with this agent. */
  expected: number;
  /** Turns that ended with it. */
  predicted: number;
  correct: number;
  precision: number;
  recall: number;
}

/** The scores of an eval run (see `score`). */
export interface Scores {
  cases: number;
  samples: number;
  k: number;
  /** Turns with an expected holder, and how many ended with it. */
  routing: { turns: number; correct: number; accuracy: number };
  perAgent: AgentScore[];
  /** Rows: the expected holder; columns: the actual one. */
  confusion: { labels: string[]; counts: number[][] };
  /** A case passes only if every one of its k samples passes. */
  passAtK: { passed: number; cases: number; rate: number };
  /** Samples that passed, of all. */
  passRate: number;
  handoffsPerCase: number;
  refusedPerCase: number;
  announcedHandoffs: number;
  tokens: { input: number; output: number };
  /** With a price table: dollars. */
  cost: number | null;
  latencyMs: { p50: number; p95: number };
  providerErrors: number;
}

/** Scores the samples of a run; `prices` (dollars per million tokens) gives the cost. */
export function score(samples: readonly EvalSample[], options: { prices?: PriceTable; model?: string } = {}): Scores {
  const turns = samples.flatMap((s) => s.turns);
  const routed = turns.filter((t) => t.expect?.holder !== undefined);
  const correct = routed.filter((t) => t.holder === t.expect!.holder).length;
  const labels = [...new Set(routed.flatMap((t) => [t.expect!.holder!, t.holder]))].sort();
  const counts = labels.map((row) => labels.map((column) => routed.filter((t) => t.expect!.holder === row && t.holder === column).length));
  const perAgent = labels.map((agent, i): AgentScore => {
    const expected = counts[i]!.reduce((a, b) => a + b, 0);
    const predicted = counts.reduce((sum, row) => sum + row[i]!, 0);
    const hit = counts[i]![i]!;
    return { agent, expected, predicted, correct: hit, precision: predicted ? hit / predicted : 0, recall: expected ? hit / expected : 0 };
  });
  const byCase = groupByCase(samples);
  const passed = [...byCase.values()].filter((group) => group.every((s) => s.pass)).length;
  const perCase = (measure: (s: EvalSample) => number) => mean([...byCase.values()].map((group) => mean(group.map(measure))));
  const tokens = { input: sum(turns.map((t) => t.inputTokens)), output: sum(turns.map((t) => t.outputTokens)) };
  const price = options.prices && (options.prices[options.model ?? ""] ?? options.prices["*"]);
  const latencies = turns.map((t) => t.latencyMs).sort((a, b) => a - b);
  return {
    cases: byCase.size,
    samples: samples.length,
    k: byCase.size ? samples.length / byCase.size : 0,
    routing: { turns: routed.length, correct, accuracy: routed.length ? correct / routed.length : 0 },
    perAgent,
    confusion: { labels, counts },
    passAtK: { passed, cases: byCase.size, rate: byCase.size ? passed / byCase.size : 0 },
    passRate: samples.length ? samples.filter((s) => s.pass).length / samples.length : 0,
    handoffsPerCase: perCase((s) => sum(s.turns.map((t) => t.handoffs))),
    refusedPerCase: perCase((s) => sum(s.turns.map((t) => t.refused))),
    announcedHandoffs: sum(turns.map((t) => t.announced)),
    tokens,
    cost: price ? (tokens.input * price.input + tokens.output * price.output) / 1_000_000 : null,
    latencyMs: { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95) },
    providerErrors: samples.filter((s) => s.error).length,
  };
}

/** Two runs of the same cases compared: routing accuracy of each, the difference and its 95% interval. */
export interface Comparison {
  a: number;
  b: number;
  /** b − a, in routing accuracy over the cases both ran. */
  difference: number;
  /** The 95% interval of the difference (paired over cases, normal approximation). */
  interval: [number, number];
  /** Whether the interval leaves out zero: a difference unlikely to be noise. */
  significant: boolean;
  cases: number;
}

/** Routing accuracy of two runs of the same cases, paired by case. */
export function compare(a: readonly EvalSample[], b: readonly EvalSample[]): Comparison {
  const accuracyByCase = (samples: readonly EvalSample[]) =>
    new Map(
      [...groupByCase(samples)].map(([id, group]) => {
        const routed = group.flatMap((s) => s.turns).filter((t) => t.expect?.holder !== undefined);
        return [id, routed.length ? routed.filter((t) => t.holder === t.expect!.holder).length / routed.length : Number.NaN];
      }),
    );
  const left = accuracyByCase(a);
  const right = accuracyByCase(b);
  const pairs = [...left].flatMap(([id, x]) =>
    right.has(id) && !Number.isNaN(x) && !Number.isNaN(right.get(id)!) ? [[x, right.get(id)!]] : [],
  );
  const diffs = pairs.map(([x, y]) => y! - x!);
  const difference = mean(diffs);
  const sd = Math.sqrt(diffs.length > 1 ? sum(diffs.map((d) => (d - difference) ** 2)) / (diffs.length - 1) : 0);
  const half = diffs.length ? (1.96 * sd) / Math.sqrt(diffs.length) : 0;
  const interval: [number, number] = [difference - half, difference + half];
  return {
    a: mean(pairs.map(([x]) => x!)),
    b: mean(pairs.map(([, y]) => y!)),
    difference,
    interval,
    significant: interval[0] > 0 || interval[1] < 0,
    cases: pairs.length,
  };
}

function groupByCase(samples: readonly EvalSample[]): Map<string, EvalSample[]> {
  const groups = new Map<string, EvalSample[]>();
  for (const s of samples) groups.set(s.caseId, [...(groups.get(s.caseId) ?? []), s]);
  return groups;
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const mean = (values: readonly number[]) => (values.length ? sum(values) / values.length : 0);
function quantile(sorted: readonly number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0;
}
