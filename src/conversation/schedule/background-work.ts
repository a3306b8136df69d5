/**
 * Background delegations, run from the conversation's alarm apart from any turn: a turn may run
 * beside them (they write the delegated run's history and their own row, never the turn's). Each
 * step is stored as it ends, each event goes to the open sockets as it comes (it is no turn's, so it
 * is not in the event log), its spans go under the call that started it in the asking turn's trace,
 * and the end, in one write, replaces the entry with a follow-up that brings the result to the agent
 * that asked, which runs once as every follow-up does.
 *
 * A run that asks the user waits as a turn does, beside the conversation: its requests are listed with
 * the turn's, decided by the same routes (Conversation.decide), and expire at their deadlines. Once
 * every one is decided its entry is due, and the run carries on from its stored wait.
 *
 * While a run goes on its entry is due again a lease later: a ring then finds it running here and
 * puts it off. A ring that finds it started but not running here follows a restart that cut it
 * off: it ends as its stored history says (its answer, when its last step was stored, else
 * interrupted), as a foreground delegation cut off by a crash is answered interrupted.
 */
import {
  type BackgroundOutcome,
  type BackgroundResult,
  type BackgroundResume,
  backgroundNote,
  recoveredOutcome,
  runInBackground,
} from "../../runtime/background-delegation.ts";
import { errorMessage } from "../../runtime/errors.ts";
import type { RunEvent } from "../../runtime/events.ts";
import type { Network } from "../../runtime/network.ts";
import { NestedRedaction, type Redactor } from "../../runtime/redact.ts";
import type { RunItemsOptions } from "../../runtime/run-options.ts";
import type { UserRequest } from "../../runtime/wait/requests.ts";
import { expiredRequests, expiryDecisions } from "../../runtime/wait/deadlines.ts";
import { type BackgroundWait, type DelegationEntry, undecidedIn } from "../storage/run-ledger.ts";
import type { ConversationStore } from "../storage/conversation-store.ts";
import { type Notifier, notifiedRequest } from "./notifier.ts";
import { type OtlpExporter, toOtlp } from "../../traces/otlp-export.ts";
import { type Span, TraceBuilder } from "../../traces/turn-trace.ts";

/** How long a running background delegation's entry is put off at a time. */
export const BACKGROUND_LEASE_MS = 60_000;

export interface BackgroundWorkSetup {
  store: ConversationStore;
  network: Network;
  redactor: Redactor;
  /** The ports the conversation's turns run with. */
  run: Pick<RunItemsOptions, "model" | "mcp" | "remote" | "limits">;
  /** Told each event of a background run as it comes (the open WebSockets). */
  tell: (event: RunEvent) => void;
  /** Where spans go over OTLP, when a collector is configured. */
  exporter: OtlpExporter | null;
  /** The app's webhook: told when a run waits for the user, as when a turn does. */
  notifier: Pick<Notifier, "notify">;
  waitUntil: (promise: Promise<unknown>) => void;
  log: (message: string) => void;
}

export class BackgroundWork {
  readonly #setup: BackgroundWorkSetup;
  readonly #running = new Map<string, { controller: AbortController; done: Promise<void> }>();

  constructor(setup: BackgroundWorkSetup) {
    this.#setup = setup;
  }

  /**
   * The alarm found the entry due: its run starts, or carries on from its decided wait (`wait`, when it is in one; a wait
   * past a request's deadline declines it), or (running here) is put off a lease, or (cut off by a restart) ends.
   */
  due(entry: DelegationEntry, wait?: BackgroundWait): void {
    const { store } = this.#setup;
    const leaseUntil = Date.now() + BACKGROUND_LEASE_MS;
    if (this.#running.has(entry.id)) return store.schedule.postpone(entry.id, leaseUntil);
    const state = store.state();
    if (!state) return store.schedule.remove(entry.id);
    if (wait) return this.#waited(entry, wait, state.conversationId, leaseUntil);
    if (store.runs.get(entry.id)) return this.#finish(entry, recoveredOutcome(store.delegation(entry.turn, [entry.toolCallId])));
    store.runs.begin(entry, leaseUntil);
    this.#start(entry, state.conversationId);
  }

  /** A wait's entry rang: its requests past their deadline are declined; once none is left, the run carries on. */
  #waited(entry: DelegationEntry, wait: BackgroundWait, conversationId: string, leaseUntil: number): void {
    const { store } = this.#setup;
    const [decided] = store.decide([{ wait, decisions: expiryDecisions(expiredRequests(wait)) }]);
    if (!decided || undecidedIn(decided).length > 0) return;
    const stored = store.readDelegation([entry.toolCallId], entry.turn);
    if (!stored?.suspension) return this.#finish(entry, { status: "interrupted" });
    store.runs.resume(entry.id, leaseUntil);
    this.#start(entry, conversationId, { conversation: stored.conversation, suspension: stored.suspension, decisions: decided.decisions });
  }

