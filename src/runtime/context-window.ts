import type { UsageTotals } from "./budgets.ts";
import { chooseCut, type Compaction, compactedView, estimateTokens, summarize } from "./compaction.ts";
import type { RunEvent } from "./events.ts";
import type { Context, Loop } from "./loop-state.ts";
import type { Message } from "./messages.ts";
import type { Network } from "./network.ts";
import type { ToolSpec } from "./tool.ts";

/** The history the active agent's model is sent: the filter of the transfer that brought it, if any. */
export function visibleHistory(network: Network, loop: Loop): readonly Message[] {
  const view = compactedView(loop.history, loop.compaction);
  const arrival = loop.lastHandoff;
  if (!arrival || arrival.to !== loop.agent.name || !network.get(arrival.from)) return view;
  const filter = network.edges(arrival.from).find((e) => e.target.name === arrival.to)?.historyFilter;
  return filter ? filter(view) : view;
}

/**
 * Compacts when the request would pass the active agent's context budget (seed 002: compaction
 * follows the active agent): turns before the kept ones are summarized, never cutting between a
 * call and its result. Returns the new compaction and what its summary calls spent.
 */
export async function* compactIfNeeded(
  ctx: Context,
  loop: Loop,
  instructions: string,
  tools: ToolSpec[] | readonly ToolSpec[],
): AsyncGenerator<RunEvent, { compaction: Compaction; usage: UsageTotals } | undefined> {
  const { network, model } = ctx.options;
  const budget = loop.agent.contextBudget ?? network.options.compaction?.contextBudget;
  if (!budget) return undefined;
  const size = (cut: number) => estimateTokens(instructions, compactedView(loop.history, { replaces: cut, summary: "x".repeat(400) }), tools) * loop.calibration;
  if (estimateTokens(instructions, visibleHistory(network, loop), tools) * loop.calibration <= budget) return undefined;
  const cut = chooseCut(loop.history, network.options.compaction?.keepTurns ?? 4, (c) => size(c) <= budget);
  const from = loop.compaction?.replaces ?? 0;
  if (cut <= from) return undefined;
  const result = await summarize(
    model,
    { agent: loop.agent.name, model: network.options.compaction?.summarizeModel ?? network.modelFor(loop.agent), settings: loop.agent.modelSettings, signal: ctx.signal },
    loop.compaction?.summary,
    loop.history.slice(from, cut),
    Math.floor(budget / 2),
  );
  ctx.signal.throwIfAborted();
  loop.compaction = { replaces: cut, summary: result.summary };
  yield { type: "compaction", agent: loop.agent.name, replaced: cut, kept: loop.history.length - cut, summaryChars: result.summary.length };
  return { compaction: loop.compaction, usage: { modelCalls: result.calls, inputTokens: result.inputTokens, outputTokens: result.outputTokens, toolCalls: 0 } };
}

