import { findHistoryProblem } from "../runtime/messages.ts";
import type { Limits } from "../runtime/limits.ts";
import type { McpPort } from "../runtime/ports/mcp-port.ts";
import type { Network } from "../runtime/network.ts";
import type { RemotePort } from "../runtime/ports/remote-port.ts";
import type { FilePort } from "../runtime/ports/files-port.ts";
import type { RunEvent, TurnOutcome } from "../runtime/events.ts";
import { runTurn } from "../runtime/run-loop.ts";
import type { TurnInput } from "../runtime/run-options.ts";
import type { Scheduler } from "../runtime/ports/scheduler-port.ts";
import type { Suspension } from "../runtime/wait/suspension.ts";
import { MemoryStore } from "./memory-store.ts";
import { type ScriptStep, ScriptedModel } from "./scripted-model.ts";

/**
 * What a scripted turn produced: its events, its outcome, the model (with the requests it was sent)
 * and the store after it; `status` is the outcome's, and when it is `awaiting_approval` the result
 * has the `suspension` (typed so: no `!`), null otherwise — resume with
 * `{ kind: "resume", suspension, decisions }` and the same `store`.
 */
export type ScriptedTurn = {
  events: RunEvent[];
  outcome: TurnOutcome;
  model: ScriptedModel;
  store: MemoryStore;
} & (
  | { status: "awaiting_approval" | "awaiting_input"; suspension: Suspension }
  | { status: Exclude<TurnOutcome["status"], "awaiting_approval" | "awaiting_input">; suspension: null }
);

/**
 * Runs one turn of a network against a script, the way a host would, and checks what must hold
 * after any turn: every script step was played, the stored history is valid (every tool call
 * answered, in order), and exactly one `done` or `error` ended it. Pass the store of an earlier
 * turn to continue that conversation, an `mcp` port (`McpConnections`) for agents with MCP servers,
 * a `scheduler` for tools that schedule follow-ups (`followUpTool()`, `ctx.schedule`), a
 * `remote` port for networks with remote agents (`remoteAgent`), and `files` (`MemoryFiles`) for
 * messages that carry files and tools that read or save them.
 */
export async function runScripted(
  network: Network,
  input: string | TurnInput,
  script: ScriptStep[],
  options: {
    store?: MemoryStore;
    limits?: Partial<Limits>;
    conversationId?: string;
    mcp?: McpPort;
    scheduler?: Scheduler;
    remote?: RemotePort;
    files?: FilePort;
  } = {},
): Promise<ScriptedTurn> {
  const model = new ScriptedModel(script);
  const store = options.store ?? new MemoryStore(network.entry.name);
  const events: RunEvent[] = [];
  const turn = runTurn({
    conversationId: options.conversationId ?? "c1",
    network,
    model,
    store,
    ...(options.mcp ? { mcp: options.mcp } : {}),
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    ...(options.remote ? { remote: options.remote } : {}),
    ...(options.files ? { files: options.files } : {}),
    conversation: store.conversation(),
    input: typeof input === "string" ? { kind: "message", text: input } : input,
    ...(options.limits ? { limits: options.limits } : {}),
  });
  let next = await turn.next();
  for (; !next.done; next = await turn.next()) events.push(next.value);
  model.assertUsed();
  const problem = findHistoryProblem(store.history);
  if (problem) throw new Error(`runScripted: the stored history is invalid: ${problem}`);
  const ends = events.filter((e) => e.type === "done" || e.type === "error");
  if (ends.length !== 1 || ends[0] !== events.at(-1))
    throw new Error(`runScripted: the turn must end with exactly one done or error event; it had ${ends.length}.`);
  const outcome = next.value;
  const { status } = outcome;
  if (status !== "awaiting_approval" && status !== "awaiting_input") return { events, outcome, model, store, status, suspension: null };
  if (!store.suspension) throw new Error("runScripted: the turn waits for the user, but the store holds no suspension.");
  return { events, outcome, model, store, status, suspension: store.suspension };
}
