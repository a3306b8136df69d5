/** What a tool sees of the run, and delegation: another agent run on a fresh context. */
import { type Agent, memoryAccess } from "../agent.ts";
import { spentSoFar } from "../budgets.ts";
import { RuntimeError } from "../errors.ts";
import type { ScheduledFollowUp, StartedDelegation } from "../ports/scheduler-port.ts";
import { delegateTo } from "./delegation.ts";
import type { CallContext, ToolContext, ToolFiles, ToolMemory } from "./tool.ts";
import { filesOfHistory } from "../messages.ts";
import type { RunContext, TurnState } from "../turn-state.ts";

/** States tools of one step set, by agent name: committed with the step. */
export type StateUpdates = Map<string, Record<string, unknown>>;

export function toolContext(run: RunContext, state: TurnState, agent: string, updates: StateUpdates): CallContext {
  const owner = run.options.network.get(agent);
  return {
    conversationId: run.options.conversationId,
    agent,
    signal: run.signal,
    context: state.holding.context,
    // The state as the call starts: a tool that sets it sees its own change through what it passed.
    state: updates.get(agent) ?? agentState(state, owner),
    setState: (next) => {
      if (!owner?.stateSchema) throw new TypeError(`Agent '${agent}' has no state: give it a \`state\` schema to keep one.`);
      updates.set(agent, owner.stateSchema.parse(next));
    },
    // What the turn has spent, live (this step's call and the delegations that end meanwhile): the delegated run's budgets count it.
    delegate: (delegate, request, toolCallId, asks) =>
      delegateTo(run, delegate, request, { toolCallId, asks, spent: () => spentSoFar(run, state) }),
    schedule: (request, toolCallId) => scheduleFollowUp(run, agent, request, toolCallId),
    delegateInBackground: (delegate, request, toolCallId) => startInBackground(run, agent, delegate.name, request, toolCallId),
    files: toolFiles(run, state),
    memory: toolMemory(run, owner),
  };
}

/** The user's memory as a tool reaches it: through the host's port, as far as the calling agent's declaration allows. */
function toolMemory(run: RunContext, agent: Agent | undefined): ToolMemory {
  const access = agent ? memoryAccess(agent, run.path.length > 0) : { read: false, write: false };
  const port = (need: "read" | "write") => {
    if (!run.options.memory)
      throw new RuntimeError("memory_unavailable", "This conversation has no signed-in user: nothing is remembered beyond it.");
    if (!access[need])
      throw new RuntimeError("memory_unavailable", `Agent '${agent?.name}' does not ${need} the user's memory: declare \`memory\` on it.`);
    return run.options.memory;
  };
  return {
    remember: async (text, options = {}) => {
      const source = { conversation: run.options.conversationId, ...(agent ? { agent: agent.name } : {}) };
      const memory = await port("write").remember({ text, type: options.type ?? "fact", key: options.key, source });
      const { id, type, key } = memory;
      run.nested.push({
        type: "memory",
        action: "written",
        agent: agent?.name ?? "",
        memories: [{ id, text: memory.text, type, ...(key ? { key } : {}) }],
      });
      return memory;
    },
    recall: async (query, options) => port("read").recall(query, options),
  };
}

/** The conversation's files as a tool reaches them: read by reference or by the id of one the history carries; saved through the host. */
function toolFiles(run: RunContext, state: TurnState): ToolFiles {
  const port = run.files;
  const none = () => new RuntimeError("file_not_found", "This conversation keeps no files: its host has no file store.");
  return {
    read: async (file) => {
      if (!port) throw none();
      const ref = typeof file === "string" ? filesOfHistory(state.history).find((f) => f.id === file) : file;
      if (!ref) throw new RuntimeError("file_not_found", `No file '${String(file)}' in this conversation.`);
      return port.read(ref);
    },
    save: async (file) => {
      if (!port?.save) throw none();
      return port.save(file);
    },
  };
}

/** A background delegation, through the host's schedule: it runs apart from the turn, and `agent` gets its result as a follow-up. */
function startInBackground(
  run: RunContext,
  agent: string,
  delegate: string,
  request: string,
  toolCallId: string,
): Promise<StartedDelegation> {
  const scheduler = run.options.scheduler;
  if (!scheduler?.delegate)
    throw new RuntimeError("schedule_refused", "This conversation has no schedule: nothing can run in the background here.");
  return scheduler.delegate({ agent: delegate, request, askedBy: agent, toolCallId });
}

/** A tool's follow-up, through the host's schedule: a time, or minutes from now. */
async function scheduleFollowUp(
  run: RunContext,
  agent: string,
  request: Parameters<ToolContext["schedule"]>[0],
  toolCallId: string,
): Promise<ScheduledFollowUp> {
  const scheduler = run.options.scheduler;
  if (!scheduler) throw new RuntimeError("schedule_refused", "This conversation has no schedule: follow-ups cannot be scheduled here.");
  if (typeof request.note !== "string" || !request.note.trim())
    throw new RuntimeError("schedule_refused", "A follow-up needs a note: what to do when it is due.");
  if ((request.at === undefined) === (request.inMinutes === undefined))
    throw new RuntimeError("schedule_refused", "Give a follow-up one of `at` (a time) or `inMinutes`.");
  const askedAt = Date.now();
  const at = request.at === undefined ? askedAt + request.inMinutes! * 60_000 : new Date(request.at).getTime();
  if (!Number.isFinite(at))
    throw new RuntimeError("schedule_refused", `The follow-up's time ${JSON.stringify(request.at ?? request.inMinutes)} is not a time.`);
  return scheduler.schedule({ at, askedAt, note: request.note.trim(), agent, toolCallId });
}

/** An agent's state in the turn: as stored, else the one it starts with. */
export function agentState(state: Pick<TurnState, "holding">, agent: Agent | undefined): Readonly<Record<string, unknown>> {
  return (agent && state.holding.agentStates[agent.name]) ?? agent?.initialState ?? {};
}
