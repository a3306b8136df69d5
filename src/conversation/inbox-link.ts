/**
 * A conversation's entry in its owner's inbox, told by the conversation itself: whole each time
 * (title, holder, status, the last message), so a write the inbox missed heals with the next.
 */
import type { Message } from "../runtime/messages.ts";
import type { Redactor } from "../runtime/redact.ts";
import type { ConversationState, ConversationStore } from "./storage/conversation-store.ts";
import { type ConversationTitles, cut, shownTitle } from "./conversation-titles.ts";
import { type InboxEntry, type InboxStatus, inboxOf } from "../inbox/inbox.ts";
import { undecidedIn } from "./storage/run-ledger.ts";
import { waitingStatus } from "../runtime/wait/requests.ts";
import { statusNow } from "./conversation-view.ts";

const SNIPPET_CHARS = 120;
/** The most of a conversation's words its owner's search keeps (the newest messages' first), so one inbox row stays small. */
export const SEARCH_WORDS_CHARS = 32_768;

export class InboxLink {
  readonly #store: ConversationStore;
  readonly #redactor: Redactor;
  readonly #env: unknown;
  readonly #titles: { maker: ConversationTitles; waitUntil: (promise: Promise<unknown>) => void } | null;
  /** Rows the inbox wrote for this conversation's latest leg (kept in memory: a figure, not state). */
  lastRowsWritten: number | null = null;
  /** The entry last told (in memory). */
  lastTold: InboxEntry | undefined;

  /** `titles`: who makes the titles of owned conversations after their first turn, and where that work waits (off the turn's path). */
  constructor(
    store: ConversationStore,
    redactor: Redactor,
    env: unknown,
    titles: { maker: ConversationTitles; waitUntil: (promise: Promise<unknown>) => void } | null = null,
  ) {
    this.#store = store;
    this.#redactor = redactor;
    this.#env = env;
    this.#titles = titles;
  }

  /**
   * The conversation's entry as it stands: its status is the latest turn's, or a background run's wait for the user.
   * `messages`: the history, when the caller has read it (a long one is read from storage for each use at rest).
   */
  entry(state: ConversationState, messages: readonly Message[] = this.#store.messages()): InboxEntry {
    const last = messages.findLast((m) => (m.role === "user" || m.role === "assistant") && m.content)?.content ?? "";
    const stored = this.#store.turns.record(state.turn)?.status;
    const turn: InboxStatus =
      stored === undefined || stored === "rewound" ? "idle" : statusNow(stored, state.holding.activeAgent, this.#store.handoffs());
    return this.#redactor.value({
      id: state.conversationId,
      // A user's own title, else the first message cut short.
      title: shownTitle(state.title, messages),
      createdAt: state.createdAt ?? 0,
      updatedAt: Date.now(),
      holder: state.holding.activeAgent,
      status: turn.startsWith("awaiting_") ? turn : (waitingOnRuns(this.#store) ?? turn),
      snippet: cut(last, SNIPPET_CHARS),
      archived: state.archived ?? false,
    });
  }

  /**
   * Tells the owner's inbox the conversation's entry (CommitEffects does, after a change); nothing for a conversation no signed-in user
   * owns.
   */
  async tell(): Promise<InboxEntry | undefined> {
    const state = this.#store.state();
    if (!state?.owner) return undefined;
    const messages = this.#store.messages();
    const entry = this.entry(state, messages);
    const { inputTokens, outputTokens } = this.#store.usage();
    const words = searchWords(messages, this.#redactor);
    const written = await (await inboxOf(this.#env, state.owner))?.record(entry, inputTokens + outputTokens, words);
    if (written) this.lastRowsWritten = written.rowsWritten;
    this.lastTold = entry;
    return entry;
  }

  /** A turn started: its owner's list shows it running (in the inbox's memory: no row is written for it). */
  started(waitUntil: (promise: Promise<unknown>) => void): void {
    const state = this.#store.state();
    if (!state?.owner) return;
    const { conversationId, owner } = state;
    const since = Date.now();
    waitUntil(
      (async () => {
        await (await inboxOf(this.#env, owner))?.markRunning(conversationId, since);
      })().catch(() => {}),
    );
  }

  /** After a leg: the first turn of an untitled one gets its title, made off the turn's path (storing it tells the inbox). */
  titleAfterLeg(): void {
    const titles = this.#titles;
    if (!titles?.maker.due()) return;
    titles.waitUntil(titles.maker.make());
  }

  /** The conversation is gone: it leaves its owner's inbox. */
  async forget(state: ConversationState): Promise<void> {
    if (state.owner) await (await inboxOf(this.#env, state.owner))?.remove(state.conversationId);
  }
}

/**
 * The distinct words of every user and agent message (tool results stay out), newest message first,
 * lowercased and space-separated, for the owner's search. Told whole each time, like the entry, so a
 * rewound or edited message's words leave the index with the next write. Redacted before it is split,
 * so a secret cannot be found by its pieces.
 */
export function searchWords(messages: readonly Message[], redactor: Redactor): string {
  const seen = new Set<string>();
  let chars = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if ((message.role !== "user" && message.role !== "assistant") || !message.content) continue;
    for (const word of redactor.text(message.content).toLowerCase().match(WORD) ?? []) {
      if (seen.has(word)) continue;
      if (chars + word.length + 1 > SEARCH_WORDS_CHARS) return [...seen].join(" ");
      seen.add(word);
      chars += word.length + 1;
    }
  }
  return [...seen].join(" ");
}

/** A word as search finds it: letters and digits (what FTS5's tokenizer keeps). */
const WORD = /[\p{L}\p{N}]+/gu;

/** What the owner's list says while a run waits for them (a background run, when the turn's status does not say it). */
function waitingOnRuns(store: ConversationStore): InboxStatus | undefined {
  const requests = store.runs.waits().flatMap(undecidedIn);
  if (!requests.length) return undefined;
  return waitingStatus(requests);
}
