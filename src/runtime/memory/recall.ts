/**
 * The user's memory in a leg: recalled once before its first step (with the user's latest message as the query), then
 * given to each agent that reads memory as a part of its instructions, never as a stored message, so it follows the user
 * through handoffs and conversations without entering any history.
 */
import { type Agent, memoryAccess } from "../agent.ts";
import { errorMessage } from "../errors.ts";
import type { RunEvent } from "../events.ts";
import type { Memory } from "../ports/memory-port.ts";
import type { RunContext, TurnState } from "../turn-state.ts";

/** Recalls into `run.memory` when the host keeps the user's memory and any agent of the network reads it. */
export async function* recallMemories(run: RunContext, state: TurnState): AsyncGenerator<RunEvent> {
  const port = run.options.memory;
  const delegated = run.path.length > 0;
  const readers = [...run.options.network.agents.values()].filter((agent) => memoryAccess(agent, delegated).read);
  if (!port || readers.length === 0) return;
  const query = state.history.findLast((m) => m.role === "user")?.content ?? "";
  try {
    const recalled = await port.recall(query);
    run.memory.recalled = recalled;
    if (recalled.length === 0) return;
    const memories = recalled.map(({ id, text, type, key }) => ({ id, text, type, ...(key ? { key } : {}) }));
    yield { type: "memory", action: "recalled", agent: state.agent.name, memories };
  } catch (error) {
    // The user's memory is a help, not a need: the turn goes on without it.
    yield { type: "warning", code: "memory_unavailable", message: `The user's memory could not be read: ${errorMessage(error)}` };
  }
}

/** The agent's instructions with what it recalls of the user, when it reads memory and anything was recalled. */
export function withRecalled(run: RunContext, agent: Agent, instructions: string): string {
  const { recalled } = run.memory;
  if (recalled.length === 0 || !memoryAccess(agent, run.path.length > 0).read) return instructions;
  return `${instructions}\n\n${memoryNote(recalled)}`;
}

/** What an agent is told it remembers: the memories in words, each with its kind, in the order recalled (best match first). */
export function memoryNote(memories: readonly Memory[]): string {
  const lines = memories.map((m) => `- (${m.type}) ${m.text}`);
  return [
    "What you remember of this user from earlier conversations (use it where it helps; do not repeat it back unasked):",
    ...lines,
  ].join("\n");
}
