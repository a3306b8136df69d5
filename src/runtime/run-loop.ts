import type { Agent } from "./agent.ts";
import { RuntimeError, toRuntimeError } from "./errors.ts";
import type { HandoffRecord, RunEvent } from "./events.ts";
import { errorOutcome, executeToolCall, parseArguments, type ToolOutcome } from "./execute-tool-call.ts";
import { DEFAULT_LIMITS, type Limits } from "./limits.ts";
import type { Message, ToolMessage } from "./messages.ts";
import type { Network } from "./network.ts";
import { decideNextStep } from "./next-step.ts";
import { type PlannedCall, planToolCalls } from "./plan-tool-calls.ts";
import type { Model, TurnStore } from "./ports.ts";
import { streamModelCall } from "./stream-model-call.ts";

export interface RunTurnOptions {
  conversationId: string;
  network: Network;
  model: Model;
  store: TurnStore;
  /** The committed history before this turn. */
  history: readonly Message[];
  /** The agent holding the conversation; an unknown name falls back to the entry agent. */
  activeAgent: string;
  /** Accepted transfers over the conversation's life before this turn. */
  handoffCount: number;
  userMessage: string;
  limits?: Partial<Limits>;
  signal?: AbortSignal;
}

/**
 * Runs one user turn as an async generator of events; it ends with exactly one `done` or `error`.
 * Each step is committed through the store as a whole before its results are announced.
 */
export async function* runTurn(options: RunTurnOptions): AsyncGenerator<RunEvent, void> {
  try {
    yield* runSteps(options);
  } catch (error) {
    const failure = options.signal?.aborted
      ? new RuntimeError("run_aborted", "The run was cancelled.")
      : toRuntimeError(error);
    yield { type: "error", code: failure.code, message: failure.message };
  }
}

async function* runSteps(options: RunTurnOptions): AsyncGenerator<RunEvent, void> {
  const { network, model, store, conversationId } = options;
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits };
  const signal = options.signal ?? new AbortController().signal;
  let agent: Agent = network.get(options.activeAgent) ?? network.entry;
  const history: Message[] = [...options.history];
  const handoffs: HandoffRecord[] = [];
  let handoffCount = options.handoffCount;

  yield {
    type: "run-start",
    conversationId,
    agent: agent.name,
    model: model.label ?? network.modelFor(agent),
    ...(model.label ? { demo: true } : {}),
  };

  const userMessage: Message = { role: "user", content: options.userMessage };
  await store.commitStep({ messages: [userMessage], activeAgent: agent.name });
  history.push(userMessage);

  let agentSteps = 0;
  let errorSteps = 0;
  for (let stepIndex = 0; ; stepIndex++) {
    if (agentSteps >= limits.maxSteps) {
      throw new RuntimeError("max_steps", `Agent '${agent.name}' reached maxSteps (${limits.maxSteps}) in this turn.`);
    }
    yield { type: "step-start", stepIndex, agent: agent.name };
    const toolset = network.toolset(agent.name);
    const step = yield* streamModelCall(model, {
      agent: agent.name,
      model: network.modelFor(agent),
      instructions: agent.instructions,
      messages: history,
      tools: toolset.specs,
      signal,
    });
    agentSteps++;
    signal.throwIfAborted();

    const assistant: Message = {
      role: "assistant",
      agent: agent.name,
      content: step.text || null,
      ...(step.toolCalls.length ? { toolCalls: step.toolCalls } : {}),
    };
    for (const call of step.toolCalls) {
      const args = parseArguments(call.arguments);
      yield { type: "tool-call", toolCallId: call.id, name: call.name, args: args.ok ? args.value : call.arguments };
    }

    const plan = planToolCalls({ calls: step.toolCalls, toolset, handoffsThisTurn: handoffs.length, limits });
    const outcomes = await runPlan(plan, { conversationId, agent: agent.name, signal }, [...toolset.tools.keys()]);
    signal.throwIfAborted();
    const results: ToolMessage[] = plan.map((planned, i) => {
      const outcome = outcomes[i]!;
      return { role: "tool", toolCallId: planned.call.id, name: planned.call.name, content: outcome.content, isError: outcome.isError };
    });

    const transfer = plan.find((p) => p.kind === "transfer");
    const target = transfer ? network.get(transfer.to) : undefined;
    const handoff: HandoffRecord | undefined =
      transfer && target
        ? { from: agent.name, to: target.name, toolCallId: transfer.call.id, ...(transfer.reason ? { reason: transfer.reason } : {}), stepIndex }
        : undefined;

    await store.commitStep({
      messages: [assistant, ...results],
      activeAgent: target?.name ?? agent.name,
      ...(handoff ? { handoff } : {}),
    });
    history.push(assistant, ...results);

    for (const [i, planned] of plan.entries()) {
      const outcome = outcomes[i]!;
      yield { type: "tool-result", toolCallId: planned.call.id, name: planned.call.name, result: outcome.result, isError: outcome.isError };
    }
    if (handoff && target) {
      handoffs.push(handoff);
      handoffCount++;
      yield { type: "handoff", ...handoff };
      agent = target;
      agentSteps = 0;
    }
    yield {
      type: "step-finish",
      stepIndex,
      finishReason: step.finishReason,
      ...(step.usage ? { usage: step.usage } : {}),
    };

    errorSteps = countErrorSteps(errorSteps, plan, outcomes);
    const next = decideNextStep({ toolCalls: step.toolCalls.length, handoff: handoff !== undefined, errorSteps, limits });
    switch (next.kind) {
      case "final":
        yield { type: "done", status: "completed", text: step.text, agent: agent.name, handoffs, handoffCount };
        return;
      case "too-many-errors":
        throw new RuntimeError(
          "too_many_tool_errors",
          `${limits.maxToolErrorSteps} steps in a row ended with only failed tool calls; the turn was stopped.`,
        );
      case "handoff":
      case "run-again":
        break;
      default: {
        const exhaustive: never = next;
        throw new Error(`unknown decision ${JSON.stringify(exhaustive)}`);
      }
    }
  }
}

/** Runs a step's regular tools concurrently; transfers are answered without running anything. */
function runPlan(
  plan: readonly PlannedCall[],
  ctx: { conversationId: string; agent: string; signal: AbortSignal },
  availableTools: string[],
): Promise<ToolOutcome[]> {
  return Promise.all(
    plan.map(async (planned): Promise<ToolOutcome> => {
      switch (planned.kind) {
        case "tool":
          return executeToolCall(planned.call, planned.tool, ctx, availableTools);
        case "refused-transfer":
          return errorOutcome(planned.message);
        case "transfer": {
          const text = `Transferred to '${planned.to}'.${planned.reason ? ` ${planned.reason}` : ""}`;
          return { result: text, content: text, isError: false };
        }
        default: {
          const exhaustive: never = planned;
          throw new Error(`unknown plan ${JSON.stringify(exhaustive)}`);
        }
      }
    }),
  );
}

/**
 * The runaway-error guard counts steps whose tool results are all errors. Refused transfers
 * are policy verdicts, not failures: a step of only refused transfers neither counts nor resets.
 */
function countErrorSteps(previous: number, plan: readonly PlannedCall[], outcomes: readonly ToolOutcome[]): number {
  const toolOutcomes = outcomes.filter((_, i) => plan[i]!.kind === "tool");
  if (toolOutcomes.length === 0) return previous;
  return toolOutcomes.every((o) => o.isError) ? previous + 1 : 0;
}
