import type { Agent } from "./agent.ts";
import type { Context, Loop } from "./loop-state.ts";
import { Network } from "./network.ts";
import { runTurn } from "./run-loop.ts";
import type { ToolContext } from "./tool.ts";

export function toolContext(ctx: Context, loop: Loop, agent: string): Omit<ToolContext, "toolCallId" | "idempotencyKey"> {
  return {
    conversationId: ctx.options.conversationId,
    agent,
    signal: ctx.signal,
    context: loop.context,
    delegate: (delegate, request) => delegateTo(ctx, delegate, request),
  };
}

/** Agent-as-tool: the agent runs on a fresh context with only the request; its answer comes back. */
async function delegateTo(ctx: Context, agent: Agent, request: string): Promise<string> {
  const network = new Network(agent, { defaultModel: ctx.options.network.defaultModel, transferScope: "declared" });
  let text = "";
  for await (const event of runTurn({
    conversationId: `${ctx.options.conversationId}/${agent.name}`,
    network,
    model: ctx.options.model,
    store: { commitStep: () => {} },
    history: [],
    activeAgent: agent.name,
    handoffCount: 0,
    input: { kind: "message", text: request },
    limits: ctx.limits,
    signal: ctx.signal,
  })) {
    if (event.type === "error") throw new Error(`'${agent.name}' failed: ${event.message}`);
    if (event.type === "done") text = event.status === "completed" ? event.text : `'${agent.name}' is waiting for an approval it cannot get here.`;
  }
  return text;
}

