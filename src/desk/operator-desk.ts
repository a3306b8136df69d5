import { DurableObject } from "cloudflare:workers";
import * as z from "zod";

/**
 * Where a conversation on the desk stands: waiting for a person's first answer, held by one, or asking: its turn waits for
 * its user (an approval, a question, a client tool, an elicitation), which the desk shows, and an operator may answer
 * where a request lets one.
 */
export type DeskStatus = "waiting" | "held" | "asking";

/** One conversation on the operator desk. */
export interface DeskEntry {
  conversationId: string;
  status: DeskStatus;
  /** The `humanAgent` holding it (for `asking`, the agent whose turn waits for the user). */
  person: string;
  /** When it was handed to the person (epoch ms). */
  since: number;
  updatedAt: number;
  /** The user's latest message, cut to 200 characters. */
  preview: string;
  /** Who holds it: the operator who answered last (a signed-in id and name, or the name typed with the shared key). */
  operator?: { id?: string; name?: string };
  /** The conversation's title, as its owner's list shows it (its first message cut short until it has one). */
  title?: string;
  /** Who waits: the signed-in user who owns the conversation, with their name when their token carries one. */
  user?: { id: string; name?: string };
  /** When the person must have answered (epoch ms), when the `humanAgent` has `answerWithin`. */
  answerBy?: number;
}

/** What a conversation tells the desk; `answerBy: null` clears a deadline, an absent one keeps it. */
export type DeskPut = Omit<DeskEntry, "status" | "answerBy"> & { status?: DeskStatus; answerBy?: number | null };

/** Columns added to the first form of the table, each with its type. */
const ADDED_COLUMNS = [
  ["operator", "TEXT"],
  ["title", "TEXT"],
  ["user", "TEXT"],
  ["answer_by", "INTEGER"],
] as const;

/** The bindings the operator desk needs: one Durable Object of its own, named `desk`. */
export interface DeskBindings {
  OPERATOR_DESK?: DurableObjectNamespace<OperatorDesk>;
}

/**
 * The list of conversations a person holds or should take, in one Durable Object (SQLite): one
 * row per conversation, written by the conversation itself when it goes to a person, when the
 * person answers, and removed when it goes back to an agent or is deleted. A Durable Object rather
 * than D1: it needs no database to create, and every write comes from a conversation's own object.
 */
export class OperatorDesk extends DurableObject<Record<string, unknown>> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Record<string, unknown>) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(
      `CREATE TABLE IF NOT EXISTS desk (conversation_id TEXT PRIMARY KEY, status TEXT NOT NULL, person TEXT NOT NULL,
         since INTEGER NOT NULL, updated_at INTEGER NOT NULL, preview TEXT NOT NULL)`,
    );
    // Desks stored before operators had names, or cards their titles, gain the columns.
    const columns = new Set(
      this.#sql
        .exec<{ name: string }>(`PRAGMA table_info(desk)`)
        .toArray()
        .map((c) => c.name),
    );
    for (const [name, type] of ADDED_COLUMNS) if (!columns.has(name)) this.#sql.exec(`ALTER TABLE desk ADD COLUMN ${name} ${type}`);
  }

  /**
   * Adds a conversation (`waiting` unless a status is given), or updates its preview and, when
   * given, its status, operator, title, user and deadline; `since` stays the time it was first handed over.
   */
  async put(entry: DeskPut): Promise<void> {
    this.#sql.exec(
      `INSERT INTO desk (conversation_id, status, person, since, updated_at, preview, operator, title, user, answer_by)
         VALUES (?1, coalesce(?2, 'waiting'), ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
       ON CONFLICT (conversation_id) DO UPDATE SET status = coalesce(?2, status), person = ?3, updated_at = ?5, preview = ?6,
         operator = coalesce(?7, operator), title = coalesce(?8, title), user = coalesce(?9, user),
         answer_by = CASE WHEN ?11 = 1 THEN ?10 ELSE answer_by END`,
      entry.conversationId,
      entry.status ?? null,
      entry.person,
      entry.since,
      entry.updatedAt,
      entry.preview.slice(0, 200),
      entry.operator ? JSON.stringify(entry.operator) : null,
      entry.title ?? null,
      entry.user ? JSON.stringify(entry.user) : null,
      entry.answerBy ?? null,
      entry.answerBy === undefined ? 0 : 1,
    );
  }

  async remove(conversationId: string): Promise<void> {
    this.#sql.exec(`DELETE FROM desk WHERE conversation_id = ?`, conversationId);
  }

  /** The conversations on the desk, oldest first; all of them, or those with one status. */
  async list(status?: DeskStatus): Promise<DeskEntry[]> {
    type Row = {
      conversation_id: string;
      status: DeskStatus;
      person: string;
      since: number;
      updated_at: number;
      preview: string;
      operator: string | null;
      title: string | null;
      user: string | null;
      answer_by: number | null;
    };
    const rows = status
      ? this.#sql.exec<Row>(`SELECT * FROM desk WHERE status = ? ORDER BY since`, status)
      : this.#sql.exec<Row>(`SELECT * FROM desk ORDER BY since`);
    return rows.toArray().map((r) => ({
      conversationId: r.conversation_id,
      status: r.status,
      person: r.person,
      since: r.since,
      updatedAt: r.updated_at,
      preview: r.preview,
      ...(r.operator ? { operator: storedIdentity(OperatorSchema, r.operator, "operator") } : {}),
      ...(r.title !== null ? { title: r.title } : {}),
      ...(r.user ? { user: storedIdentity(UserSchema, r.user, "user") } : {}),
      ...(r.answer_by !== null ? { answerBy: r.answer_by } : {}),
    }));
  }
}

const OperatorSchema = z.strictObject({ id: z.string().optional(), name: z.string().optional() });
const UserSchema = z.strictObject({ id: z.string(), name: z.string().optional() });

/** Who a desk row names (its operator, its user), read through its schema: a row that does not fit names its column. */
function storedIdentity<T>(schema: z.ZodType<T>, json: string, column: string): T {
  const parsed = schema.safeParse(JSON.parse(json));
  if (!parsed.success) throw new Error(`A stored desk row's ${column} does not fit its schema: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The desk of an environment, or null when the Worker binds none (a network with no people). */
export function deskOf(env: unknown): DurableObjectStub<OperatorDesk> | null {
  const namespace = (env as DeskBindings).OPERATOR_DESK;
  return namespace ? namespace.getByName("desk") : null;
}
