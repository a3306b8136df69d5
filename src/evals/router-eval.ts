/**
 * A router in the evals: trained on the cases' first messages and expected holders
 * (`handoff-eval train`), measured on its own (router-only accuracy, and the share routed and the
 * accuracy of those routed at each threshold); a run with it on the entry agent (`withRouter`) is
 * router-then-model, and the turns it routed are found in their traces.
 */
import { LexicalRouter, type RouterExample } from "../router/lexical-router.ts";
import type { EvalCase } from "./cases.ts";
import type { EvalSample } from "./runner.ts";

/** Each case's first user message, labelled with the holder it expects (cases without one are left out). */
export function routerExamplesOf(cases: readonly EvalCase[]): RouterExample[] {
  return cases.flatMap((c) => {
    const first = c.turns[0]!;
    return first.expect?.holder ? [{ text: first.user, label: first.expect.holder }] : [];
  });
}

/** The router alone on the cases: its accuracy, and at each threshold the share it routes and their accuracy. */
export function routerTable(router: LexicalRouter, cases: readonly EvalCase[], thresholds = [0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98]): string {
  const routes = routerExamplesOf(cases).map((e) => ({ route: router.route(e.text), want: e.label }));
  const pct = (n: number, of: number) => `${((n / Math.max(1, of)) * 100).toFixed(1)} %`;
  const right = routes.filter((r) => r.route.label === r.want).length;
  const rows = thresholds.map((t) => {
    const routed = routes.filter((r) => r.route.confidence >= t);
    return `| ${t} | ${pct(routed.length, routes.length)} | ${pct(routed.filter((r) => r.route.label === r.want).length, routed.length)} |`;
  });
  return [
    `router alone: ${pct(right, routes.length)} of ${routes.length} first messages to the expected holder`,
    "",
    "| threshold | routed with no model call | accuracy of those routed |",
    "|---|---|---|",
    ...rows,
  ].join("\n");
}

/** First turns the router handed on itself (their trace has the router's span), of all samples. */
export function routedFirstTurns(samples: readonly EvalSample[]): { routed: number; of: number } {
  const routed = samples.filter((s) => s.turns[0]?.trace.spans.some((span) => span.attributes["router.name"] !== undefined)).length;
  return { routed, of: samples.length };
}
