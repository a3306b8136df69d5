import { DurableObject } from "cloudflare:workers";
import { userObjectName } from "../user-object-name.ts";

/** Where a conversation stands, as a user's list shows it. */
export type InboxStatus =
  | "idle"
  | "running"
  | "completed"
  | "awaiting_approval"
  | "awaiting_input"
  | "awaiting_human"
  | "failed"
  | "cancelled";

/** One conversation in a user's inbox. */
export interface InboxEntry {
  id: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  /** Who holds it: an agent, or a person (`humanAgent`). */
  holder: string;
  status: InboxStatus;
  /** The last message, cut short. */
  snippet: string;
  archived: boolean;
}

/** A page of the inbox: newest first; `next` is the `before` cursor of the page after it, null at the end. */
export interface InboxPage {
  conversations: InboxEntry[];
  next: string | null;
}

/** A page of an inbox: a search, archived or not, the cursor and the page size (GET /v1/conversations). */
export interface InboxQuery {
  limit: number;
  /** The previous page's `next`: entries after it. */
  before?: string | undefined;
  /** Full-text search over titles and every user and agent message: each word a prefix, all of them needed. */
  q?: string | undefined;
  /** Archived ones instead of the others. */
  archived?: boolean | undefined;
}

/** The bindings the inboxes need: one Durable Object per user, named by a hash of the user's id. */
export interface InboxBindings {
  INBOXES?: DurableObjectNamespace<Inbox>;
}

type Row = Record<string, SqlStorageValue> & {
  id: string;
  title: string;
  created_at: number;
  updated_at: number;
  holder: string;
  status: string;
  snippet: string;
  archived: number;
};

/** What a list reads of a row (not the words kept for search, the row's largest part). */
const ENTRY_COLUMNS = ["id", "title", "created_at", "updated_at", "holder", "status", "snippet", "archived"]
  .map((c) => `inbox.${c}`)
  .join(", ");

/**
 * Columns added to the first form of the table: what a conversation spent (in all, and on its last day), and whether search has its words.
 */
const ADDED_COLUMNS = [
  ["tokens", "INTEGER NOT NULL DEFAULT 0"],
  ["day", "TEXT NOT NULL DEFAULT ''"],
  ["day_tokens", "INTEGER NOT NULL DEFAULT 0"],
  ["indexed", "INTEGER NOT NULL DEFAULT 0"],
  ["words", "TEXT NOT NULL DEFAULT ''"],
] as const;

/**
 * A signed-in user's conversations, in a Durable Object of their own (SQLite, with an FTS5 index
 * over titles and the words of every message). The conversations' own objects are the truth: each tells its
 * owner's inbox its whole entry when it is created, after each turn, when it is renamed or
 * archived, and when it is deleted; a missed write heals with the next one, since each is whole.
 *
 * A turn costs the inbox one row written: the entry's row, which also carries what the
 * conversation spent today (the daily budget sums them) and a flag that its words changed. The
 * search index is brought up to date when someone searches, once per changed conversation, and
 * the list is sorted without an index (an index on the time of last activity would cost a second
 * row per turn).
 */
