/**
 * Gateway state in the same SQLite file as the guard's store, in its own tables and its own
 * migrations table. `synchronous=NORMAL`: this state is rehearsal data, never
 * what keeps a write at most once (that is the guard's store, synced on every commit).
 */
import Database from 'better-sqlite3';
import { ConfigurationError } from '../../core/errors.js';
import type { GatewayStateStore, ReplayCaseRecord, ShadowWriteRecord } from './gateway-state.js';

/** The schema version this code writes. */
export const SQLITE_GATEWAY_STATE_VERSION = 1;

const MIGRATION_1 = `
  CREATE TABLE IF NOT EXISTS gateway_shadow_writes (
    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    upstream TEXT NOT NULL,
    resource TEXT NOT NULL,
    method TEXT NOT NULL,
    recorded_at_ms INTEGER NOT NULL,
    sealed TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS gateway_shadow_by_resource
    ON gateway_shadow_writes (tenant, upstream, resource, sequence);
  CREATE TABLE IF NOT EXISTS gateway_replay_cases (
    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
    session TEXT NOT NULL,
    upstream TEXT NOT NULL,
    case_key TEXT NOT NULL,
    recorded_at_ms INTEGER NOT NULL,
    sealed TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS gateway_replay_by_session ON gateway_replay_cases (session, sequence);
  CREATE TABLE IF NOT EXISTS gateway_decisions (
    sequence INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    event TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS gateway_decisions_by_tenant ON gateway_decisions (tenant, sequence);
`;

function migrate(db: Database.Database, path: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS gateway_schema_migrations (version INTEGER PRIMARY KEY)');
  db.transaction(() => {
    const row = db.prepare('SELECT max(version) AS version FROM gateway_schema_migrations').get() as
      | { version: number | null }
      | undefined;
    const version = row?.version ?? 0;
    if (version > SQLITE_GATEWAY_STATE_VERSION) {
      throw new ConfigurationError(
        'gateway_state_schema_newer',
        `${path} holds gateway state of schema version ${version}, newer than this Sideguard supports (${SQLITE_GATEWAY_STATE_VERSION}); upgrade sideguard`,
      );
    }
    if (version < 1) {
      db.exec(MIGRATION_1);
      db.prepare('INSERT INTO gateway_schema_migrations (version) VALUES (1)').run();
    }
  }).immediate();
}

interface ShadowRow {
  tenant: string;
  upstream: string;
  resource: string;
  method: string;
  recorded_at_ms: number;
  sealed: string;
}

const shadowOf = (row: ShadowRow): ShadowWriteRecord => ({
  tenant: row.tenant,
  upstream: row.upstream,
  resource: row.resource,
  method: row.method,
  recordedAtMs: row.recorded_at_ms,
  sealed: row.sealed,
});

/** Opens (and migrates) the gateway tables in an SQLite file. */
export function createSqliteGatewayState(config: {
  readonly path: string;
  /** @default 5000 */
  readonly busyTimeoutMs?: number;
}): GatewayStateStore {
  const db = new Database(config.path);
  db.pragma(`busy_timeout = ${config.busyTimeoutMs ?? 5_000}`);
  if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  migrate(db, config.path);
  const insertShadow = db.prepare(
    'INSERT INTO gateway_shadow_writes (tenant, upstream, resource, method, recorded_at_ms, sealed) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const latestShadow = db.prepare(
    'SELECT * FROM gateway_shadow_writes WHERE tenant = ? AND upstream = ? AND resource = ? ORDER BY sequence DESC LIMIT 1',
  );
  const insertCase = db.prepare(
    'INSERT INTO gateway_replay_cases (session, upstream, case_key, recorded_at_ms, sealed) VALUES (?, ?, ?, ?, ?)',
  );
  return {
    kind: 'sqlite',
    appendShadowWrite: async (r) => {
      insertShadow.run(r.tenant, r.upstream, r.resource, r.method, r.recordedAtMs, r.sealed);
    },
    latestShadowWrite: async (tenant, upstream, resource) => {
      const row = latestShadow.get(tenant, upstream, resource) as ShadowRow | undefined;
      return row === undefined ? undefined : shadowOf(row);
    },
    listShadowWrites: async (tenant) => {
      const rows = (
        tenant === undefined
          ? db.prepare('SELECT * FROM gateway_shadow_writes ORDER BY sequence').all()
          : db
              .prepare('SELECT * FROM gateway_shadow_writes WHERE tenant = ? ORDER BY sequence')
              .all(tenant)
      ) as ShadowRow[];
      return rows.map(shadowOf);
    },
    resetShadow: async (tenant) =>
      (tenant === undefined
        ? db.prepare('DELETE FROM gateway_shadow_writes').run()
        : db.prepare('DELETE FROM gateway_shadow_writes WHERE tenant = ?').run(tenant)
      ).changes,
    appendReplayCase: async (r) => {
      insertCase.run(r.session, r.upstream, r.caseKey, r.recordedAtMs, r.sealed);
    },
    listReplayCases: async (session) =>
      (
        db
          .prepare('SELECT * FROM gateway_replay_cases WHERE session = ? ORDER BY sequence')
          .all(session) as {
          session: string;
          upstream: string;
          case_key: string;
          recorded_at_ms: number;
          sealed: string;
        }[]
      ).map(
        (row): ReplayCaseRecord => ({
          session: row.session,
          upstream: row.upstream,
          caseKey: row.case_key,
          recordedAtMs: row.recorded_at_ms,
          sealed: row.sealed,
        }),
      ),
    close: async () => {
      db.close();
    },
  };
}
