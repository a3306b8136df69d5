/**
 * Messages the conversation sends out of itself (the app's webhook, what a protocol's part sends), in
 * a table of their own, apart from the schedule's timers: one row per message, kept until it is
 * delivered or its attempts are spent, with the same id on every attempt. An attempt moves the
 * row's next try forward before it starts, so a process that dies mid-delivery tries again later
 * (at least once: a receiver dedupes by id). The alarm rings for the earliest row too.
 */
import type { SqlWriter } from "./sql-writer.ts";
import * as z from "zod";
import { exactly } from "../../runtime/schema/exactly.ts";
import { readRow } from "./row-schemas.ts";

export interface OutboxMessage {
  id: string;
  /** When it is (next) due, epoch ms. */
  dueAt: number;
  /** Attempts started so far. */
  attempt: number;
  /** The body, exactly as it is sent on every attempt. */
  body: string;
  /** Where it goes when not to the app's webhook: what a protocol's part sends (an A2A client's push config). */
  target?: Destination;
}

/** Where a message a protocol sends goes: its URL, and the headers its receiver asked for (a token, credentials). */
export interface Destination {
  url: string;
  headers?: Record<string, string> | undefined;
}

/** A destination as stored. */
const DestinationSchema = exactly<Destination>()(
  z.lazy(() => z.object({ url: z.string(), headers: z.record(z.string(), z.string()).optional() })),
);

export class Outbox {
  readonly #db: SqlWriter;

  constructor(db: SqlWriter) {
    this.#db = db;
  }

  /** A message to send as soon as the alarm rings: to the app's webhook, or to `target`. */
  add(id: string, body: string, dueAt = Date.now(), target?: Destination): void {
    const to = target ? JSON.stringify(target) : null;
    this.#db.exec(`INSERT INTO outbox (id, due_at, attempt, body, target) VALUES (?, ?, 0, ?, ?)`, id, dueAt, body, to);
    this.#db.changed("schedule");
  }

  /** Messages due by `now`, the earliest first. */
  due(now = Date.now()): OutboxMessage[] {
    return this.#db
      .rows<{ id: string; due_at: number; attempt: number; body: string; target: string | null }>(
        `SELECT id, due_at, attempt, body, target FROM outbox WHERE due_at <= ? ORDER BY due_at, id`,
        now,
      )
      .map((row) => ({
        id: row.id,
        dueAt: row.due_at,
        attempt: row.attempt,
        body: row.body,
        ...(row.target ? { target: readRow(DestinationSchema, row.target, "outbox message's destination") } : {}),
      }));
  }

  /** An attempt starts: counted, and the next one is due at `retryAt` unless this one succeeds. */
  attempt(id: string, retryAt: number): void {
    this.#db.exec(`UPDATE outbox SET attempt = attempt + 1, due_at = ? WHERE id = ?`, retryAt, id);
    this.#db.changed("schedule");
  }

  /** Delivered, or given up. */
  remove(id: string): void {
    this.#db.exec(`DELETE FROM outbox WHERE id = ?`, id);
    this.#db.changed("schedule");
  }

  /** When the earliest message is due; null when none waits. */
  nextDue(): number | null {
    return this.#db.rows<{ at: number | null }>(`SELECT min(due_at) AS at FROM outbox`)[0]?.at ?? null;
  }
}