  #start(entry: DelegationEntry, conversationId: string, resume?: BackgroundResume): void {
    const controller = new AbortController();
    const done = this.#run(entry, conversationId, controller.signal, resume).finally(() => this.#running.delete(entry.id));
    this.#running.set(entry.id, { controller, done });
    this.#setup.waitUntil(done);
  }

  /** Whether the entry's run goes on here. */
  running(id: string): boolean {
    return this.#running.has(id);
  }

  /**
   * Stops the runs whose entry is gone (cancelled, or gone with a rewound turn), and ends those that waited for the user;
   * `all`: every run (the conversation is erased).
   */
  async stop(all = false): Promise<void> {
    const { schedule, runs } = this.#setup.store;
    const stopping = [...this.#running].filter(([id]) => all || !schedule.get(id)).map(([, run]) => run);
    for (const run of stopping) run.controller.abort();
    await Promise.all(stopping.map((run) => run.done));
    if (!all) runs.endOrphanedWaits();
  }

  async #run(entry: DelegationEntry, conversationId: string, signal: AbortSignal, resume?: BackgroundResume): Promise<void> {
    const { store, network, redactor, run, tell } = this.#setup;
    // What the trace is made of, with when each came (text aside: a trace keeps no content).
    const traced: Array<[RunEvent, number]> = [];
    // Its text is redacted as a stream per run, as a turn's is.
    const nested = new NestedRedaction(redactor);
    let outcome: BackgroundResult;
    try {
      // A run delegated within it resumes from what is stored under the turn that asked.
      const delegations = { readDelegation: (path: readonly string[]) => store.readDelegation(path, entry.turn) };
      const started = { ...run, conversationId, network, signal, delegation: entry, spent: store.usage(), delegations };
      const items = runInBackground(resume ? { ...started, resume } : started);
      let next = await items.next();
      for (; !next.done; next = await items.next()) {
        const item = next.value;
        if (item.type === "step") {
          for (const event of nested.flush()) tell(event);
          store.commitBackgroundStep(entry, { ...item, commit: redactor.value(item.commit) });
        } else {
          for (const event of nested.take(item.event)) tell(event);
          if (item.event.event.type !== "text-delta") traced.push([item.event, Date.now()]);
        }
      }
      outcome = next.value;
      for (const event of nested.flush()) tell(event);
    } catch (error) {
      this.#setup.log(redactor.text(`background delegation not stored: ${errorMessage(error)}`));
      outcome = { status: "failed", message: "its steps could not be stored" };
    }
    const trace = this.#trace(entry, traced);
    if ("requests" in outcome) this.#wait(entry, outcome.status, redactor.value(outcome.requests), trace?.spans);
    else this.#finish(entry, outcome, trace?.spans);
    const { exporter } = this.#setup;
    if (trace && exporter && trace.spans.length > 0)
      this.#setup.waitUntil(exporter.export(redactor.value(toOtlp({ ...trace, conversationId, content: null }))));
  }

  /**
   * The run's spans, under the call that started it in the trace of the turn that made it (stored: the run starts once that
   * turn's leg has ended); none when that trace is not kept.
   */
  #trace(entry: DelegationEntry, traced: ReadonlyArray<[RunEvent, number]>): { traceId: string; spans: Span[] } | null {
    const previous = this.#setup.store.traces.read(entry.turn);
    if (!previous) return null;
    const builder = new TraceBuilder(entry.turn, { previous });
    builder.follow(entry.toolCallId);
    for (const [event, at] of traced) builder.record(event, at);
    return { traceId: previous.traceId, spans: builder.added(traced.at(-1)?.[1] ?? Date.now()) };
  }

  #wait(entry: DelegationEntry, status: "awaiting_approval" | "awaiting_input", requests: UserRequest[], spans: Span[] = []): void {
    const { store, notifier, redactor, log } = this.#setup;
    try {
      store.runs.wait(entry, status, spans);
    } catch (error) {
      // As an end not stored: the next ring finds it started and not running, and ends it from its stored history.
      return log(redactor.text(`background delegation's wait not stored: ${errorMessage(error)}`));
    }
    notifier
      .notify("request_waiting", { pending: requests.map(notifiedRequest), background: entry.id })
      .catch((error: unknown) => log(redactor.text(`the app could not be told: ${errorMessage(error)}`)));
  }

  #finish(entry: DelegationEntry, outcome: BackgroundOutcome, spans: Span[] = []): void {
    const { store, redactor } = this.#setup;
    try {
      store.runs.finish(entry, outcome.status, redactor.text(backgroundNote(entry, outcome)), spans);
    } catch (error) {
      // Its entry stays: the next ring finds it started and not running, and ends it from its stored history.
      this.#setup.log(redactor.text(`background delegation's end not stored: ${errorMessage(error)}`));
    }
  }
}
