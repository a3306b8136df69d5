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
  // 2: what each turn spent (for budgets), and compaction markers.
  [
    `ALTER TABLE turns ADD COLUMN model_calls INTEGER NOT NULL DEFAULT 0`,
    `ALTER TABLE turns ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0`,
    `ALTER TABLE turns ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0`,
    `ALTER TABLE turns ADD COLUMN tool_calls INTEGER NOT NULL DEFAULT 0`,
    `CREATE TABLE compactions (seq INTEGER PRIMARY KEY, turn INTEGER NOT NULL, replaces INTEGER NOT NULL, summary TEXT NOT NULL, agent TEXT NOT NULL)`,
  ],
  // 3: what a turn started from (so it can be rewound and run again), and what a rewind removed.
  [`ALTER TABLE turns ADD COLUMN opening TEXT`, `ALTER TABLE turns ADD COLUMN rewound TEXT`],
  // 4: a trace per turn, in a ring of slots (turn modulo the turns kept): one row written per turn, none deleted.
  [`CREATE TABLE traces (slot INTEGER PRIMARY KEY, turn INTEGER NOT NULL, data TEXT NOT NULL)`],
  // 5: MCP servers' tool lists, kept between turns so a turn after the first lists nothing.
  [`CREATE TABLE mcp_tools (server TEXT PRIMARY KEY, url TEXT NOT NULL, tools TEXT NOT NULL, listed_at INTEGER NOT NULL)`],
  // 6: the calls of the step whose tools run, written ahead of them (one row, rewritten each such step).
  [`CREATE TABLE calls_in_flight (id INTEGER PRIMARY KEY CHECK (id = 1), turn INTEGER NOT NULL, data TEXT NOT NULL)`],
  // 7: what people did, and when: a person's answers and hand backs, approvals and denials, with who.
  [`CREATE TABLE activity (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, data TEXT NOT NULL)`],
  // 8: the schedule (follow-ups, approval deadlines, a person's deadline), on the object's alarm.
  [`CREATE TABLE schedule (id TEXT PRIMARY KEY, kind TEXT NOT NULL, due_at INTEGER NOT NULL, turn INTEGER NOT NULL, data TEXT NOT NULL)`],
  // 9: the events streamed before a step's tools start (their calls among them), kept with the calls for a recovery to store.
  [`ALTER TABLE calls_in_flight ADD COLUMN events TEXT`],
  // 10: messages to send out (the app's webhook) in an outbox of their own; those the schedule held move there.
  [
    `CREATE TABLE outbox (id TEXT PRIMARY KEY, due_at INTEGER NOT NULL, attempt INTEGER NOT NULL, body TEXT NOT NULL)`,
    `INSERT INTO outbox (id, due_at, attempt, body)
       SELECT id, due_at, json_extract(data, '$.attempt'), json_extract(data, '$.body') FROM schedule WHERE kind = 'notify'`,
    `DELETE FROM schedule WHERE kind = 'notify'`,
  ],
  // 11: the form each events row is written in (ROW_VERSION; the rows before it are version 1).
  [`ALTER TABLE events ADD COLUMN v INTEGER NOT NULL DEFAULT 1`],
  // 12: A2A push notifications: where each task's updates go, and the outbox message's own destination.
  [
    `CREATE TABLE push_configs (turn INTEGER NOT NULL, id TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (turn, id))`,
    `ALTER TABLE outbox ADD COLUMN target TEXT`,
  ],
  // 13: delegated agents' histories (Agent.asTool), apart from the conversation's: by turn and the path of delegating calls.
  [
    `CREATE TABLE delegations (seq INTEGER PRIMARY KEY, turn INTEGER NOT NULL, path TEXT NOT NULL, agent TEXT NOT NULL, data TEXT NOT NULL)`,
    // Each delegated run's holding, the wait it ended in, and the asks its decisions took: what resumes it.
    `CREATE TABLE delegation_runs (turn INTEGER NOT NULL, path TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (turn, path))`,
  ],
  // 14: background delegations (asTool({ background: true })): each run's status, spending and spans, by its schedule entry's id.
  [
    `CREATE TABLE background_runs (id TEXT PRIMARY KEY, turn INTEGER NOT NULL, tool_call_id TEXT NOT NULL, agent TEXT NOT NULL,
       status TEXT NOT NULL, started_at INTEGER NOT NULL, ended_at INTEGER, model_calls INTEGER NOT NULL DEFAULT 0,
       input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0, tool_calls INTEGER NOT NULL DEFAULT 0,
       spans TEXT)`,
  ],
  // 15: a background run that waits for the user: its requests and the decisions on them so far.
  [`ALTER TABLE background_runs ADD COLUMN wait TEXT`],
  // 16: one ledger of a turn's delegated runs (in the turn, or in the background), keyed by the turn and the path of the
  // calls that delegated each: its state (holder, wait, asks taken) and, for a background run, its entry, status, times,
  // spending, spans and the decisions on its wait (its requests are its stored wait's: no second copy).
  [
    `CREATE TABLE runs (turn INTEGER NOT NULL, path TEXT NOT NULL, mode TEXT NOT NULL, agent TEXT NOT NULL, entry TEXT UNIQUE,
       status TEXT, started_at INTEGER, ended_at INTEGER, model_calls INTEGER NOT NULL DEFAULT 0,
       input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0, tool_calls INTEGER NOT NULL DEFAULT 0,
       spans TEXT, state TEXT, decisions TEXT, PRIMARY KEY (turn, path))`,
    `INSERT INTO runs (turn, path, mode, agent, state)
       SELECT turn, path, 'delegation', coalesce((SELECT agent FROM delegations d WHERE d.turn = r.turn AND d.path = r.path
         ORDER BY seq LIMIT 1), json_extract(data, '$.holding.activeAgent'), ''), data FROM delegation_runs r`,
    `INSERT INTO runs (turn, path, mode, agent, entry, status, started_at, ended_at, model_calls, input_tokens, output_tokens,
       tool_calls, spans, decisions)
       SELECT turn, tool_call_id, 'background', agent, id, status, started_at, ended_at, model_calls, input_tokens, output_tokens,
         tool_calls, spans, json_extract(wait, '$.decisions') FROM background_runs WHERE true
       ON CONFLICT (turn, path) DO UPDATE SET mode = 'background', agent = excluded.agent, entry = excluded.entry,
         status = excluded.status, started_at = excluded.started_at, ended_at = excluded.ended_at, model_calls = excluded.model_calls,
         input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, tool_calls = excluded.tool_calls,
         spans = excluded.spans, decisions = excluded.decisions`,
    `DROP TABLE delegation_runs`,
    `DROP TABLE background_runs`,
  ],
  // 17: the conversation's files, by reference (their bytes are in the FILES bucket).
  [
    `CREATE TABLE files (id TEXT PRIMARY KEY, name TEXT NOT NULL, media_type TEXT NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL,
       created_at INTEGER NOT NULL)`,
  ],
  // 18: the turn is the ledger's root run (path '', one row, turn 0: the latest turn's): its wait (the suspended step and
  // the decisions so far) moves out of the state row into that row, kept in the form it was written in (`v`), which the
  // runs' one reader upgrades.
  [
    `INSERT INTO runs (turn, path, mode, agent, state, decisions)
       SELECT 0, '', 'turn', coalesce(json_extract(data, '$.activeAgent'), ''),
         json_object('v', coalesce(json_extract(data, '$.v'), 1), 'suspension', json_extract(data, '$.suspension'), 'asked', 0),
         coalesce(json_extract(data, '$.decisions'), '[]')
       FROM state WHERE json_type(data, '$.suspension') = 'object'
       ON CONFLICT (turn, path) DO NOTHING`,
    `UPDATE state SET data = json_remove(data, '$.suspension', '$.decisions')`,
  ],
  // 19: what protocols keep in a conversation, by protocol, turn and key (protocol-rows.ts): A2A's push configs move there,
  // and an outbox message's destination is a URL and headers.
  [
    `CREATE TABLE protocol_rows (protocol TEXT NOT NULL, turn INTEGER NOT NULL, key TEXT NOT NULL, data TEXT NOT NULL,
       PRIMARY KEY (protocol, turn, key))`,
    `INSERT INTO protocol_rows (protocol, turn, key, data) SELECT 'a2a', turn, id, data FROM push_configs`,
    `DROP TABLE push_configs`,
    // An outbox message's destination names the headers it is sent with, not A2A's fields.
    `UPDATE outbox SET target = json_object('url', json_extract(target, '$.url'), 'headers', json_patch(
       CASE WHEN json_type(target, '$.token') = 'text'
         THEN json_object('x-a2a-notification-token', json_extract(target, '$.token')) ELSE '{}' END,
       CASE WHEN json_type(target, '$.authentication') = 'object'
         THEN json_object('authorization', json_extract(target, '$.authentication.scheme') || ' ' ||
           json_extract(target, '$.authentication.credentials')) ELSE '{}' END))
     WHERE target IS NOT NULL`,
  ],
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Applies the migrations after the stored version, in order; `upTo` stops early (tests of old versions). */
export function migrate(sql: SqlStorage, upTo = MIGRATIONS.length): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`);
  const row = sql.exec<{ version: number }>(`SELECT version FROM schema_version WHERE id = 1`).toArray()[0];
  const current = row?.version ?? 0;
  for (let version = current; version < upTo; version++) {
    for (const statement of MIGRATIONS[version]!) sql.exec(statement);
  }
  if (current < upTo) sql.exec(`INSERT OR REPLACE INTO schema_version (id, version) VALUES (1, ?)`, upTo);
}
