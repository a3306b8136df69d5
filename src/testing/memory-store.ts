import {
  applyCommit,
  type CallerFrame,
  type HandoffRecord,
  type Message,
  type StepCommit,
  type Suspension,
  type TurnStore,
} from "../runtime/index.ts";

/** An in-memory store that applies commits with the function the Durable Object uses. */
export class MemoryStore implements TurnStore {
  readonly commits: StepCommit[] = [];
  history: Message[] = [];
  activeAgent: string;
  handoffCount = 0;
  suspension: Suspension | null = null;
  lastHandoff: HandoffRecord | undefined;
  context: Record<string, unknown> = {};
  /** Agents waiting for the conversation to come back. */
  callers: CallerFrame[] = [];
  /** Each agent's own state, by name. */
  agentStates: Record<string, Record<string, unknown>> = {};

  constructor(activeAgent: string) {
    this.activeAgent = activeAgent;
  }

  commitStep(commit: StepCommit): void {
    this.commits.push(structuredClone(commit));
    this.history.push(...structuredClone(commit.messages));
    const { activeAgent, handoffCount, suspension, context, callers, agentStates } = applyCommit(this, structuredClone(commit));
    Object.assign(this, { activeAgent, handoffCount, suspension, context, callers, agentStates });
    if (commit.handoff) this.lastHandoff = structuredClone(commit.handoff);
  }
}
