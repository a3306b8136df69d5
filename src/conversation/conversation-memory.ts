/**
 * The conversation's side of its owner's memory: the port each leg runs with (what its tools write is redacted and held
 * to the configured limits), and the reads of the conversation for memories at its natural checkpoints: when it has
 * been quiet for MEMORY_IDLE_AFTER (one schedule entry, planned at a leg's end when none is), when it is compacted,
 * when a person hands it back. One model call a read, never one a turn; an anonymous conversation has no memory.
 */
import type { Config } from "../config.ts";
import { type Duration, durationMs } from "../runtime/duration.ts";
import { errorMessage, RuntimeError } from "../runtime/errors.ts";
import type { Message } from "../runtime/messages.ts";
import type { Model } from "../runtime/ports/model-port.ts";
import type { Memory, MemoryPort, NewMemory } from "../runtime/ports/memory-port.ts";
import { extractMemories, MEMORY_AGENT } from "../runtime/memory/extraction.ts";
import type { Redactor } from "../runtime/redact.ts";
import { withMemoriesWritten } from "../traces/turn-trace.ts";
import { memoryOf } from "../memory/memory-of.ts";
import type { MemoryLimits, UserMemoryStore } from "../memory/memory-store.ts";
import type { ConversationStore } from "./storage/conversation-store.ts";

/** A read that has not answered in this long is given up (and tried again at the next checkpoint). */
const READ_TIMEOUT_MS = 60_000;

/** Messages a backend that reads conversations itself is handed at most (Agent Memory takes 500 a call). */
const INGEST_MESSAGES = 500;

export interface MemorySetup {
  env: unknown;
  config: Config;
  store: ConversationStore;
  redactor: Redactor;
  model: Model;
  /** The model a read asks (MEMORY_MODEL, else the agents'); null: no reads (`off`). */
  modelName: string | null;
  /** Turns whose trace is kept: a read adds what it kept to its latest turn's. */
  keepTraces: number;
  log: (message: string) => void;
}

export class ConversationMemory {
  readonly #setup: MemorySetup;
  readonly #limits: MemoryLimits;
  /** The read under way: a second checkpoint meanwhile waits for it, then reads what is left. */
  #reading: Promise<void> = Promise.resolve();

  constructor(setup: MemorySetup) {
    this.#setup = setup;
    this.#limits = { maxChars: setup.config.MEMORY_MAX_CHARS, maxPerUser: setup.config.MEMORY_MAX_PER_USER };
  }

