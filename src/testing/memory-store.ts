import type { CallsInFlight } from "../runtime/calls-in-flight.ts";
import type { ConversationSnapshot } from "../runtime/conversation-snapshot.ts";
import { type Holding, newHolding } from "../runtime/holding.ts";
import type { HandoffRecord } from "../runtime/handoff/types.ts";
import type { Message } from "../runtime/messages.ts";
import { applyCommit, type StepCommit, type StoredDelegation, type TurnStore } from "../runtime/ports/store-port.ts";
import type { Suspension } from "../runtime/wait/suspension.ts";

/** An in-memory store that applies commits with the function the Durable Object uses. */
export class MemoryStore implements TurnStore {
  readonly commits: StepCommit[] = [];
  history: Message[] = [];
  /** What the conversation holds: its holder, handoff count, caller stack, agents' states and context. */
  holding: Holding;
  suspension: Suspension | null = null;
  lastHandoff: HandoffRecord | undefined;
  /** Delegated agents' histories, by the path of the calls that delegated them (joined with `/`). */
  readonly delegations = new Map<string, Message[]>();
  /** The calls of the step whose tools run, written ahead of them; the step's commit clears it. */
  callsInFlight: CallsInFlight | null = null;

  constructor(activeAgent: string) {
    this.holding = newHolding(activeAgent);
  }

  recordCalls(calls: CallsInFlight): void {
    this.callsInFlight = structuredClone(calls);
  }

  commitStep(commit: StepCommit): void {
    this.callsInFlight = null;
    const copy = structuredClone(commit);
    this.commits.push(structuredClone(commit));
    this.history.push(...copy.messages);
    ({ holding: this.holding, suspension: this.suspension } = applyCommit({ holding: this.holding, suspension: this.suspension }, copy));
    if (copy.handoff) this.lastHandoff = copy.handoff;
  }

  /** Each delegated run's holding, the wait it ended in, and the asks its decisions took, by path. */
  readonly delegationRuns = new Map<string, { holding: Holding; suspension: Suspension | null; asked: number }>();

  commitDelegation(path: readonly string[], agent: string, commit: StepCommit, asked: number): void {
    const key = path.join("/");
    const copy = structuredClone(commit);
    this.delegations.set(key, [...(this.delegations.get(key) ?? []), ...copy.messages]);
    const run = this.delegationRuns.get(key) ?? { holding: newHolding(agent), suspension: null, asked };
    this.delegationRuns.set(key, { ...applyCommit(run, copy), asked });
  }

  readDelegation(path: readonly string[]): StoredDelegation | undefined {
    const key = path.join("/");
    const run = this.delegationRuns.get(key);
    if (!run) return undefined;
    const history = structuredClone(this.delegations.get(key) ?? []);
    return { conversation: { holding: run.holding, history }, suspension: structuredClone(run.suspension), asked: run.asked };
  }

  /** The conversation as a turn starts from it (`RunTurnOptions.conversation`). */
  conversation(): ConversationSnapshot {
    return { holding: this.holding, history: this.history, ...(this.lastHandoff ? { lastHandoff: this.lastHandoff } : {}) };
  }
}
