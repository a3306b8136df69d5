/**
 * The conversation's stream events in SQLite: packed several to a row (rows written are what
 * storage is billed by), read back a row at a time for a replay, and numbered past a crash.
 */
import type { RunStartEvent } from "../../runtime/events.ts";
import type { StoredEvent } from "../../wire/sse.ts";
import type { SqlWriter } from "./sql-writer.ts";
import { readHandoff, ROW_VERSION } from "./stored-state.ts";
import { capEvent } from "./stored-size-limits.ts";
import * as z from "zod";
import { EventsRowSchema, fitted, readRow } from "./row-schemas.ts";

/**
 * Event ids skipped after a crash. Events of the step in flight were streamed but never stored;
 * the next ids start past any of them, so a reconnecting client cannot mistake new events for
 * ones it already has.
 */
export const CRASH_ID_GAP = 100_000;

/** An events row stays well under SQLite's 2 MB row limit however much a step streamed. */
const EVENT_ROW_CHARS = 512 * 1024;

export class EventLog {
  readonly #db: SqlWriter;

  constructor(db: SqlWriter) {
    this.#db = db;
  }

  /** The id of the last stored event; 0 before any. */
  lastId(): number {
    return this.#db.sql.exec<{ id: number | null }>(`SELECT max(last_id) AS id FROM events`).one().id ?? 0;
  }

  /** Packs events several to a row, starting a new row before one would pass EVENT_ROW_CHARS. Call inside a transaction. */
  insert(turn: number, events: readonly StoredEvent[]): void {
    let row: string[] = [];
    let size = 0;
    let first = 0;
    const flush = (last: number) => {
      if (row.length === 0) return;
      const data = `[${row.join(",")}]`;
      this.#db.exec(`INSERT INTO events (first_id, last_id, turn, data, v) VALUES (?, ?, ?, ?, ?)`, first, last, turn, data, ROW_VERSION);
      row = [];
      size = 0;
    };
    for (const [i, event] of events.entries()) {
      const json = JSON.stringify(capEvent(event));
      if (row.length > 0 && size + json.length > EVENT_ROW_CHARS) flush(events[i - 1]!.id);
      if (row.length === 0) first = event.id;
      row.push(json);
      size += json.length + 1;
    }
    flush(events.at(-1)?.id ?? 0);
    this.#db.stored(events);
  }

  /** The last leg's start stored, of any turn (read backwards a row at a time): undefined before any. */
  lastStart(): (RunStartEvent & { id: number }) | undefined {
    type Row = { first_id: number; data: string; v: number };
    for (let before = Number.POSITIVE_INFINITY; ; ) {
      const row = this.#db.rows<Row>(
        `SELECT first_id, data, v FROM events WHERE first_id < ? ORDER BY first_id DESC LIMIT 1`,
        before === Number.POSITIVE_INFINITY ? Number.MAX_SAFE_INTEGER : before,
      )[0];
      if (!row) return undefined;
      const start = readEvents(row).findLast((e) => e.type === "run-start");
      if (start?.type === "run-start") return start;
      before = row.first_id;
    }
  }

  /**
   * Reads one turn's stored events with an id above `afterId` (and below `beforeId`), a row per
   * call, so a replay holds one row in memory however large the turn; null after the last.
   * `every`: the events of every turn after `afterId` (a socket resuming across turns).
   * Handoff events stored by older releases come out in today's form.
   */
  replay(turn: number | "every", afterId: number, beforeId = Number.POSITIVE_INFINITY): () => StoredEvent[] | null {
    type Row = { first_id: number; turn: number; data: string; v: number };
    let cursor: number | null = null;
    return () => {
      const row =
        cursor === null
          ? this.#db.rows<Row>(
              `SELECT first_id, turn, data, v FROM events WHERE (turn = ? OR ? = 'every') AND last_id > ? ORDER BY first_id LIMIT 1`,
              turn === "every" ? -1 : turn,
              turn === "every" ? "every" : "",
              afterId,
            )[0]
          : this.#db.rows<Row>(`SELECT first_id, turn, data, v FROM events WHERE first_id > ? ORDER BY first_id LIMIT 1`, cursor)[0];
      if (!row || (turn !== "every" && row.turn !== turn) || row.first_id >= beforeId) return null;
      cursor = row.first_id;
      return readEvents(row).filter((event) => event.id > afterId && event.id < beforeId);
    };
  }
}

/**
 * The start of a leg that the next start of the object writes when it ends a turn whose running leg stored nothing (cut
 * off before its first write): every leg in the replay starts with `run-start`. Null when the turn's last leg is open
 * (its start is stored, its end not). It takes the model of the last leg started, since the store knows no network.
 */
export function recoveredLegStart(log: EventLog, turn: number, conversationId: string, agent: string): RunStartEvent | null {
  let last: StoredEvent | undefined;
  let start: RunStartEvent | undefined;
  const next = log.replay(turn, 0);
  for (let batch = next(); batch; batch = next())
    for (const event of batch) {
      last = event;
      if (event.type === "run-start") start = event;
    }
  if (last && last.type !== "done" && last.type !== "error") return null;
  start ??= log.lastStart();
  return { type: "run-start", conversationId, agent, model: start?.model ?? "unknown", ...(last ? { resumed: true } : {}) };
}

/** An event as an events row keeps it, before it is checked: its id and type. */
const RawEventsSchema = z.lazy(() => z.array(z.looseObject({ id: z.number(), type: z.string() })));
type RawEvent = z.infer<typeof RawEventsSchema>[number];

/**
 * An events row's events in today's form. A row of version 1 has its handoff events in their older forms; a hand-back
 * stored with its note (before events left it out) is read without it, as every reader is now sent it.
 */
function readEvents(row: { data: string; v: number }): StoredEvent[] {
  if (row.v >= ROW_VERSION && !row.data.includes('"hand-back"')) return readRow(EventsRowSchema, row.data, "events row");
  const raw = readRow(RawEventsSchema, row.data, "events row");
  const current = raw.map((event) => withoutNote(row.v >= ROW_VERSION ? event : upgraded(event)));
  return fitted(EventsRowSchema, current, "events row");
}

function withoutNote(event: RawEvent): RawEvent {
  if (event.type !== "handoff" || event.kind !== "hand-back") return event;
  const { note: _note, ...shown } = event;
  return shown;
}

function upgraded(event: RawEvent): RawEvent {
  if (event.type !== "handoff") return event;
  const { id, type: _type, ...record } = event;
  // The record is read in its row's version, 1: events rows keep the version apart from the events.
  return { id, type: "handoff", ...readHandoff(record, 1) };
}
