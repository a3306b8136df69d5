import type { Message } from "../runtime/messages.ts";
import { DurableObject } from "cloudflare:workers";
import { type Config, readConfig } from "../config.ts";
import type { WorkerVars } from "../worker-vars.ts";
import type { OperatorIdentity } from "../runtime/handoff/types.ts";
import type { Network } from "../runtime/network.ts";
import type { Redactor } from "../runtime/redact.ts";
import { type Decision, undecided } from "../runtime/wait/requests.ts";
import type { TurnStream } from "../wire/sse.ts";
import type { ClientHistory } from "../wire/client-history.ts";
import type { TurnInput } from "../runtime/run-options.ts";
import { routeDecisions, withoutRepeats } from "../runtime/wait/checks.ts";
import { type Decided, sharesOf, waitsOf } from "./waits.ts";
import type {
  ConversationSetup,
  ConversationView,
  DecideOptions,
  DecisionOutcome,
  EventsOutcome,
  MessageOptions,
  PageQuery,
  Requester,
} from "./conversation-api.ts";
import type { ConversationStore, DelegatedRun } from "./storage/conversation-store.ts";
import { isBackground, undecidedIn } from "./storage/run-ledger.ts";
import { publicRecord } from "../runtime/handoff/change-hands.ts";
import { conversationView, customerView, historyPageOf, type TurnView, turnView, type ViewAudience } from "./conversation-view.ts";
import type { ForkSnapshot } from "./storage/forks.ts";
import type { HistoryPage } from "./storage/history-page.ts";
import type { InboxLink } from "./inbox-link.ts";
import type { InboxEntry } from "../inbox/inbox.ts";
import type { PersonHold } from "./person-hold.ts";
import { newGrant } from "./grants.ts";
import { fail, ok, type ConversationResult } from "./results.ts";
import type { TurnDriver } from "./turns/turn-driver.ts";
import type { ScheduledWork } from "./schedule/scheduled-work.ts";
import type { BackgroundWork } from "./schedule/background-work.ts";
import { assembleConversation } from "./conversation-parts.ts";
import type { ScheduledView } from "./storage/schedule.ts";
import { answerFrame, type ConversationSockets, openSocket } from "./sockets.ts";
import { RUN_IN_PROGRESS, type TurnAdmission } from "./turn-admission.ts";
import type { CommitEffects } from "./commit-effects.ts";
import type { EventEffects } from "./event-effects.ts";
import type { TurnSummary } from "./storage/turn-log.ts";
import type { TurnTrace } from "../traces/turn-trace.ts";
import type { ProtocolParts } from "./protocol-parts.ts";
import type { FileRef } from "../runtime/messages.ts";
import type { Memory } from "../runtime/ports/memory-port.ts";
import type { ConversationMemory } from "./conversation-memory.ts";
import { type ConversationFiles, sentFileIds } from "./files/conversation-files.ts";
import { MessageSchema, readRow } from "./storage/row-schemas.ts";
import { receivedFiles, type SentFile } from "./files/sent-files.ts";

export type { Requester, ConversationSetup, ConversationView, DecisionOutcome, EventsOutcome, PageQuery } from "./conversation-api.ts";

/**
 * One conversation: its active agent, history and counters in SQLite, and at most one run.
 * The RPC surface and who may do what; storage is ConversationStore, running a turn TurnDriver,
 * a person's hold PersonHold, the alarm's work ScheduledWork, open WebSockets ConversationSockets
 * (all put together by conversation-parts.ts). Everything it stores or streams passes the redactor of the
 * configured secrets first. A Worker makes its own subclass with `setup` (`createHandoffWorker`
 * in `handoff-runtime/cloudflare` does).
 */