export class Inbox extends DurableObject<Record<string, unknown>> {
  readonly #sql: SqlStorage;
  /** Conversations with a turn running now: kept in memory only (no row written); the turn's end clears it. */
  readonly #running = new Set<string>();

  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS inbox (id TEXT PRIMARY KEY, title TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
         holder TEXT NOT NULL, status TEXT NOT NULL, snippet TEXT NOT NULL, archived INTEGER NOT NULL)`,
    );
    const columns = new Set(
      this.#sql
        .exec<{ name: string }>(`PRAGMA table_info(inbox)`)
        .toArray()
        .map((c) => c.name),
    );
    for (const [name, type] of ADDED_COLUMNS) if (!columns.has(name)) this.#sql.exec(`ALTER TABLE inbox ADD COLUMN ${name} ${type}`);
    this.#sql.exec(`DROP INDEX IF EXISTS inbox_updated`);
    this.#createSearchIndex();
  }

  /**
   * The search index over titles, last messages and every message's words, one row per entry under
   * the entry's own rowid (so an entry's words are replaced by rowid, not found by a scan). An inbox
   * made before it searched every message had one without the words, keyed by id: it is replaced,
   * and every entry is indexed again at the next search (with the words its conversation tells next).
   */
  #createSearchIndex(): void {
    if (this.#sql.exec(`SELECT 1 FROM sqlite_master WHERE name = 'inbox_text'`).toArray().length) return;
    this.ctx.storage.transactionSync(() => {
      this.#sql.exec(`DROP TABLE IF EXISTS inbox_search`);
      this.#sql.exec(`CREATE VIRTUAL TABLE inbox_text USING fts5(title, snippet, words)`);
      this.#sql.exec(`UPDATE inbox SET indexed = 0`);
    });
  }

  /**
   * Keeps a conversation's entry as its object says it is now; `tokens` is the conversation's total
   * spent so far, whose growth since it last said counts toward today's tokens (so a missed write is
   * counted with the next one); `words`, those of its messages search finds. Answers the rows it
   * wrote (what Durable Object storage bills).
   */
  async record(entry: InboxEntry, tokens?: number, words = ""): Promise<{ rowsWritten: number }> {
    this.#running.delete(entry.id);
    type Known = { tokens: number; day: string; day_tokens: number; title: string; snippet: string; words: string; indexed: number };
    const known = this.#sql
      .exec<Known>(`SELECT tokens, day, day_tokens, title, snippet, words, indexed FROM inbox WHERE id = ?`, entry.id)
      .toArray()[0];
    const total = Math.max(known?.tokens ?? 0, tokens ?? 0);
    const today = utcDay();
    const grown = total - (known?.tokens ?? 0);
    const dayTokens = (known?.day === today ? known.day_tokens : 0) + grown;
    // The search index still has these words when none of them changed.
    const same = known?.title === entry.title && known.snippet === entry.snippet && known.words === words;
    const indexed = known?.indexed === 1 && same ? 1 : 0;
    const cursor = this.#sql.exec(
      `INSERT INTO inbox (id, title, created_at, updated_at, holder, status, snippet, archived, tokens, day, day_tokens, indexed, words)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET title = excluded.title, updated_at = excluded.updated_at, holder = excluded.holder,
         status = excluded.status, snippet = excluded.snippet, archived = excluded.archived, tokens = excluded.tokens,
         day = excluded.day, day_tokens = excluded.day_tokens, indexed = excluded.indexed, words = excluded.words`,
      entry.id,
      entry.title,
      entry.createdAt,
      entry.updatedAt,
      entry.holder,
      entry.status,
      entry.snippet,
      entry.archived ? 1 : 0,
      total,
      today,
      dayTokens,
      indexed,
      words,
    );
    return { rowsWritten: cursor.rowsWritten };
  }

  /** A turn started at `since`: the list shows the conversation `running` until its entry is next recorded (unless it already was). */
  async markRunning(id: string, since: number): Promise<void> {
    const updated = this.#sql.exec<{ updated_at: number }>(`SELECT updated_at FROM inbox WHERE id = ?`, id).toArray()[0]?.updated_at;
    if (updated === undefined || updated < since) this.#running.add(id);
  }

  /** Tokens the user's conversations spent today (UTC). */
  async tokensToday(): Promise<number> {
    return (
      this.#sql.exec<{ tokens: number | null }>(`SELECT sum(day_tokens) AS tokens FROM inbox WHERE day = ?`, utcDay()).one().tokens ?? 0
    );
  }

  async remove(id: string): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      this.#sql.exec(`DELETE FROM inbox_text WHERE rowid = (SELECT rowid FROM inbox WHERE id = ?)`, id);
      this.#sql.exec(`DELETE FROM inbox WHERE id = ?`, id);
    });
  }

  /** Newest first, `before` the previous page's cursor; with `q`, those whose title or messages have its words (as prefixes). */
  async list(query: InboxQuery): Promise<InboxPage> {
    const [time, id] = query.before ? parseCursor(query.before) : [Number.MAX_SAFE_INTEGER, ""];
    const archived = query.archived ? 1 : 0;
    const after = `inbox.archived = ? AND (inbox.updated_at < ? OR (inbox.updated_at = ? AND inbox.id < ?))`;
    const order = `ORDER BY inbox.updated_at DESC, inbox.id DESC LIMIT ?`;
    if (query.q) this.#indexChanged();
    const rows = query.q
      ? this.#sql
          .exec<Row>(
            `SELECT ${ENTRY_COLUMNS} FROM inbox_text JOIN inbox ON inbox.rowid = inbox_text.rowid WHERE inbox_text MATCH ? AND ${after} ${order}`,
            ftsQuery(query.q),
            archived,
            time,
            time,
            id || "\uffff",
            query.limit + 1,
          )
          .toArray()
      : this.#sql
          .exec<Row>(`SELECT ${ENTRY_COLUMNS} FROM inbox WHERE ${after} ${order}`, archived, time, time, id || "\uffff", query.limit + 1)
          .toArray();
    const page = rows
      .slice(0, query.limit)
      .map((row) => ({ ...entryOf(row), ...(this.#running.has(row.id) ? { status: "running" as const } : {}) }));
    const last = page.at(-1);
    return { conversations: page, next: rows.length > query.limit && last ? `${last.updatedAt}.${last.id}` : null };
  }

  /** The search index takes the words of each conversation changed since the last search. */
  #indexChanged(): void {
    type Changed = { rowid: number; title: string; snippet: string; words: string };
    const changed = this.#sql.exec<Changed>(`SELECT rowid, title, snippet, words FROM inbox WHERE indexed = 0`).toArray();
    if (!changed.length) return;
    this.ctx.storage.transactionSync(() => {
      for (const { rowid, title, snippet, words } of changed) {
        this.#sql.exec(`DELETE FROM inbox_text WHERE rowid = ?`, rowid);
        this.#sql.exec(`INSERT INTO inbox_text (rowid, title, snippet, words) VALUES (?, ?, ?, ?)`, rowid, title, snippet, words);
        this.#sql.exec(`UPDATE inbox SET indexed = 1 WHERE rowid = ?`, rowid);
      }
    });
  }
}

/** A page cursor: the last entry's time and id (entries of the same millisecond are told apart by id). */
function parseCursor(cursor: string): [number, string] {
  const dot = cursor.indexOf(".");
  return dot < 0 ? [Number(cursor), "\uffff"] : [Number(cursor.slice(0, dot)), cursor.slice(dot + 1)];
}

function utcDay(): string {
  return new Date().toISOString().slice(0, 10);
}

function entryOf(row: Row): InboxEntry {
  return {
    id: row.id,
    title: row.title,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    holder: row.holder,
    status: row.status as InboxStatus,
    snippet: row.snippet,
    archived: row.archived === 1,
  };
}

/** A user's words as an FTS5 query: each a quoted prefix term, so punctuation cannot make a syntax error. */
function ftsQuery(q: string): string {
  const words = q.match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.length ? words.map((w) => `"${w}"*`).join(" ") : '""';
}

/** The inbox of a user, by a hash of their id (any characters an identity provider uses are fine); undefined when none is bound. */
export async function inboxOf(env: unknown, userId: string): Promise<DurableObjectStub<Inbox> | undefined> {
  const namespace = (env as InboxBindings).INBOXES;
  if (!namespace) return undefined;
  return namespace.getByName(await userObjectName(userId));
}
