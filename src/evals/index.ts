/**
 * @module
 * `handoff-runtime/evals`: know whether a network routes right. Cases are JSONL (`parseCases`);
 * `runEval` runs each k times against a model (the loop, an in-memory store); `score` and
 * `compare` give routing accuracy, the confusion matrix, pass^k, handoffs, tokens, cost and
 * latency, and the A/B difference with its interval; `scoreTable` and `htmlReport` show them.
 * The `handoff-eval` command runs all of it from the terminal.
 */
export { EvalCase, parseCases, type ParsedCases, TurnExpectation } from "./cases.ts";
export { check, type EvalOptions, type EvalSample, type EvalTurn, runEval } from "./runner.ts";
export { type AgentScore, type Comparison, compare, type PriceTable, type Scores, score } from "./scores.ts";
export { htmlReport, scoreTable } from "./report.ts";
export { routedFirstTurns, routerExamplesOf, routerTable } from "./router-eval.ts";
export {
  LexicalRouter,
  type LexicalRoute,
  type LexicalRouterModel,
  lexicalRouter,
  type RouterExample,
  type TrainOptions,
  trainLexicalRouter,
  withRouter,
} from "../router/index.ts";
export type { Span, SpanKind, TurnTrace } from "../traces/turn-trace.ts";
export { DemoModel } from "../agents/demo-model.ts";
// Every type of the run loop, as `handoff-runtime` exports them: the types this entry's signatures use among them.
export type * from "../runtime/index.ts";