export abstract class Conversation extends DurableObject<WorkerVars> {
  readonly #store: ConversationStore;
  readonly #config: Config;
  readonly #network: Network;
  readonly #redactor: Redactor;
  /** While a person holds the conversation: their messages, their hand back, the followers and the desk. */
  readonly #hold: PersonHold;
  /** Its entry in its owner's inbox, when a signed-in user owns it. */
  readonly #inbox: InboxLink;
  readonly #driver: TurnDriver;
  readonly #work: ScheduledWork;
  readonly #background: BackgroundWork;
  readonly #sockets: ConversationSockets;
  /** Every way in passes it: access, state, length, limits, budget, streams. */
  readonly #admission: TurnAdmission;
  /** What follows each write: the alarm, the inbox. */
  readonly #effects: CommitEffects;
  /** What follows each stored event: a leg's end, a person's answer or hand back. */
  readonly #events: EventEffects;
  /** Its files: bytes in the FILES bucket, references here. */
  readonly #files: ConversationFiles;
  /** Its owner's memory, across their conversations. */
  readonly #memory: ConversationMemory;
  /** What the Worker's protocols keep here and send from here. */
  readonly #protocols: ProtocolParts;

  constructor(ctx: DurableObjectState, env: WorkerVars) {
    super(ctx, env);
    this.#config = readConfig(env);
    const setup = this.setup(env);
    this.#network = setup.network;
    const parts = assembleConversation(ctx, env, this.#config, setup);
    this.#redactor = parts.redactor;
    this.#store = parts.store;
    this.#hold = parts.hold;
    this.#inbox = parts.inbox;
    this.#driver = parts.driver;
    this.#work = parts.work;
    this.#background = parts.background;
    this.#sockets = parts.sockets;
    this.#admission = parts.admission;
    this.#effects = parts.effects;
    this.#events = parts.events;
    this.#files = parts.files;
    this.#memory = parts.memory;
    this.#protocols = parts.protocols;
  }

  /** Resolves once what the writes so far call for is done (the desk, the inbox told): for answers that show it. */
  async #settled(): Promise<void> {
    await this.#events.settled();
    await this.#effects.settled();
  }

  /** A WebSocket the Worker upgraded (GET …/socket), for the requester it names: accepted through the hibernation API. */
  override async fetch(request: Request): Promise<Response> {
    return openSocket(request, {
      sockets: this.#sockets,
      admit: (requester) => this.#admission.access(requester),
      catchUp: (state, after) => this.#driver.catchUp(state, after),
      waitUntil: (promise) => this.ctx.waitUntil(promise),
    });
  }

