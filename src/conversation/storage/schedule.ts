/**
 * A conversation's schedule, on Durable Object alarms: entries in its SQLite (a follow-up a tool
 * scheduled, the deadline of a suspended step's approvals, a person's deadline to answer) and the
 * object's one alarm set to the earliest. An entry leaves the table in the transaction that writes
 * its first effect, so it runs once even when the alarm handler runs twice or the process dies
 * inside it (before that write it did nothing, and the next alarm runs it).
 */
import { RuntimeError } from "../../runtime/errors.ts";
import type {
  BackgroundRequest,
  FollowUpRequest,
  ScheduledFollowUp,
  Scheduler,
  StartedDelegation,
} from "../../runtime/ports/scheduler-port.ts";
import { REQUEST_EXPIRED } from "../../runtime/wait/requests.ts";
import { nextDeadline, type WaitState } from "../../runtime/wait/deadlines.ts";
import { fail, ok, type ConversationResult } from "../results.ts";
import type { SqlWriter } from "../storage/sql-writer.ts";
import { exactly } from "../../runtime/schema/exactly.ts";
import { fitted, readRow } from "../storage/row-schemas.ts";
import * as z from "zod";

/** One entry of the conversation's schedule, on its alarm: what is due, and when. */
export type ScheduleEntry =
  /**
   * A tool's follow-up: whoever holds the conversation when it is due runs a turn with the note. `delegated`: it brings
   * a background delegation's result (the note is all the turn is told).
   */
  | { id: string; kind: "follow-up"; dueAt: number; turn: number; note: string; agent: string; toolCallId: string; delegated?: string }
  /**
   * A background delegation (`asTool({ background: true })`): `agent` does `request` apart from any turn, and `askedBy`
   * gets the result as a follow-up. While it runs it is due again a lease later (see BackgroundWork).
   */
  | ({ id: string; kind: "delegation"; dueAt: number; turn: number } & BackgroundRequest)
  /**
   * The earliest deadline of a run's undecided requests: those past theirs are declined `expired`. `run`: a background
   * run's (its entry's id); absent, the turn's. Stored before as `approval-expiry`, read as this.
   */
  | { id: string; kind: "request-expiry"; dueAt: number; turn: number; run?: string }
  /** A person handed the conversation has not answered: it goes back to an agent, which answers the user. */
  | { id: string; kind: "person-timeout"; dueAt: number; turn: number; person: string; handedBy: string }
  /** Uploads no message sent are let go of (ConversationFiles.sweep); of no turn (turn 0), so no rewind takes it away. */
  | { id: string; kind: "file-sweep"; dueAt: number; turn: number }
  /** The conversation has gone quiet: what it said since its last read is read for its owner's memory (ConversationMemory). */
  | { id: string; kind: "memory-read"; dueAt: number; turn: number };

type NewEntry = ScheduleEntry extends infer E ? (E extends ScheduleEntry ? Omit<E, "id" | "turn"> : never) : never;

/** The reason an undecided call past its deadline is declined with. */
export const EXPIRED = REQUEST_EXPIRED;

/** The bounds of follow-ups: how many may wait, how soon and how late one may be. */
export const FOLLOW_UP_BOUNDS = { maxPending: 20, minDelayMs: 60_000, maxDelayMs: 366 * 86_400_000 } as const;

/** Background delegations that may wait or run at once in one conversation. */
export const MAX_BACKGROUND = 8;

/** An alarm that finds a turn running tries again this much later. */
export const BUSY_RETRY_MS = 2_000;

/**
 * Every change of the schedule is told as `schedule` written (SqlWriter.changed): the alarm follows
 * from that in one place (CommitEffects), never from the code that changed it.
 */
export class Schedule implements Scheduler {
  readonly #db: SqlWriter;
  readonly #turn: () => number;
  /** No entry is due before this (an alarm that found a turn running): ringing sooner would only find it running again. */
  #wait: number | null = null;

  /** `turn`: the conversation's current turn, which entries scheduled now belong to (a rewind takes them away). */
  constructor(db: SqlWriter, turn: () => number) {
    this.#db = db;
    this.#turn = turn;
  }

