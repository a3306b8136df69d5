import { DurableObject } from "cloudflare:workers";

/** Where a conversation held by a person stands: waiting for the person's first answer, or held by them. */
export type DeskStatus = "waiting" | "held";

/** One conversation on the operator desk. */
export interface DeskEntry {
  conversationId: string;
  status: DeskStatus;
  /** The `humanAgent` holding it. */
  person: string;
  /** When it was handed to the person (epoch ms). */
  since: number;
  updatedAt: number;
  /** The user's latest message, cut to 200 characters. */
  preview: string;
  /** Who holds it: the operator who answered last (a signed-in id and name, or the name typed with the shared key). */
  operator?: { id?: string; name?: string };
}

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
    // Desks stored before operators had names gain the column.
    const columns = this.#sql.exec<{ name: string }>(`PRAGMA table_info(desk)`).toArray();
    if (!columns.some((c) => c.name === "operator")) this.#sql.exec(`ALTER TABLE desk ADD COLUMN operator TEXT`);
  }

  /**
   * Adds a conversation (`waiting` unless a status is given), or updates its preview and, when
   * given, its status and operator; `since` stays the time it was first handed over.
   */
  async put(entry: Omit<DeskEntry, "status"> & { status?: DeskStatus }): Promise<void> {
    this.#sql.exec(
      `INSERT INTO desk (conversation_id, status, person, since, updated_at, preview, operator)
         VALUES (?1, coalesce(?2, 'waiting'), ?3, ?4, ?5, ?6, ?7)
       ON CONFLICT (conversation_id) DO UPDATE SET status = coalesce(?2, status), person = ?3, updated_at = ?5, preview = ?6,
         operator = coalesce(?7, operator)`,
      entry.conversationId,
      entry.status ?? null,
      entry.person,
      entry.since,
      entry.updatedAt,
      entry.preview.slice(0, 200),
      entry.operator ? JSON.stringify(entry.operator) : null,
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
      ...(r.operator ? { operator: JSON.parse(r.operator) as NonNullable<DeskEntry["operator"]> } : {}),
    }));
  }
}

/** The desk of an environment, or null when the Worker binds none (a network with no people). */
export function deskOf(env: unknown): DurableObjectStub<OperatorDesk> | null {
  const namespace = (env as DeskBindings).OPERATOR_DESK;
  return namespace ? namespace.getByName("desk") : null;
}
