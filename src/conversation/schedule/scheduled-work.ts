/**
 * What the conversation's alarm does: each due entry of its schedule, the earliest first. A
 * follow-up runs a turn by whoever holds the conversation then; an approval deadline declines the
 * undecided calls past it (`expired`) and resumes the turn as its agent; a person's deadline hands
 * the conversation back to an agent, which answers the user; a quiet conversation is read for its
 * owner's memory; a background delegation starts beside
 * whatever turn runs (BackgroundWork). Each turn is stored and streamed to
 * whoever follows, as any other. A turn already running puts the alarm off a little.
 */
import type { Network } from "../../runtime/network.ts";
import type { ConversationStore } from "../storage/conversation-store.ts";
import type { Notifier } from "./notifier.ts";
import type { PersonHold } from "../person-hold.ts";
import { type ConversationResult, ok } from "../results.ts";
import { BUSY_RETRY_MS, type ScheduleEntry } from "../storage/schedule.ts";
import { expiredRequests, expiryDecisions } from "../../runtime/wait/deadlines.ts";
import type { TurnAdmission } from "../turn-admission.ts";
import type { TurnDriver } from "../turns/turn-driver.ts";
import type { BackgroundWork } from "./background-work.ts";
import { isBackground, undecidedIn } from "../storage/run-ledger.ts";
import type { ConversationFiles } from "../files/conversation-files.ts";
import type { ConversationMemory } from "../conversation-memory.ts";

/** A follow-up due while a step waits for approvals waits this much longer (a new turn cannot start then). */
const SUSPENDED_RETRY_MS = 5 * 60_000;

export interface ScheduledWorkSetup {
  store: ConversationStore;
  driver: TurnDriver;
  hold: PersonHold;
  network: Network;
  notifier: Notifier;
  /** The alarm's turns pass the same admission as every other (their owner's daily budget among its checks). */
  admission: TurnAdmission;
  /** Background delegations: they run beside turns, not after them. */
  background: BackgroundWork;
  /** The conversation's files: uploads no message sent are swept. */
  files: ConversationFiles;
  /** Its owner's memory: read for once the conversation goes quiet. */
  memory: ConversationMemory;
}

export class ScheduledWork {
  readonly #setup: ScheduledWorkSetup;

  constructor(setup: ScheduledWorkSetup) {
    this.#setup = setup;
  }

  /** The alarm: due entries, the earliest first; then the alarm is set to the next one. */
  async run(): Promise<void> {
    const { store, driver, notifier } = this.#setup;
    // Messages out go whatever runs; a turn's work waits for the running turn.
    await notifier.deliverDue();
    for (const entry of store.schedule.due()) {
      // A background run's work, and its wait's deadline, go on beside a running turn.
      if (entry.kind === "delegation") await this.#background(entry);
      else if (entry.kind === "request-expiry" && entry.run !== undefined) await this.#expire(entry);
      else if (!driver.running) await this.#runEntry(entry);
    }
    if (driver.running) store.schedule.waitUntil(Date.now() + BUSY_RETRY_MS);
  }

