/** What the active agent's model is sent: the compacted history, through the filter of the handoff that brought it. */
import { chooseCut, type Compaction, compactedView, estimateTokens, summarize } from "./compaction.ts";
import type { RunEvent } from "./events.ts";
import { arrivalFilter, keepLatestImages } from "./handoff/history-filter.ts";
import type { Message } from "./messages.ts";
import type { Network } from "./network.ts";
import type { ToolSpec } from "./tools/tool.ts";
import type { RunContext, TurnState } from "./turn-state.ts";
import type { UsageTotals } from "./usage.ts";

export function visibleHistory(
  network: Network,
  state: Pick<TurnState, "agent" | "history" | "lastHandoff" | "compaction">,
): readonly Message[] {
  const view = compactedView(state.history, state.compaction);
  const filter = arrivalFilter(network, state.agent, state.lastHandoff);
  const filtered = filter ? filter(view) : view;
  const { imagesSent } = network.options;
  return imagesSent === undefined ? filtered : keepLatestImages(imagesSent)(filtered);
}

/** A new compaction, what its summary calls spent, and its event. */
export interface CompactionResult {
  compaction: Compaction;
  usage: UsageTotals;
  event: Extract<RunEvent, { type: "compaction" }>;
}

/**
 * Compacts when the request would pass the active agent's context budget (compaction follows the
 * active agent): turns before the kept ones are summarized, never cutting between a call and its
 * result. Undefined when the request fits or nothing more can be cut.
 */
export async function compactIfNeeded(
  run: RunContext,
  state: TurnState,
  instructions: string,
  tools: readonly ToolSpec[],
): Promise<CompactionResult | undefined> {
  const { network, model } = run.options;
  const budget = state.agent.contextBudget ?? network.options.compaction?.contextBudget;
  if (!budget) return undefined;
  const size = (cut: number) =>
    estimateTokens(instructions, compactedView(state.history, { replaces: cut, summary: "x".repeat(400) }), tools) * state.calibration;
  if (estimateTokens(instructions, visibleHistory(network, state), tools) * state.calibration <= budget) return undefined;
  const cut = chooseCut(state.history, network.options.compaction?.keepTurns ?? 4, (c) => size(c) <= budget);
  const from = state.compaction?.replaces ?? 0;
  if (cut <= from) return undefined;
  const result = await summarize(
    model,
    {
      agent: state.agent.name,
      model: network.options.compaction?.summarizeModel ?? network.modelFor(state.agent),
      settings: state.agent.modelSettings,
      signal: run.signal,
    },
    state.compaction?.summary,
    state.history.slice(from, cut),
    Math.floor(budget / 2),
  );
  run.signal.throwIfAborted();
  const compaction = { replaces: cut, summary: result.summary };
  return {
    compaction,
    usage: { modelCalls: result.calls, inputTokens: result.inputTokens, outputTokens: result.outputTokens, toolCalls: 0 },
    event: {
      type: "compaction",
      agent: state.agent.name,
      replaced: cut,
      kept: state.history.length - cut,
      summaryChars: result.summary.length,
    },
  };
}
