import { DurableObject } from "cloudflare:workers";

/** Where a conversation stands, as a user's list shows it. */
export type InboxStatus = "idle" | "running" | "completed" | "awaiting_approval" | "awaiting_human" | "failed" | "cancelled";

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
  next: number | null;
}

export interface InboxQuery {
  limit: number;
  /** Entries updated before this time (the previous page's `next`). */
  before?: number | undefined;
  /** Full-text search over titles and the last messages. */
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

/**
 * A signed-in user's conversations, in a Durable Object of their own (SQLite, with an FTS5 index
 * over titles and last messages). The conversations' own objects are the truth: each tells its
 * owner's inbox its whole entry when it is created, after each turn, when it is renamed or
 * archived, and when it is deleted; a missed write heals with the next one, since each is whole.
 */
export class Inbox extends DurableObject<Record<string, unknown>> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS inbox (id TEXT PRIMARY KEY, title TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
         holder TEXT NOT NULL, status TEXT NOT NULL, snippet TEXT NOT NULL, archived INTEGER NOT NULL)`,
    );
    this.#sql.exec(`CREATE INDEX IF NOT EXISTS inbox_updated ON inbox (archived, updated_at DESC)`);
    this.#sql.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS inbox_search USING fts5(id UNINDEXED, title, snippet)`);
    // What each conversation has spent (its total, as it last said), and the user's tokens per UTC day: the daily budget.
    const columns = this.#sql.exec<{ name: string }>(`PRAGMA table_info(inbox)`).toArray();
    if (!columns.some((c) => c.name === "tokens")) this.#sql.exec(`ALTER TABLE inbox ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS daily_tokens (day TEXT PRIMARY KEY, tokens INTEGER NOT NULL)`);
  }

  /**
   * Keeps a conversation's entry as its object says it is now; `tokens` is the conversation's total
   * spent so far, whose growth since it last said counts toward today's tokens (so a missed write is
   * counted with the next one). Answers the rows it wrote (what Durable Object storage bills).
   */
  async record(entry: InboxEntry, tokens?: number): Promise<{ rowsWritten: number }> {
    let rowsWritten = 0;
    const write = (query: string, ...bindings: SqlStorageValue[]) => {
      rowsWritten += this.#sql.exec(query, ...bindings).rowsWritten;
    };
    this.ctx.storage.transactionSync(() => {
      type Known = { tokens: number; title: string; snippet: string };
      const known = this.#sql.exec<Known>(`SELECT tokens, title, snippet FROM inbox WHERE id = ?`, entry.id).toArray()[0];
      const total = Math.max(known?.tokens ?? 0, tokens ?? 0);
      if (total > (known?.tokens ?? 0))
        write(
          `INSERT INTO daily_tokens (day, tokens) VALUES (?1, ?2) ON CONFLICT (day) DO UPDATE SET tokens = tokens + ?2`,
          utcDay(),
          total - (known?.tokens ?? 0),
        );
      write(
        `INSERT INTO inbox (id, title, created_at, updated_at, holder, status, snippet, archived, tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET title = excluded.title, updated_at = excluded.updated_at, holder = excluded.holder,
           status = excluded.status, snippet = excluded.snippet, archived = excluded.archived, tokens = excluded.tokens`,
        entry.id,
        entry.title,
        entry.createdAt,
        entry.updatedAt,
        entry.holder,
        entry.status,
        entry.snippet,
        entry.archived ? 1 : 0,
        total,
      );
      // The search index changes only when the words do: a status or holder change writes none of it.
      if (known?.title === entry.title && known.snippet === entry.snippet) return;
      write(`DELETE FROM inbox_search WHERE id = ?`, entry.id);
      write(`INSERT INTO inbox_search (id, title, snippet) VALUES (?, ?, ?)`, entry.id, entry.title, entry.snippet);
    });
    return { rowsWritten };
  }

  /** Tokens the user's conversations spent today (UTC). */
  async tokensToday(): Promise<number> {
    return this.#sql.exec<{ tokens: number }>(`SELECT tokens FROM daily_tokens WHERE day = ?`, utcDay()).toArray()[0]?.tokens ?? 0;
  }

  async remove(id: string): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      this.#sql.exec(`DELETE FROM inbox WHERE id = ?`, id);
      this.#sql.exec(`DELETE FROM inbox_search WHERE id = ?`, id);
    });
  }

  async list(query: InboxQuery): Promise<InboxPage> {
    const before = query.before ?? Number.MAX_SAFE_INTEGER;
    const archived = query.archived ? 1 : 0;
    const rows = query.q
      ? this.#sql
          .exec<Row>(
            `SELECT inbox.* FROM inbox_search JOIN inbox ON inbox.id = inbox_search.id
             WHERE inbox_search MATCH ? AND inbox.archived = ? AND inbox.updated_at < ? ORDER BY inbox.updated_at DESC LIMIT ?`,
            ftsQuery(query.q),
            archived,
            before,
            query.limit + 1,
          )
          .toArray()
      : this.#sql
          .exec<Row>(
            `SELECT * FROM inbox WHERE archived = ? AND updated_at < ? ORDER BY updated_at DESC LIMIT ?`,
            archived,
            before,
            query.limit + 1,
          )
          .toArray();
    const page = rows.slice(0, query.limit).map(entryOf);
    return { conversations: page, next: rows.length > query.limit ? page.at(-1)!.updatedAt : null };
  }
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
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`user:${userId}`)));
  return namespace.getByName([...digest].map((b) => b.toString(16).padStart(2, "0")).join(""));
}