  /** One entry: its work, or (nothing left for it to do) its removal. */
  #runEntry(entry: Exclude<ScheduleEntry, { kind: "delegation" }>): Promise<void> {
    switch (entry.kind) {
      case "follow-up":
        return this.#followUp(entry);
      case "request-expiry":
        return this.#expire(entry);
      case "person-timeout":
        return this.#personTimeout(entry);
      case "file-sweep":
        return this.#sweepFiles(entry);
      case "memory-read":
        return this.#setup.memory.due(entry);
    }
  }

  /** Uploads no message sent within the hour go; the next sweep is planned for the next such upload. */
  async #sweepFiles(entry: ScheduleEntry): Promise<void> {
    const { store, files } = this.#setup;
    store.schedule.remove(entry.id);
    const state = store.state();
    if (state) store.schedule.planSweep(await files.sweep(store.messages()));
  }

  async #followUp(entry: Extract<ScheduleEntry, { kind: "follow-up" }>): Promise<void> {
    const { store, driver } = this.#setup;
    const state = store.state();
    if (!state) return this.#drop(entry);
    if (state.suspension) return store.schedule.postpone(entry.id, Date.now() + SUSPENDED_RETRY_MS);
    return this.#admitted(state.conversationId, entry, "scheduled", async () => {
      // A background delegation's result is told as it is; a tool's follow-up, with who scheduled it and when.
      const note = entry.delegated
        ? entry.note
        : `A follow-up '${entry.agent}' scheduled for ${new Date(entry.dueAt).toISOString()} is due: ${entry.note}`;
      // The entry leaves with the turn's first commit (which also writes its deferred turn row).
      store.schedule.removeWithNextWrite(entry.id);
      store.beginTurn({ note });
      await driver.runUnread({ conversationId: state.conversationId }, { kind: "scheduled", note });
      await this.#setup.notifier.notify("follow_up_answered", { agent: entry.agent, note: entry.note });
    });
  }

  /**
   * A background delegation starts once the turn that asked has ended its leg (what it spent is told by then), then runs
   * beside any turn; one not started yet, or decided and ready to carry on from its wait, waits while its owner's daily
   * budget is spent.
   */
  async #background(entry: Extract<ScheduleEntry, { kind: "delegation" }>): Promise<void> {
    const { store, admission, background, driver } = this.#setup;
    const state = store.state();
    const starts = state !== null && !background.running(entry.id) && !store.runs.get(entry.id);
    // The alarm rings again shortly while a turn runs (see run).
    if (starts && driver.running && state.turn === entry.turn) return;
    const wait = store.runs
      .waits()
      .filter(isBackground)
      .find((w) => w.id === entry.id);
    const resumes = wait !== undefined && undecidedIn(wait).length === 0;
    const refused = state !== null && (starts || resumes) ? await admission.ownerBudget(state) : null;
    if (refused && !refused.ok) return this.#postponeRefused(entry, refused);
    background.due(entry, wait);
  }

  /**
   * A run's deadline rang: its requests past theirs are declined `expired`, by the one path every decision takes, which
   * plans its next deadline. Once none is left the run carries on, where its result goes: a background run's entry is due
   * (it goes on beside a running turn); the turn's leg resumes as its agent, admitted as a turn.
   */
  async #expire(entry: Extract<ScheduleEntry, { kind: "request-expiry" }>): Promise<void> {
    const { store, driver } = this.#setup;
    const state = store.state();
    const wait = store.runs.waits().find((w) => w.id === entry.run);
    const expired = wait ? expiredRequests(wait) : [];
    if (!state || !wait || !expired.length) return this.#drop(entry);
    const decisions = expiryDecisions(expired);
    if (isBackground(wait)) {
      store.decide([{ wait, decisions }]);
      return;
    }
    return this.#admitted(state.conversationId, entry, "expiry", async () => {
      store.schedule.removeWithNextWrite(entry.id);
      const complete = expired.length === undecidedIn(wait).length;
      store.decide([{ wait, decisions }], undefined, complete);
      const { suspension, decisions: decided } = store.state()!;
      const resumed =
        complete && suspension
          ? driver.runUnread({ conversationId: state.conversationId }, { kind: "resume", suspension, decisions: decided })
          : null;
      await this.#setup.notifier.notify("request_expired", { toolCallIds: expired.map((p) => p.toolCallId) });
      await resumed;
    });
  }

  async #personTimeout(entry: Extract<ScheduleEntry, { kind: "person-timeout" }>): Promise<void> {
    const { store, driver, hold, network } = this.#setup;
    const state = store.state();
    const person = network.get(entry.person);
    if (!state || !person || state.holding.activeAgent !== entry.person) return this.#drop(entry);
    return this.#admitted(state.conversationId, entry, "scheduled", async () => {
      const to = person.onTimeout.handBackTo ?? (network.get(entry.handedBy) ? entry.handedBy : network.entry.name);
      store.schedule.removeWithNextWrite(entry.id);
      store.activity.record({ kind: "timed-out", agent: entry.person, to });
      // The hand back's commit is made as it is called, and the leg claimed right after: nothing starts between them.
      const handedBack = hold.handBack(state, entry.person, to, "No one answered in time.");
      const note =
        person.onTimeout.note ??
        `No one at '${entry.person}' answered in time, and the conversation came back to you. Tell the user so, and help them as far as you can.`;
      store.beginTurn({ note });
      const ran = driver.runUnread({ conversationId: state.conversationId }, { kind: "scheduled", note });
      await this.#setup.notifier.notify("person_timed_out", { person: entry.person, to });
      await handedBack;
      await ran;
    });
  }

  /**
   * The alarm's turn through the admission (no client: its owner's budget), `work` begun as it is
   * admitted. Refused, the entry waits until the refusal says to try again (a spent budget: the next UTC day).
   */
  async #admitted(conversationId: string, entry: ScheduleEntry, kind: "scheduled" | "expiry", work: () => Promise<void>): Promise<void> {
    const admitted = await this.#setup.admission.turn({ conversationId }, { kind }, async () => {
      await work();
      return ok(null);
    });
    if (!admitted.ok) this.#postponeRefused(entry, admitted);
  }

  /** A refused entry waits until the refusal says to try again (a spent budget: the next UTC day). */
  #postponeRefused(entry: ScheduleEntry, refused: Extract<ConversationResult<unknown>, { ok: false }>): void {
    const retryAfter = Number(refused.error.details?.retryAfter ?? BUSY_RETRY_MS / 1000);
    this.#setup.store.schedule.postpone(entry.id, Date.now() + retryAfter * 1000);
  }

  #drop(entry: ScheduleEntry): Promise<void> {
    this.#setup.store.schedule.remove(entry.id);
    return Promise.resolve();
  }
}
