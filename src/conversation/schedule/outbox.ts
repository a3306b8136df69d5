/**
 * Messages the conversation sends out of itself (the app's webhook; push notifications later), in
 * a table of their own, apart from the schedule's timers: one row per message, kept until it is
 * delivered or its attempts are spent, with the same id on every attempt. An attempt moves the
 * row's next try forward before it starts, so a process that dies mid-delivery tries again later
 * (at least once: a receiver dedupes by id). The alarm rings for the earliest row too.
 */
import type { SqlWriter } from "../storage/sql-writer.ts";

export interface OutboxMessage {
  id: string;
  /** When it is (next) due, epoch ms. */
  dueAt: number;
  /** Attempts started so far. */
  attempt: number;
  /** The body, exactly as it is sent on every attempt. */
  body: string;
}

export class Outbox {
  readonly #db: SqlWriter;

  constructor(db: SqlWriter) {
    this.#db = db;
  }

  /** A message to send as soon as the alarm rings. */
  add(id: string, body: string, dueAt = Date.now()): void {
    this.#db.exec(`INSERT INTO outbox (id, due_at, attempt, body) VALUES (?, ?, 0, ?)`, id, dueAt, body);
    this.#db.changed("schedule");
  }

  /** Messages due by `now`, the earliest first. */
  due(now = Date.now()): OutboxMessage[] {
    return this.#db
      .rows<{ id: string; due_at: number; attempt: number; body: string }>(
        `SELECT id, due_at, attempt, body FROM outbox WHERE due_at <= ? ORDER BY due_at, id`,
        now,
      )
      .map((row) => ({ id: row.id, dueAt: row.due_at, attempt: row.attempt, body: row.body }));
  }

  /** Every message waiting, the earliest first. */
  list(): OutboxMessage[] {
    return this.due(Number.MAX_SAFE_INTEGER);
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
