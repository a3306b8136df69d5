/**
 * Runs eval cases against a network: each case k times, at most `concurrency` samples at once, the
 * loop with an in-memory store (the package's `MemoryStore`), a sample retried when the provider
 * fails (rate limits, outages, timeouts). What each turn did is measured from its events.
 */
import { newHolding } from "../runtime/holding.ts";
import type { McpPort } from "../runtime/ports/mcp-port.ts";
import type { Message } from "../runtime/messages.ts";
import type { Model } from "../runtime/ports/model-port.ts";
import type { Network } from "../runtime/network.ts";
import { runTurn } from "../runtime/run-loop.ts";
import { MemoryStore } from "../testing/memory-store.ts";
import type { RunEvent, TurnOutcome } from "../runtime/events.ts";
import { TraceBuilder, type TurnTrace } from "../traces/turn-trace.ts";
import type { EvalCase, TurnExpectation } from "./cases.ts";

/** What one turn of a sample did, measured from its events, and what of its expectation failed. */
export interface EvalTurn {
  user: string;
  expect?: TurnExpectation | undefined;
  /** Who holds the conversation after the turn. */
  holder: string;
  /** Agents the turn handed to, in order. */
  reached: string[];
  calls: string[];
  handoffs: number;
  refused: number;
  /** Answers that announced a handoff they did not make. */
  announced: number;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  /** What failed of the expectation (empty when it held). */
  failures: string[];
  /** The turn's trace, by the trace builder the Worker exports from: the agents, model calls, tools and handoffs in time. */
  trace: TurnTrace;
}

/** One run of one case: its turns, whether every expectation held, its handoff path and transcript. */
export interface EvalSample {
  caseId: string;
  sample: number;
  tags: string[];
  turns: EvalTurn[];
  pass: boolean;
  /** Every holder, from the first, through each handoff. */
  path: string[];
  transcript: Message[];
  /** A provider failure that outlived the retries. */
  error?: string;
}

/** What `runEval` runs: the network, the model, the cases, and how (k samples, concurrency, retries). */
export interface EvalOptions {
  network: Network;
  model: Model;
  cases: readonly EvalCase[];
  /** Samples per case (pass^k needs all of them to pass). */
  k?: number;
  concurrency?: number;
  /** Tries again after a provider failure, this many times. */
  retries?: number;
  mcp?: McpPort;
  onProgress?: (done: number, total: number) => void;
}

const PROVIDER_FAILURES = new Set(["model_rate_limited", "model_unavailable", "model_timeout", "model_stream_interrupted", "model_error"]);

/** Runs every case k times and answers each sample, in the order of the cases. */
export async function runEval(options: EvalOptions): Promise<EvalSample[]> {
  const k = options.k ?? 1;
  const jobs = options.cases.flatMap((c) => Array.from({ length: k }, (_, sample) => ({ c, sample })));
  const results: EvalSample[] = new Array(jobs.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const index = next++;
      const { c, sample } = jobs[index]!;
      results[index] = await withRetries(() => runSample(options, c, sample), options.retries ?? 2);
      options.onProgress?.(++done, jobs.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 4) }, worker));
  return results;
}

async function withRetries(run: () => Promise<EvalSample>, retries: number): Promise<EvalSample> {
  let result = await run();
  for (let attempt = 1; attempt <= retries && result.error; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
    result = await run();
  }
  return result;
}

async function runSample(options: EvalOptions, c: EvalCase, sample: number): Promise<EvalSample> {
  const { network } = options;
  const store = new MemoryStore(network.entry.name);
  if (c.holder) store.holding = newHolding(c.holder);
  store.history = (c.history ?? []).map((m) => ({ ...m }));
  const turns: EvalTurn[] = [];
  let error: string | undefined;
  for (const [index, turn] of c.turns.entries()) {
    const measured = await runOneTurn(options, store, `${c.id}#${sample}`, turn.user, index + 1);
    if (measured.providerError) {
      error = measured.providerError;
      break;
    }
    const failures = turn.expect ? check(turn.expect, measured.turn) : [];
    turns.push({ ...measured.turn, user: turn.user, expect: turn.expect, failures });
  }
  const path = [c.holder ?? network.entry.name, ...turns.flatMap((t) => t.reached)];
  return {
    caseId: c.id,
    sample,
    tags: c.tags ?? [],
    turns,
    pass: !error && turns.every((t) => t.failures.length === 0),
    path,
    transcript: store.history,
    ...(error ? { error } : {}),
  };
}

async function runOneTurn(
  options: EvalOptions,
  store: MemoryStore,
  conversationId: string,
  text: string,
  turnNumber: number,
): Promise<{ turn: Omit<EvalTurn, "user" | "expect" | "failures">; providerError?: string }> {
  const start = performance.now();
  const all: RunEvent[] = [];
  const tracer = new TraceBuilder(turnNumber);
  for await (const event of runTurn({
    conversationId,
    network: options.network,
    model: options.model,
    store,
    ...(options.mcp ? { mcp: options.mcp } : {}),
    conversation: store.conversation(),
    input: { kind: "message", text },
  })) {
    all.push(event);
    tracer.record(event, Date.now());
  }
  const failed = all.find((e) => e.type === "error");
  const done = all.find((e) => e.type === "done");
  const turn = {
    holder: store.holding.activeAgent,
    reached: all.flatMap((e) => (e.type === "handoff" ? [e.to] : [])),
    calls: all.flatMap((e) => (e.type === "tool-call" && e.plan === "tool" ? [e.name] : [])),
    handoffs: all.filter((e) => e.type === "handoff").length,
    refused: all.filter((e) => e.type === "tool-call" && e.plan === "refused-handoff").length,
    announced: all.filter((e) => e.type === "warning" && e.code === "handoff_announced_not_made").length,
    inputTokens: done?.type === "done" ? (done.usage?.inputTokens ?? 0) : 0,
    outputTokens: done?.type === "done" ? (done.usage?.outputTokens ?? 0) : 0,
    latencyMs: performance.now() - start,
    trace: tracer.finish(turnNumber, outcome(failed, done), Date.now()),
  };
  return failed?.type === "error" && PROVIDER_FAILURES.has(failed.code)
    ? { turn, providerError: `${failed.code}: ${failed.message}` }
    : { turn };
}

function outcome(failed: RunEvent | undefined, done: RunEvent | undefined): TurnOutcome {
  if (failed?.type === "error") return { status: "failed", code: failed.code };
  return { status: done?.type === "done" ? done.status : "completed" };
}

/** What of the expectation did not hold. */
export function check(expect: TurnExpectation, turn: Pick<EvalTurn, "holder" | "calls" | "handoffs" | "reached">): string[] {
  const failures: string[] = [];
  if (expect.holder !== undefined && turn.holder !== expect.holder) failures.push(`held by ${turn.holder}, expected ${expect.holder}`);
  for (const name of expect.calls ?? []) if (!turn.calls.includes(name)) failures.push(`${name} was not called`);
  for (const name of expect.notCalls ?? []) if (turn.calls.includes(name)) failures.push(`${name} was called`);
  if (expect.maxHandoffs !== undefined && turn.handoffs > expect.maxHandoffs)
    failures.push(`${turn.handoffs} handoffs, at most ${expect.maxHandoffs} expected`);
  for (const name of expect.notReached ?? []) if (turn.reached.includes(name)) failures.push(`${name} was reached`);
  return failures;
}