  /** A tool's follow-up, within the bounds; refused ones are errors the model reads. */
  async schedule(request: FollowUpRequest): Promise<ScheduledFollowUp> {
    const now = request.askedAt;
    const { maxPending, minDelayMs, maxDelayMs } = FOLLOW_UP_BOUNDS;
    if (request.at < now + minDelayMs)
      throw new RuntimeError("schedule_refused", `A follow-up must be at least ${minDelayMs / 60_000} minute(s) from now.`);
    if (request.at > now + maxDelayMs)
      throw new RuntimeError("schedule_refused", `A follow-up can be at most ${maxDelayMs / 86_400_000} days from now.`);
    const pending = this.list().filter((e) => e.kind === "follow-up").length;
    if (pending >= maxPending)
      throw new RuntimeError("schedule_refused", `This conversation already has ${pending} follow-ups waiting (at most ${maxPending}).`);
    const entry = this.add({
      kind: "follow-up",
      dueAt: request.at,
      note: request.note,
      agent: request.agent,
      toolCallId: request.toolCallId,
    });
    return { id: entry.id, at: new Date(entry.dueAt).toISOString() };
  }

  /** A background delegation, due now (the alarm starts it); refused past MAX_BACKGROUND at once. */
  async delegate(request: BackgroundRequest): Promise<StartedDelegation> {
    const pending = this.list().filter((e) => e.kind === "delegation").length;
    if (pending >= MAX_BACKGROUND)
      throw new RuntimeError(
        "schedule_refused",
        `This conversation already has ${pending} delegations in the background (at most ${MAX_BACKGROUND}).`,
      );
    const { agent, request: text, askedBy, toolCallId } = request;
    const entry = this.add({ kind: "delegation", dueAt: Date.now(), agent, request: text, askedBy, toolCallId });
    return { id: entry.id, agent };
  }

  /**
   * A run's wait's deadline, one entry for every run: at the earliest deadline of its undecided requests, replacing the
   * run's entry before it (`run`: a background run's id; absent, the turn's). None when no request has a deadline.
   */
  planExpiry(wait: WaitState, run?: string): void {
    const dueAt = nextDeadline(wait);
    this.removeExpiry(run);
    if (dueAt !== undefined) this.add({ kind: "request-expiry", dueAt, ...(run === undefined ? {} : { run }) });
  }

  /** A run's deadline entry goes (its wait is decided, or over): the turn's, or a background run's (`run`). */
  removeExpiry(run?: string): void {
    for (const entry of this.list())
      if (entry.kind === "request-expiry" && entry.run === run) this.#write(`DELETE FROM schedule WHERE id = ?`, entry.id);
  }

  /** The files' sweep at `dueAt`, or sooner when one is planned sooner already; none when `dueAt` is null. */
  planSweep(dueAt: number | null): void {
    const planned = this.list().filter((e) => e.kind === "file-sweep");
    if (dueAt !== null && planned.some((e) => e.dueAt <= dueAt)) return;
    for (const entry of planned) this.remove(entry.id);
    if (dueAt !== null) this.add({ kind: "file-sweep", dueAt }, 0);
  }