  /** The owner's memory as a leg reaches it; none for an anonymous conversation or a Worker that binds no memory. */
  port(): MemoryPort | undefined {
    const owner = this.#setup.store.state()?.owner;
    if (!owner || !this.#bound()) return undefined;
    const { redactor, config } = this.#setup;
    const backend = () => this.#backend(owner);
    return {
      // A leg's own recall (no options) is off with MEMORY_RECALL_TOKENS=0: no call to the user's object then.
      recall: async (query, options) =>
        options === undefined && config.MEMORY_RECALL_TOKENS === 0
          ? []
          : (await backend()).recall(query, { maxTokens: config.MEMORY_RECALL_TOKENS, ...options }),
      remember: async (memory) => {
        const kept = await (await backend()).remember(redactedMemory(memory, redactor), this.#limits);
        if (!kept.ok)
          throw new RuntimeError(kept.error.code === "memory_limit" ? "memory_limit" : "memory_unavailable", kept.error.message);
        return kept.value;
      },
    };
  }

  /** What the owner's agents remember of them now (none for a guest's conversation, or where no memory is bound). */
  async owners(): Promise<Memory[]> {
    const owner = this.#setup.store.state()?.owner;
    if (!owner || !this.#bound()) return [];
    return (await this.#backend(owner)).list();
  }

  /** A leg ended: the read after the conversation goes quiet is planned, unless one is planned already. */
  legEnded(): void {
    const { store } = this.#setup;
    const idle = this.#idleMs();
    const state = store.state();
    if (idle === null || !state?.owner || !this.#bound() || store.schedule.list().some((e) => e.kind === "memory-read")) return;
    store.schedule.add({ kind: "memory-read", dueAt: Date.now() + idle }, 0);
  }

  /** The quiet-time entry rang: read once the conversation has been quiet long enough, else wait until it has. */
  async due(entry: { id: string }): Promise<void> {
    const { store } = this.#setup;
    const idle = this.#idleMs() ?? 0;
    const quietAt = store.legOpen ? Date.now() + idle : (store.turns.lastActivity() ?? 0) + idle;
    if (quietAt > Date.now()) return store.schedule.postpone(entry.id, quietAt);
    store.schedule.remove(entry.id);
    await this.read("idle");
  }

  /** Reads what the conversation said since its last read (a checkpoint: compaction, a hand-back, quiet); a failure is logged. */
  read(reason: "idle" | "compaction" | "hand-back"): Promise<void> {
    this.#reading = this.#reading.then(() =>
      this.#read().catch((error: unknown) =>
        this.#setup.log(this.#setup.redactor.text(`memories not read (${reason}): ${errorMessage(error)}`)),
      ),
    );
    return this.#reading;
  }

  async #read(): Promise<void> {
    const { store } = this.#setup;
    const state = store.state();
    if (!state?.owner || !this.#bound()) return;
    const backend = await this.#backend(state.owner);
    const history = store.messages();
    if (backend.ingest) return this.#ingest(backend, state.conversationId, history);
    if (this.#setup.modelName === null) return;
    const from = await backend.readFrom(state.conversationId);
    if (from >= history.length) return;
    const { model, modelName, redactor } = this.#setup;
    const known = await backend.list({ limit: 50 });
    const base = { model: modelName, settings: {}, signal: AbortSignal.timeout(READ_TIMEOUT_MS) };
    const extraction = await extractMemories(model, base, history, from, known);
    const found: NewMemory[] = extraction.memories.map((m) => ({
      text: redactor.text(m.text),
      type: m.type,
      ...(m.key ? { key: redactor.text(m.key) } : {}),
      source: { conversation: state.conversationId, agent: MEMORY_AGENT, ...(m.message === undefined ? {} : { message: m.message }) },
    }));
    const kept = await backend.keepRead(state.conversationId, history.length, found, this.#limits);
    this.#recordRead(kept, extraction);
  }

  /** A backend that reads conversations itself is handed the user's and the agents' words. */
  async #ingest(backend: UserMemoryStore, conversationId: string, history: readonly Message[]): Promise<void> {
    const messages = history
      .flatMap((m) => ((m.role === "user" || m.role === "assistant") && m.content ? [{ role: m.role, content: m.content }] : []))
      .slice(-INGEST_MESSAGES)
      .map((m) => ({ ...m, content: this.#setup.redactor.text(m.content) }));
    await backend.ingest!(messages, conversationId);
  }

  /** What the read spent is counted with the latest turn; its trace shows what was kept. */
  #recordRead(kept: readonly Memory[], spent: { inputTokens: number; outputTokens: number }): void {
    const { store, keepTraces } = this.#setup;
    const state = store.state();
    if (!state) return;
    const trace = store.traces.read(state.turn);
    const memories = kept.map(({ id, text, type, key }) => ({ id, text, type, ...(key ? { key } : {}) }));
    const event = { action: "written" as const, agent: MEMORY_AGENT, memories };
    store.recordMemoryRead(spent, trace && kept.length ? withMemoriesWritten(trace, event, Date.now()) : undefined, keepTraces);
  }

  #idleMs(): number | null {
    const idle = this.#setup.config.MEMORY_IDLE_AFTER;
    return idle === "off" ? null : durationMs(idle as Duration, "MEMORY_IDLE_AFTER");
  }

  #bound(): boolean {
    const env = this.#setup.env as { AGENT_MEMORY?: unknown; MEMORIES?: unknown };
    return env.AGENT_MEMORY !== undefined || env.MEMORIES !== undefined;
  }

  async #backend(owner: string): Promise<UserMemoryStore> {
    const backend = await memoryOf(this.#setup.env, owner);
    if (!backend) throw new RuntimeError("memory_unavailable", "This Worker binds no memory (MEMORIES or AGENT_MEMORY).");
    return backend;
  }
}

/** A memory's words with the configured secrets taken out, before anything is stored. */
function redactedMemory(memory: NewMemory, redactor: Redactor): NewMemory {
  return { ...memory, text: redactor.text(memory.text), ...(memory.key ? { key: redactor.text(memory.key) } : {}) };
}
