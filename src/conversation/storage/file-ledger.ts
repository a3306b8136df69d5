/** The conversation's files as it stores them: one row of reference each (id, name, type, size, hash), never the bytes. */
import type { FileRef } from "../../runtime/messages.ts";
import type { SqlWriter } from "./sql-writer.ts";

type FileRow = { id: string; name: string; media_type: string; size: number; sha256: string; created_at: number };

export class FileLedger {
  readonly #db: SqlWriter;

  constructor(db: SqlWriter) {
    this.#db = db;
  }

  /** Files this conversation holds from now on (stored here, or shared by the conversation it was forked from). */
  add(files: readonly FileRef[], now = Date.now()): void {
    if (!files.length) return;
    this.#db.insertRows(
      "files (id, name, media_type, size, sha256, created_at)",
      files.map((file) => [file.id, file.name, file.mediaType, file.size, file.sha256, now]),
    );
  }

  get(id: string): FileRef | undefined {
    const row = this.#db.rows<FileRow>(`SELECT * FROM files WHERE id = ?`, id)[0];
    return row && refOf(row);
  }

  /** Every file the conversation holds, oldest first. */
  all(): FileRef[] {
    return this.#db.rows<FileRow>(`SELECT * FROM files ORDER BY created_at, id`).map(refOf);
  }

  /** The bytes of every file the conversation holds, all together. */
  storedBytes(): number {
    return this.#db.rows<{ total: number | null }>(`SELECT sum(size) AS total FROM files`)[0]?.total ?? 0;
  }

  /** Files stored before `before` (ms) that no id of `kept` names: uploads no message came to refer to. */
  orphans(kept: ReadonlySet<string>, before: number): FileRef[] {
    return this.#db
      .rows<FileRow>(`SELECT * FROM files WHERE created_at < ?`, before)
      .filter((row) => !kept.has(row.id))
      .map(refOf);
  }

  /** The earliest time a file was stored that no id of `kept` names, or null. */
  oldestUnkept(kept: ReadonlySet<string>): number | null {
    const times = this.#db
      .rows<FileRow>(`SELECT * FROM files`)
      .filter((row) => !kept.has(row.id))
      .map((row) => row.created_at);
    return times.length ? Math.min(...times) : null;
  }

  remove(ids: readonly string[]): void {
    for (const id of ids) this.#db.exec(`DELETE FROM files WHERE id = ?`, id);
  }
}

function refOf(row: FileRow): FileRef {
  return { id: row.id, name: row.name, mediaType: row.media_type, size: row.size, sha256: row.sha256 };
}
