/**
 * What follows a write, derived from what it changed, not from who wrote: the object's one alarm
 * set to the earliest schedule entry or outbox message whenever either changed, and the owner's inbox told the
 * conversation's entry whenever it changed while no leg is running (a leg's end tells it once).
 * Every writer (turns, a person's messages and hand backs, decisions, expiries, deletes, forks,
 * follow-ups, notifications) reaches these through the storage's writes, and through nothing else.
 */
import type { ConversationStore } from "./storage/conversation-store.ts";
import type { InboxLink } from "./inbox-link.ts";
import type { Written } from "./storage/sql-writer.ts";
import { errorMessage } from "../runtime/errors.ts";

export interface EffectsSetup {
  store: ConversationStore;
  storage: Pick<DurableObjectStorage, "setAlarm" | "deleteAlarm">;
  inbox: InboxLink;
  waitUntil: (promise: Promise<unknown>) => void;
  log: (message: string) => void;
}

export class CommitEffects {
  readonly #setup: EffectsSetup;
  /** The alarm as last set here; undefined until this instance first sets it (the stored one is not read). */
  #alarm: number | null | undefined;
  #inboxDue = false;
  #telling: Promise<void> | null = null;

  constructor(setup: EffectsSetup) {
    this.#setup = setup;
    setup.store.onWritten((written) => this.#written(written));
  }

  /** Resolves once what the writes so far call for is done (the inbox told): for answers that show it. */
  async settled(): Promise<void> {
    while (this.#telling) await this.#telling;
  }

  /** An alarm that rang is spent: the next one is set from the schedule as it stands, changed or not. */
  alarmRang(): void {
    this.#alarm = undefined;
    this.#syncAlarm();
  }

  #written(written: Written): void {
    if (written.changed.has("schedule")) this.#syncAlarm();
    if (written.changed.has("entry")) this.#tellInbox();
  }

  /**
   * The one alarm at the earliest entry (or the soonest wake asked for), set as the write commits:
   * the object's output gate holds its answers until the alarm is stored too.
   */
  #syncAlarm(): void {
    const { schedule, outbox } = this.#setup.store;
    const wakes = [schedule.nextWake(), outbox.nextDue()].filter((at) => at !== null);
    const at = wakes.length > 0 ? Math.min(...wakes) : null;
    if (at === this.#alarm) return;
    this.#alarm = at;
    const stored = at === null ? this.#setup.storage.deleteAlarm() : this.#setup.storage.setAlarm(at);
    this.#setup.waitUntil(stored.catch((error: unknown) => this.#setup.log(`the alarm could not be set: ${String(error)}`)));
  }

  /** The inbox is told once per change outside a leg, the writes of one moment coalesced into one tell. */
  #tellInbox(): void {
    if (this.#setup.store.legOpen) return;
    this.#inboxDue = true;
    if (this.#telling) return;
    const telling = (async () => {
      // After the writes of this moment: a burst of writes is one tell.
      await Promise.resolve();
      while (this.#inboxDue) {
        this.#inboxDue = false;
        await this.#setup.inbox.tell();
      }
    })()
      .catch((error: unknown) => this.#setup.log(`the inbox could not be told: ${errorMessage(error)}`))
      .finally(() => {
        this.#telling = null;
      });
    this.#telling = telling;
    this.#setup.waitUntil(telling);
  }
}