  /** A frame from a socket: a message that starts a turn, or decisions; the turn's events reach every socket as they happen. */
  override async webSocketMessage(ws: WebSocket, raw: string | ArrayBuffer): Promise<void> {
    await answerFrame(ws, raw, {
      sockets: this.#sockets,
      // A socket's turn is read by the sockets alone: no stream is opened for it.
      send: (requester, text, files) =>
        this.#message(requester, text, files ? { files } : {}, (input) => this.#driver.runUnread(requester, input), false),
      // A socket sees a request before its leg is done: decisions sent on seeing its end wait for that rather than be refused.
      decide: async (requester, decisions) => {
        if (!this.#onlyBackground(decisions)) await this.#driver.settled();
        return this.#decide(requester, decisions, {}, (input) => this.#driver.runUnread(requester, input), false);
      },
    });
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    ws.close(code === 1005 ? 1000 : code, reason);
  }

  /** The schedule's alarm: follow-ups, approval deadlines and people's deadlines that are due. */
  override async alarm(): Promise<void> {
    await this.#work.run();
    this.#effects.alarmRang();
  }

  /** What is scheduled: follow-ups, the approvals' deadline, a person's deadline; the earliest first. */
  async scheduleEntries(requester: Requester): Promise<ConversationResult<{ entries: ScheduledView[] }>> {
    const admitted = this.#admission.access(requester);
    return admitted.ok ? ok({ entries: this.#redactor.value(this.#store.schedule.shown()) }) : admitted;
  }

  /** Cancels one entry (`id`) or every follow-up. */
  async cancelScheduled(requester: Requester, id?: string): Promise<ConversationResult<{ cancelled: number }>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const cancelled = this.#store.schedule.cancel(id);
    // A background delegation cancelled stops where it is; the agent that asked is not told.
    await this.#background.stop();
    return cancelled;
  }

  /** The network this conversation runs and what overrides the environment, from the Worker that exports the class. */
  protected abstract setup(env: WorkerVars): ConversationSetup;

  /** Creates the conversation, held by the entry agent, without a turn; the grant signs its tokens. */
  async create(requester: Requester): Promise<ConversationResult<{ activeAgent: string; grant: string }>> {
    const state = this.#store.create(requester.conversationId, this.#network.entry.name, newGrant(), requester.user);
    await this.#settled();
    return ok({ activeAgent: state.holding.activeAgent, grant: state.grant ?? this.#store.setGrant(newGrant()).grant! });
  }

  /** The grant for new tokens of an existing conversation; `rotate` revokes every token issued before. */
  async issueGrant(requester: Requester, rotate: boolean): Promise<ConversationResult<{ grant: string }>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const { grant } = admitted.value;
    return ok({ grant: !rotate && grant ? grant : this.#store.setGrant(newGrant()).grant! });
  }

  /**
   * Starts a turn and returns its stream. The run goes on if the stream's reader leaves.
   * `createOwned`: a conversation of this id that does not exist yet is created, owned by the
   * signed-in requester (AG-UI's threads are named by the client).
   */
  async sendMessage(requester: Requester, message: string, options: MessageOptions = {}): Promise<ConversationResult<TurnStream>> {
    const start = (input: TurnInput) => this.#driver.start(requester, input);
    return this.#withSentFiles(requester, options, (files) => this.#message(requester, message, { ...options, files }, start, true));
  }

  /**
   * `options.files` as ids, those sent with the message stored first (as `uploadFiles` stores them): a message and its
   * files are one call from the Worker, and should `send` be refused, what it stored is let go of, here.
   */
  async #withSentFiles<T>(
    requester: Requester,
    options: MessageOptions,
    send: (ids: string[] | undefined) => Promise<ConversationResult<T>>,
  ): Promise<ConversationResult<T>> {
    const files = options.files ?? [];
    const ids = files.filter((file) => typeof file === "string");
    if (ids.length === files.length) return send(ids.length ? ids : undefined);
    const sent = files.filter((file) => typeof file !== "string");
    const uploaded = await this.uploadFiles(requester, sent, options);
    if (!uploaded.ok) return uploaded;
    let next = 0;
    const result = await send(files.map((file) => (typeof file === "string" ? file : uploaded.value[next++]!.id)));
    if (result.ok) return result;
    const stored = uploaded.value.map((file) => file.id);
    await this.discardFiles(requester, stored);
    return result;
  }

  /**
   * A message's turn, admitted and begun, its leg started by `start` (with a stream for a request, without one for a
   * socket); `options.files`: the ids of files stored in this conversation, which the message carries.
   */
  async #message<T>(
    requester: Requester,
    message: string,
    options: Omit<MessageOptions, "files"> & { files?: string[] | undefined },
    start: (input: TurnInput) => T,
    opensStream: boolean,
  ): Promise<ConversationResult<T>> {
    const files = options.files?.length ? this.#files.references(options.files) : ok([]);
    if (!files.ok) return files;
    return this.#admission.turn(
      requester,
      { kind: "message", message, ...(options.createOwned ? { createOwned: true } : {}) },
      (state) => {
        if (!state) this.#store.create(requester.conversationId, this.#network.entry.name, newGrant(), requester.user);
        this.#store.beginTurn(message, files.value);
        return ok(start({ kind: "message", text: message, ...(files.value.length ? { files: files.value } : {}) }));
      },
      opensStream,
    );
  }

  /**
   * Stores files for a message to carry (sent next, by their ids): checked first (types by their bytes, sizes, counts),
   * nothing stored on a refusal. The first upload creates the conversation, as a first message would. An upload no
   * message sends within the hour is swept.
   */
  async uploadFiles(requester: Requester, files: SentFile[], options: MessageOptions = {}): Promise<ConversationResult<FileRef[]>> {
    // Read whole before anything is decided: no await between the admission and the conversation it may create.
    const incoming = await receivedFiles(files);
    const admitted = this.#admission.access(requester, { orNew: true, userMayCreate: options.createOwned === true });
    if (!admitted.ok) return admitted;
    const unavailable = this.#files.unavailable();
    if (unavailable) return unavailable;
    if (!admitted.value) this.#store.create(requester.conversationId, this.#network.entry.name, newGrant(), requester.user);
    const stored = await this.#files.store(incoming);
    if (stored.ok) this.#store.schedule.planSweep(Date.now() + this.#files.keptMs);
    await this.#settled();
    return stored;
  }

  /** Lets go of uploads a refused message was to carry (nothing of a refusal is kept); ids no message sent only. */
  async discardFiles(requester: Requester, ids: string[]): Promise<ConversationResult<null>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const sent = sentFileIds(this.#store.messages());
    const refs = ids.filter((id) => !sent.has(id)).flatMap((id) => this.#files.get(id) ?? []);
    await this.#files.release(refs);
    return ok(null);
  }

  /** A file's reference, for whoever may read the conversation (an operator only while a person holds it). */
  async fileOf(requester: Requester, fileId: string): Promise<ConversationResult<FileRef>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const ref = this.#files.get(fileId);
    const deskMayRead = !requester.operator || this.#network.get(admitted.value.holding.activeAgent)?.human === true;
    if (!ref || !deskMayRead) return fail("file_not_found", `No file '${fileId}' in this conversation.`);
    return ok(ref);
  }

  /**
   * What its owner's agents remember of them, read-only, for the operator desk while a person holds the conversation: the
   * person answers as the agents would, knowing what they know. A guest's conversation has none.
   */
  async ownerMemories(requester: Requester): Promise<ConversationResult<Memory[]>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const holder = admitted.value.holding.activeAgent;
    if (!this.#network.get(holder)?.human)
      return fail("not_held_by_person", `The customer's memory shows while a person holds the conversation: '${holder}' does.`);
    return ok(await this.#memory.owners());
  }

  /**
   * Rewinds the last turn and runs it again from its user message (`message` replaces its text):
   * its messages, handoffs and what the conversation held return to what they were when it
   * started, whatever its status. Only the last turn can be rewound; what it spent stays counted.
   */
  async retry(requester: Requester, message?: string): Promise<ConversationResult<TurnStream>> {
    return this.#admission.turn(requester, { kind: "retry", message }, (state) => {
      const opening = state!.turn > 0 ? this.#store.rewindLastTurn() : null;
      if (!opening) return fail("nothing_to_retry", "There is no turn to run again: send a message instead.");
      // Its background delegations went with its schedule entries: they stop.
      this.ctx.waitUntil(this.#background.stop());
      // A turn the schedule ran runs again with its note, unless the retry gives a message of its own.
      if (opening.note !== undefined && message === undefined) {
        this.#store.beginTurn({ note: opening.note });
        return ok(this.#driver.start(requester, { kind: "scheduled", note: opening.note }));
      }
      // Run again with the files its message carried (an edit changes the words, not the files).
      const text = message ?? opening.message;
      const files = opening.files ?? [];
      this.#store.beginTurn(text, files);
      return ok(this.#driver.start(requester, { kind: "message", text, ...(files.length ? { files } : {}) }));
    });
  }

  /**
   * Records decisions on what the conversation's runs wait for (yes or no, or answers), each with the run that waits for
   * its call; once none of the turn's waits, resumes the turn as the same agent, and a background run none of whose waits
   * carries on from the alarm. `ignoreRepeats`: decisions already recorded are left out (the AI SDK's client sends them all again).
   */
  async decide(requester: Requester, decisions: Decision[], options: DecideOptions = {}): Promise<ConversationResult<DecisionOutcome>> {
    const decided = await this.#decide(requester, decisions, options, (input) => this.#driver.start(requester, input), true);
    if (!decided.ok) return decided;
    if (decided.value.kind === "started") return ok({ kind: "stream", ...decided.value.started });
    return ok(decided.value);
  }

  /** Whether every decision goes to a background run's wait: one that a socket need not hold until the turn's leg ends. */
  #onlyBackground(decisions: readonly Decision[]): boolean {
    const state = this.#store.state();
    const routed = state && routeDecisions(waitsOf(this.#store, state), decisions);
    return !!routed?.ok && routed.value.every((share) => isBackground(share.wait.run));
  }

  /**
   * Decisions routed to the runs that wait for them (one lookup), checked whole before anything is stored, recorded in one
   * transaction; the turn resumed by `start` once none of its requests is left (docs/user-requests.md, "Which run").
   */
  async #decide<T>(
    requester: Requester,
    decisions: Decision[],
    options: DecideOptions,
    start: (input: TurnInput) => T,
    opensStream: boolean,
  ): Promise<ConversationResult<Decided<T>>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const waits = waitsOf(this.#store, admitted.value);
    // Answers are stored and shown as everything else is: with the configured secrets taken out.
    const asked = this.#redactor.value(options.ignoreRepeats ? withoutRepeats(waits, decisions) : decisions);
    const routed = routeDecisions(waits, asked, requester);
    // What no background run takes is the turn's: while a turn runs, that is the refusal (its wait is not stored yet).
    if (!routed.ok) {
      const idle = this.#admission.access(requester, { idle: true });
      return idle.ok ? { ok: false, error: routed.error } : idle;
    }
    const turn = routed.value.find((share) => share.wait.run.id === undefined);
    if (!turn) {
      const decided = this.#store.decide(sharesOf(routed.value), requester.identity).filter(isBackground);
      return ok({ kind: "background", id: decided[0]!.id, pending: decided.flatMap((w) => undecidedIn(w).map((r) => r.toolCallId)) });
    }
    // The turn's share is taken while no turn runs; once it completes the step, that is a turn starting, admitted as one.
    const idle = this.#admission.access(requester, { idle: true });
    if (!idle.ok) return idle;
    if (!turn.complete) {
      this.#store.decide(sharesOf(routed.value), requester.identity);
      return ok({ kind: "awaiting", pending: undecided(this.#store.state()!).map((p) => p.toolCallId) });
    }
    return this.#admission.turn(
      requester,
      { kind: "resume" },
      (current) => {
        const still = routeDecisions(current ? waitsOf(this.#store, current) : [], asked, requester);
        if (!still.ok) return { ok: false, error: still.error };
        this.#store.decide(sharesOf(still.value), requester.identity, true);
        const state = this.#store.state()!;
        return ok({
          kind: "started" as const,
          started: start({ kind: "resume", suspension: state.suspension!, decisions: state.decisions }),
        });
      },
      opensStream,
    );
  }

  /**
   * The current or last turn's events after `afterId`, then the live run until it ends. A cursor
   * past the last event of a finished turn is refused: it belongs to a conversation deleted since.
   */
  async events(requester: Requester, afterId: number, follow = false): Promise<ConversationResult<EventsOutcome>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const state = admitted.value;
    const running = this.#driver.running;
    // Following a conversation a person holds: its events, then the person's messages as they are sent.
    const hold = follow && !running && this.#network.get(state.holding.activeAgent)?.human ? this.#hold.followers() : undefined;
    if (!running && !hold) {
      if (afterId > state.lastEventId) {
        return fail(
          "event_id_unknown",
          `Event ${afterId} is past this conversation's last event (${state.lastEventId}); it may belong to a deleted conversation of the same id.`,
          { lastEventId: state.lastEventId },
        );
      }
      if (afterId === state.lastEventId) return ok({ kind: "idle" });
    }
    const limited = this.#driver.limitStreams();
    if (limited) return limited;
    return ok({ kind: "stream", ...this.#driver.read(state, afterId, hold) });
  }

  /**
   * `audience`: `desk` for the operator API's reader, who also sees what was written for the agents (system messages, a
   * hand-back's note); everyone else reads the customer's view, without them.
   */
  async getView(
    requester: Requester,
    query: PageQuery = {},
    audience: ViewAudience = "customer",
  ): Promise<ConversationResult<ConversationView>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const view = conversationView(this.#store, admitted.value, this.#driver.running, query, this.#inbox.lastRowsWritten);
    return ok(this.#redactor.value(audience === "desk" ? view : customerView(view)));
  }

  /** Every turn: status, times, usage, handoffs. */
  async turns(requester: Requester): Promise<ConversationResult<TurnSummary[]>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    return ok(this.#redactor.value(this.#store.turns.list(this.#store.handoffs().map(publicRecord))));
  }

  /**
   * One turn (the latest by default) as a task: its status, the messages it added, its handoffs, what it waits on (A2A's
   * tasks are turns).
   */
  async turnView(requester: Requester, turn?: number): Promise<ConversationResult<TurnView>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const view = turnView(this.#store, admitted.value, this.#driver.running, turn ?? admitted.value.turn);
    if (!view) return fail("turn_not_found", `This conversation has no turn ${turn ?? "yet"} (it has ${admitted.value.turn}).`);
    return ok(this.#redactor.value(view));
  }

  /**
   * An operation of a protocol's own on what it keeps in this conversation (A2A's push configs), for whoever may read the
   * conversation: the protocol's part (`Protocol.conversation`) reads `op` and answers.
   */
  async protocolCall(requester: Requester, protocol: string, op: unknown): Promise<ConversationResult<unknown>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    return this.#protocols.call(protocol, op);
  }

  /** A turn's trace: its spans, from the turn down to each model call, tool call and handoff. */
  async turnTrace(requester: Requester, turn: number): Promise<ConversationResult<TurnTrace>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const trace = this.#store.traces.read(turn);
    if (!trace)
      return fail(
        "turn_not_found",
        `No trace of turn ${turn}: only the latest turns keep theirs (turns 1 to ${admitted.value.turn} exist).`,
      );
    // The background runs its calls started, under those calls.
    return ok(this.#redactor.value({ ...trace, spans: [...trace.spans, ...this.#store.runs.spans(turn)] }));
  }

  /** A turn's delegated runs (an agent asked as a tool, in the background or not): each one's path, agent and history. */
  async turnDelegations(requester: Requester, turn: number): Promise<ConversationResult<{ delegations: DelegatedRun[] }>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    if (turn > admitted.value.turn) return fail("turn_not_found", `No turn ${turn}: turns 1 to ${admitted.value.turn} exist.`);
    return ok(this.#redactor.value({ delegations: this.#store.delegatedRuns(turn) }));
  }

  /**
   * The conversation as it stood after `afterTurn`, for a fork; the conversation itself is untouched. `forkId`: the
   * fork's id, which holds the files of that history from now on (shared, not copied), before the snapshot is handed out.
   */
  async forkSnapshot(requester: Requester, afterTurn: number, forkId?: string): Promise<ConversationResult<ForkSnapshot>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const state = admitted.value;
    if (afterTurn > state.turn)
      return fail("turn_not_found", `This conversation has ${state.turn} turns; fork after one of them (1 to ${state.turn}).`);
    if (this.#driver.running && afterTurn === state.turn)
      return fail("run_in_progress", `${RUN_IN_PROGRESS} Or fork after an earlier turn.`);
    const taken = this.#store.forkSnapshot(afterTurn);
    if (!taken) return fail("turn_not_found", `Turn ${afterTurn} was stored before forks were possible; fork after a later turn.`);
    const snapshot = state.owner ? { ...taken, owner: state.owner } : taken;
    const sent = sentFileIds(snapshot.messages.map((row) => readRow(MessageSchema, row.data, "message")));
    const files = [...sent].flatMap((id) => this.#files.get(id) ?? []);
    if (!files.length) return ok(snapshot);
    if (forkId) await this.#files.shareWith(forkId, files);
    return ok({ ...snapshot, files });
  }

  /** Creates this conversation as a fork of another, from its snapshot, with a grant of its own. */
  async importFork(requester: Requester, snapshot: ForkSnapshot): Promise<ConversationResult<{ activeAgent: string; grant: string }>> {
    // A fork's id is freshly made by the Worker: it cannot be taken.
    if (this.#store.state()) throw new Error(`conversation ${requester.conversationId} already exists`);
    // A fork keeps its owner, whichever credential made it (the owner's sign-in, the conversation's token, the master key).
    const state = this.#store.importFork(requester.conversationId, newGrant(), snapshot, requester.user ?? snapshot.owner);
    this.#files.adopt(snapshot.files ?? []);
    await this.#settled();
    return ok({ activeAgent: state.holding.activeAgent, grant: state.grant! });
  }

  /**
   * A page of the history with what a client draws it with: the handoffs, and the step waiting for
   * decisions (on the newest page only). The edge makes the AI SDK's `UIMessage[]` of it.
   */
  async historyPage(
    requester: Requester,
    query: PageQuery = {},
  ): Promise<ConversationResult<{ history: ClientHistory; page: HistoryPage }>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    return ok(this.#redactor.value(historyPageOf(this.#store, admitted.value, query)));
  }

  /**
   * Stops the running turn: its model request is aborted, tools not yet started never start, what
   * was committed stays, and its stream ends with `done`, status `cancelled`. Answers once the turn
   * has ended, so a new message is accepted right after; `cancelled: false` when nothing was running.
   */
  async cancel(requester: Requester): Promise<ConversationResult<{ cancelled: boolean }>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    return ok({ cancelled: await this.#driver.cancel() });
  }

  /** Erases the conversation entirely: its tokens are revoked with it, and it leaves the operator desk. */
  async erase(requester: Requester): Promise<ConversationResult<null>> {
    const admitted = this.#admission.access(requester, { idle: true });
    if (!admitted.ok) return admitted;
    // Its background delegations stop before it goes: none writes into what is erased.
    await this.#background.stop(true);
    await this.#inbox.forget(admitted.value);
    // Its files' bytes go with it, unless a fork still holds them.
    await this.#files.releaseAll();
    await this.#store.erase();
    await this.#hold.end(requester.conversationId);
    return ok(null);
  }

  /** A person's message to the user, while a person holds the conversation: stored, and streamed to whoever follows it. */
  async operatorMessage(
    requester: Requester,
    text: string,
    operator?: string,
    by?: OperatorIdentity,
  ): Promise<ConversationResult<{ eventId: number; agent: string }>> {
    return this.#admission.turn(requester, { kind: "person" }, async (state) => {
      const person = state!.holding.activeAgent;
      const eventId = await this.#hold.say(state!, person, text, operator, by);
      await this.#settled();
      return ok({ eventId, agent: person });
    });
  }

  /**
   * The person gives the conversation back to an agent, with a note the agent reads. A message the customer wrote after
   * the person's last answer is answered now, by the agent it came back to (a turn of the hand-back's own, as a person's
   * deadline runs one); otherwise the customer's next message goes to it.
   */
  async operatorHandBack(
    requester: Requester,
    to: string,
    note: string,
    by?: OperatorIdentity,
  ): Promise<ConversationResult<{ activeAgent: string }>> {
    return this.#admission.turn(requester, { kind: "person" }, async (state) => {
      const target = this.#network.get(to);
      if (!target || target.human) {
        const agents = [...this.#network.agents.values()].filter((a) => !a.human).map((a) => a.name);
        return fail("unknown_agent", `'${to}' is not an agent of this network to hand back to: one of ${agents.join(", ")}.`);
      }
      const person = state!.holding.activeAgent;
      // The hand back's commit is made as it is called, and the leg claimed right after: nothing starts between them.
      const handedBack = this.#hold.handBack(state!, person, to, note, by);
      const answering = leftOpen(this.#store.messages()) ? this.#answerLeftOpen(state!.conversationId, person) : null;
      await handedBack;
      await answering;
      await this.#settled();
      return ok({ activeAgent: to });
    });
  }

  /** The holder answers the customer's last message, which came while `person` held the conversation. */
  #answerLeftOpen(conversationId: string, person: string): Promise<unknown> {
    const note = `The customer's last message came while '${person}' held the conversation, and no one has answered it yet: answer it now.`;
    this.#store.beginTurn({ note });
    return this.#driver.runUnread({ conversationId }, { kind: "scheduled", note });
  }

  /** Renames or archives the conversation; its owner's inbox shows it at once. */
  async update(
    requester: Requester,
    meta: { title?: string | undefined; archived?: boolean | undefined },
  ): Promise<ConversationResult<InboxEntry>> {
    const admitted = this.#admission.access(requester);
    if (!admitted.ok) return admitted;
    const state = this.#store.describe(meta);
    await this.#settled();
    return ok(this.#inbox.lastTold ?? this.#inbox.entry(state));
  }
}

/** Whether the customer's last message has no answer after it (by an agent or a person). */
function leftOpen(history: readonly Message[]): boolean {
  return history.findLastIndex((m) => m.role === "user") > history.findLastIndex((m) => m.role === "assistant");
}