  /** Adds an entry, of the current turn unless `turn` says which. */
  add(entry: NewEntry, of = this.#turn()): ScheduleEntry {
    const stored = { ...entry, id: crypto.randomUUID(), turn: of } as ScheduleEntry;
    const { id, kind, dueAt, turn, ...data } = stored;
    this.#db.exec(
      `INSERT INTO schedule (id, kind, due_at, turn, data) VALUES (?, ?, ?, ?, ?)`,
      id,
      kind,
      dueAt,
      turn,
      JSON.stringify(data),
    );
    this.#db.changed("schedule");
    return stored;
  }

  /** Every entry, the earliest first. */
  list(): ScheduleEntry[] {
    return this.#db.rows<EntryRow>(`SELECT * FROM schedule ORDER BY due_at, id`).map(entryOf);
  }

  /** What GET …/schedule shows: what the conversation waits for (not the files' housekeeping, nor the memory's). */
  shown(): ScheduledView[] {
    return this.list()
      .filter((e) => e.kind !== "file-sweep" && e.kind !== "memory-read")
      .map(scheduledView);
  }

  /** Cancels one entry (`id`) or every follow-up. */
  cancel(id?: string): ConversationResult<{ cancelled: number }> {
    const entries = this.list().filter((e) => (id === undefined ? e.kind === "follow-up" : e.id === id));
    if (id !== undefined && !entries.length) return fail("schedule_entry_not_found", `Nothing scheduled has the id '${id}'.`);
    for (const entry of entries) this.remove(entry.id);
    return ok({ cancelled: entries.length });
  }

  /** One entry, when it is there. */
  get(id: string): ScheduleEntry | undefined {
    return this.#db.rows<EntryRow>(`SELECT * FROM schedule WHERE id = ?`, id).map(entryOf)[0];
  }

  /** Entries due by `now`, the earliest first. */
  due(now = Date.now()): ScheduleEntry[] {
    return this.list().filter((e) => e.dueAt <= now);
  }

  /** The entry leaves with the next transaction, the one that writes its effect. */
  removeWithNextWrite(id: string): void {
    this.#db.deferAlso(() => this.remove(id));
  }

  /** Removes an entry (none when it is not there). */
  remove(id: string): void {
    this.#write(`DELETE FROM schedule WHERE id = ?`, id);
  }

  removeKind(kind: ScheduleEntry["kind"]): void {
    this.#write(`DELETE FROM schedule WHERE kind = ?`, kind);
  }

  /** A rewound turn's entries go with it. */
  removeTurn(turn: number): void {
    this.#write(`DELETE FROM schedule WHERE turn = ?`, turn);
  }

  /** An entry due later; its id stays, so it can still be cancelled by it. */
  postpone(id: string, dueAt: number): void {
    this.#write(`UPDATE schedule SET due_at = ? WHERE id = ?`, dueAt, id);
  }

  /** Entries due before `at` wait until then (an alarm that found a turn running tries again at `at`, not at once). */
  waitUntil(at: number): void {
    this.#wait = at;
    this.#db.changed("schedule");
  }

  /** When the alarm should ring: the earliest entry, not before a wait asked for; null when nothing waits. */
  nextWake(now = Date.now()): number | null {
    const earliest = this.#db.rows<{ at: number | null }>(`SELECT min(due_at) AS at FROM schedule`)[0]?.at ?? null;
    if (earliest === null || this.#wait === null || this.#wait <= now) return earliest;
    return Math.max(earliest, this.#wait);
  }

  #write(query: string, ...bindings: Array<string | number>): void {
    this.#db.exec(query, ...bindings);
    this.#db.changed("schedule");
  }
}

type EntryRow = { id: string; kind: string; due_at: number; turn: number; data: string };

/** A stored entry: its columns and, beside them, what its kind keeps in `data`. */
const ScheduleEntrySchema = exactly<ScheduleEntry>()(
  z.lazy(() => {
    const common = { id: z.string(), dueAt: z.number(), turn: z.number() };
    return z.discriminatedUnion("kind", [
      z.object({
        ...common,
        kind: z.literal("follow-up"),
        note: z.string(),
        agent: z.string(),
        toolCallId: z.string(),
        delegated: z.string().optional(),
      }),
      z.object({
        ...common,
        kind: z.literal("delegation"),
        agent: z.string(),
        request: z.string(),
        askedBy: z.string(),
        toolCallId: z.string(),
      }),
      z.object({ ...common, kind: z.literal("request-expiry"), run: z.string().optional() }),
      z.object({ ...common, kind: z.literal("person-timeout"), person: z.string(), handedBy: z.string() }),
      z.object({ ...common, kind: z.literal("file-sweep") }),
      z.object({ ...common, kind: z.literal("memory-read") }),
    ]);
  }),
);

const EntryDataSchema = z.lazy(() => z.record(z.string(), z.unknown()));

function entryOf(row: EntryRow): ScheduleEntry {
  // Named for approvals before every kind of request had deadlines.
  const kind = row.kind === "approval-expiry" ? "request-expiry" : row.kind;
  const data = readRow(EntryDataSchema, row.data, `${row.kind} entry`);
  return fitted(ScheduleEntrySchema, { ...data, id: row.id, kind, dueAt: row.due_at, turn: row.turn }, `${row.kind} entry`);
}

/** An entry as GET …/schedule shows it: its time as ISO 8601. */
export type ScheduledView = Omit<ScheduleEntry, "dueAt"> & { dueAt: string };

export function scheduledView(entry: ScheduleEntry): ScheduledView {
  return { ...entry, dueAt: new Date(entry.dueAt).toISOString() };
}
