/**
 * Gateway state in the guard's PostgreSQL schema, in its own tables and migrations table,
 * migrated under an advisory lock so several `sideguard serve` processes starting together
 * migrate once.
 */
import pg from 'pg';
import { ConfigurationError } from '../../core/errors.js';
import type { GatewayStateStore, ReplayCaseRecord, ShadowWriteRecord } from './gateway-state.js';

/** The schema version this code writes. */
export const POSTGRES_GATEWAY_STATE_VERSION = 1;

const migration1 = (s: string) => `
  CREATE TABLE IF NOT EXISTS ${s}.gateway_shadow_writes (
    sequence bigserial PRIMARY KEY,
    tenant text COLLATE "C" NOT NULL,
    upstream text COLLATE "C" NOT NULL,
    resource text COLLATE "C" NOT NULL,
    method text NOT NULL,
    recorded_at_ms bigint NOT NULL,
    sealed text NOT NULL
  );
  CREATE INDEX IF NOT EXISTS gateway_shadow_by_resource
    ON ${s}.gateway_shadow_writes (tenant, upstream, resource, sequence);
  CREATE TABLE IF NOT EXISTS ${s}.gateway_replay_cases (
    sequence bigserial PRIMARY KEY,
    session text COLLATE "C" NOT NULL,
    upstream text COLLATE "C" NOT NULL,
    case_key text COLLATE "C" NOT NULL,
    recorded_at_ms bigint NOT NULL,
    sealed text NOT NULL
  );
  CREATE INDEX IF NOT EXISTS gateway_replay_by_session
    ON ${s}.gateway_replay_cases (session, sequence);
  CREATE TABLE IF NOT EXISTS ${s}.gateway_decisions (
    sequence bigserial PRIMARY KEY,
    tenant text COLLATE "C" NOT NULL,
    at_ms bigint NOT NULL,
    event text NOT NULL
  );
  CREATE INDEX IF NOT EXISTS gateway_decisions_by_tenant
    ON ${s}.gateway_decisions (tenant, sequence);
`;

function quote(schema: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new ConfigurationError(
      'store_schema_name_invalid',
      `PostgreSQL schema name ${JSON.stringify(schema)} is not allowed: use letters, digits and underscores`,
    );
  }
  return `"${schema}"`;
}

async function migrate(pool: pg.Pool, schema: string): Promise<void> {
  const s = quote(schema);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `sideguard.gateway.migrate.${schema}`,
    ]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.gateway_schema_migrations (version integer PRIMARY KEY)`,
    );
    const { rows } = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${s}.gateway_schema_migrations`,
    );
    const version = rows[0]?.version ?? 0;
    if (version > POSTGRES_GATEWAY_STATE_VERSION) {
      throw new ConfigurationError(
        'gateway_state_schema_newer',
        `Schema ${schema} holds gateway state of version ${version}, newer than this Sideguard supports (${POSTGRES_GATEWAY_STATE_VERSION}); upgrade sideguard`,
      );
    }
    if (version < 1) {
      await client.query(migration1(s));
      await client.query(`INSERT INTO ${s}.gateway_schema_migrations (version) VALUES (1)`);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

interface ShadowRow {
  tenant: string;
  upstream: string;
  resource: string;
  method: string;
  recorded_at_ms: string;
  sealed: string;
}

const shadowOf = (row: ShadowRow): ShadowWriteRecord => ({
  tenant: row.tenant,
  upstream: row.upstream,
  resource: row.resource,
  method: row.method,
  recordedAtMs: Number(row.recorded_at_ms),
  sealed: row.sealed,
});

/** Opens (and migrates) the gateway tables in a PostgreSQL schema. */
export async function createPostgresGatewayState(config: {
  readonly connectionString: string;
  /** @default 'sideguard' */
  readonly schema?: string;
  /** @default 4 */
  readonly maxConnections?: number;
}): Promise<GatewayStateStore> {
  const schema = config.schema ?? 'sideguard';
  const s = quote(schema);
  const pool = new pg.Pool({
    connectionString: config.connectionString,
    max: config.maxConnections ?? 4,
  });
  try {
    await migrate(pool, schema);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return {
    kind: 'postgres',
    appendShadowWrite: async (r) => {
      await pool.query(
        `INSERT INTO ${s}.gateway_shadow_writes (tenant, upstream, resource, method, recorded_at_ms, sealed) VALUES ($1, $2, $3, $4, $5, $6)`,
        [r.tenant, r.upstream, r.resource, r.method, r.recordedAtMs, r.sealed],
      );
    },
    latestShadowWrite: async (tenant, upstream, resource) => {
      const { rows } = await pool.query<ShadowRow>(
        `SELECT * FROM ${s}.gateway_shadow_writes WHERE tenant = $1 AND upstream = $2 AND resource = $3 ORDER BY sequence DESC LIMIT 1`,
        [tenant, upstream, resource],
      );
      return rows[0] === undefined ? undefined : shadowOf(rows[0]);
    },
    listShadowWrites: async (tenant) => {
      const { rows } = await pool.query<ShadowRow>(
        `SELECT * FROM ${s}.gateway_shadow_writes WHERE $1::text IS NULL OR tenant = $1 ORDER BY sequence`,
        [tenant ?? null],
      );
      return rows.map(shadowOf);
    },
    resetShadow: async (tenant) => {
      const result = await pool.query(
        `DELETE FROM ${s}.gateway_shadow_writes WHERE $1::text IS NULL OR tenant = $1`,
        [tenant ?? null],
      );
      return result.rowCount ?? 0;
    },
    appendReplayCase: async (r) => {
      await pool.query(
        `INSERT INTO ${s}.gateway_replay_cases (session, upstream, case_key, recorded_at_ms, sealed) VALUES ($1, $2, $3, $4, $5)`,
        [r.session, r.upstream, r.caseKey, r.recordedAtMs, r.sealed],
      );
    },
    listReplayCases: async (session) => {
      const { rows } = await pool.query<{
        session: string;
        upstream: string;
        case_key: string;
        recorded_at_ms: string;
        sealed: string;
      }>(`SELECT * FROM ${s}.gateway_replay_cases WHERE session = $1 ORDER BY sequence`, [session]);
      return rows.map(
        (row): ReplayCaseRecord => ({
          session: row.session,
          upstream: row.upstream,
          caseKey: row.case_key,
          recordedAtMs: Number(row.recorded_at_ms),
          sealed: row.sealed,
        }),
      );
    },
    close: () => pool.end(),
  };
}
