/**
 * The Durable Object's SQL schema as ordered migrations. A migration is never edited once
 * released: a change is a new entry, applied on first access after a deploy.
 */
export const MIGRATIONS: readonly string[][] = [
  [
    `CREATE TABLE state (id INTEGER PRIMARY KEY CHECK (id = 1), data TEXT NOT NULL)`,
    `CREATE TABLE messages (seq INTEGER PRIMARY KEY, turn INTEGER NOT NULL, data TEXT NOT NULL)`,
    `CREATE TABLE handoffs (seq INTEGER PRIMARY KEY, turn INTEGER NOT NULL, data TEXT NOT NULL)`,
    `CREATE TABLE turns (turn INTEGER PRIMARY KEY, status TEXT NOT NULL, started_at INTEGER NOT NULL, ended_at INTEGER, error TEXT,
       rows_written INTEGER NOT NULL DEFAULT 0, bytes_written INTEGER NOT NULL DEFAULT 0)`,
    // Stream events, packed several to a row: rows written are what storage is billed by.
    `CREATE TABLE events (first_id INTEGER PRIMARY KEY, last_id INTEGER NOT NULL, turn INTEGER NOT NULL, data TEXT NOT NULL)`,
  ],
];

export function migrate(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`);
  const row = sql.exec<{ version: number }>(`SELECT version FROM schema_version WHERE id = 1`).toArray()[0];
  const current = row?.version ?? 0;
  for (let version = current; version < MIGRATIONS.length; version++) {
    for (const statement of MIGRATIONS[version]!) sql.exec(statement);
  }
  if (current < MIGRATIONS.length) {
    sql.exec(`INSERT OR REPLACE INTO schema_version (id, version) VALUES (1, ?)`, MIGRATIONS.length);
  }
}
