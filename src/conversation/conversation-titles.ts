/**
 * Titles for a signed-in user's conversations: after the first turn's first leg, one small model
 * call (TITLE_MODEL, the agents' model by default; `off` for none), off the turn's path. A title
 * the user gave meanwhile wins; a call that fails leaves the first message, cut short, as the title.
 */
import type { Config } from "../config.ts";
import type { Model } from "../runtime/ports/model-port.ts";
import type { Network } from "../runtime/network.ts";
import type { Redactor } from "../runtime/redact.ts";
import type { Message } from "../runtime/messages.ts";
import { makeTitle, TITLE_CHARS } from "../runtime/titles.ts";
import { errorMessage } from "../runtime/errors.ts";
import type { ConversationStore } from "./storage/conversation-store.ts";

/** A title call that has not answered in this long is given up. */
const TITLE_TIMEOUT_MS = 20_000;

export interface TitleSetup {
  model: Model;
  /** The model name sent with the call. */
  modelName: string;
  redactor: Redactor;
  log: (message: string) => void;
}

export class ConversationTitles {
  readonly #store: ConversationStore;
  readonly #setup: TitleSetup;
  #making = false;

  constructor(store: ConversationStore, setup: TitleSetup) {
    this.#store = store;
    this.#setup = setup;
  }

  /** Whether the conversation should get a title now: owned, untitled, in its first turn. */
  due(): boolean {
    const state = this.#store.state();
    return !this.#making && state?.owner !== undefined && state.title === undefined && state.turn === 1;
  }

  /** Makes and stores the title, unless the user named the conversation (or it went) meanwhile; a failure is logged. */
  async make(): Promise<void> {
    this.#making = true;
    const { model, modelName, redactor, log } = this.#setup;
    try {
      const made = await makeTitle(
        model,
        { model: modelName, settings: {}, signal: AbortSignal.timeout(TITLE_TIMEOUT_MS) },
        this.#store.messages(),
      );
      const state = this.#store.state();
      // Renamed, or deleted, while the model was asked.
      if (!made || !state || state.title !== undefined) return;
      this.#store.titleFirstTurn(redactor.text(made.title), { inputTokens: made.inputTokens, outputTokens: made.outputTokens });
    } catch (error) {
      log(redactor.text(`conversation title not made: ${errorMessage(error)}`));
    } finally {
      this.#making = false;
    }
  }
}

/** Who titles a conversation after its first turn: TITLE_MODEL, else the entry agent's model; none when it is `off`. */
export function titleMaker(
  config: Config,
  network: Network,
  store: ConversationStore,
  model: Model,
  redactor: Redactor,
): ConversationTitles | null {
  const modelName = config.TITLE_MODEL ?? agentsModel(network);
  if (modelName === "off") return null;
  return new ConversationTitles(store, { model, modelName, redactor, log: (message) => console.warn(message) });
}

/**
 * The agents' model: the entry agent's, unless it is served elsewhere (a remote agent has no model
 * here): then the network's default, or its first agent's.
 */
export function agentsModel(network: Network): string {
  if (!network.entry.remote) return network.modelFor(network.entry);
  const local = [...network.agents.values()].find((agent) => !agent.remote && !agent.human);
  return network.defaultModel ?? (local ? network.modelFor(local) : "off");
}

/** The title a conversation is shown by: its own (made or given), else its first message cut short, else "New conversation". */
export function shownTitle(title: string | undefined, messages: readonly Message[]): string {
  const firstUser = messages.find((m) => m.role === "user")?.content;
  return title ?? (firstUser ? cut(firstUser, TITLE_CHARS) : "New conversation");
}

/** Text on one line, at most `chars` long (an ellipsis says it was cut). */
export function cut(text: string, chars: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > chars ? `${flat.slice(0, chars - 1)}…` : flat;
}
