/**
 * PostgreSQL for tests: finds a database that answers (or explains why PG suites skip, or fails
 * when `SIDEGUARD_REQUIRE_POSTGRES=1`), and gives each test run its own schema.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { redactConnectionString } from '../../src/stores/postgres/postgres-store.js';

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';
let probed: Promise<string | undefined> | undefined;

async function probe(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The URL of a PostgreSQL that answers: `DATABASE_URL`, default
 * `postgres://postgres@127.0.0.1:5432/test`. Undefined (with one printed line) when none does;
 * throws instead when `SIDEGUARD_REQUIRE_POSTGRES=1`.
 */
export function postgresTestUrl(): Promise<string | undefined> {
  probed ??= (async () => {
    const url = process.env.DATABASE_URL ?? DEFAULT_URL;
    const failure = await probe(url);
    if (failure === undefined) return url;
    const where = redactConnectionString(url);
    if (process.env.SIDEGUARD_REQUIRE_POSTGRES === '1') {
      throw new Error(
        `PostgreSQL is required (SIDEGUARD_REQUIRE_POSTGRES=1) but ${where} does not answer: ${failure}. Start it (pg_ctlcluster --skip-systemctl-redirect <version> main start) or set DATABASE_URL.`,
      );
    }
    console.log(
      `PostgreSQL suites skipped: ${where} does not answer (${failure}); set DATABASE_URL or start PostgreSQL.`,
    );
    return undefined;
  })();
  return probed;
}

/** A schema that exists for one test run only. */
export interface TestSchema {
  readonly url: string;
  /** Unique per run, e.g. `sg_test_1a2b3c4d5e6f`. */
  readonly schema: string;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/** Reserves a fresh, uniquely named schema (created by the store's migrations on first use). */
export function freshTestSchema(url: string, label = 'test'): TestSchema {
  const schema = `sg_${label.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${randomBytes(6).toString('hex')}`;
  return {
    url,
    schema,
    async drop() {
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => undefined);
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Holds `client`'s backend (`pid`) in `pg_sleep`, waits until it is really sleeping, then
 * terminates it from `admin`'s connection: a connection lost in the middle of a transaction.
 * Resolves with whether `pg_terminate_backend` succeeded and the error the sleeping query got.
 */
export async function terminateWhileSleeping(
  admin: pg.Client | pg.Pool,
  client: pg.ClientBase,
  pid: number,
): Promise<{ terminated: boolean; error: unknown }> {
  const sleeping = client.query('SELECT pg_sleep(30)').then(
    () => new Error('pg_sleep was not interrupted'),
    (error: unknown) => error,
  );
  for (let tries = 0; tries < 100; tries += 1) {
    const state = await admin.query<{ query: string }>(
      `SELECT query FROM pg_stat_activity WHERE pid = $1 AND state = 'active'`,
      [pid],
    );
    if (state.rows[0]?.query.includes('pg_sleep')) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const killed = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
  return { terminated: killed.rows[0]?.ok === true, error: await sleeping };
}

/** A connected client for test set-up, with an error listener (a terminated backend never throws). */
export async function connectClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/**
 * Runs `during` while another transaction holds the row lock on `tenant`'s ledger chain head in
 * `schema` (every commit that seals events for the tenant waits on it), then releases it.
 */
export async function withHeadLocked<T>(
  url: string,
  schema: string,
  tenant: string,
  during: () => Promise<T>,
): Promise<T> {
  const locker = await connectClient(url);
  try {
    await locker.query('BEGIN');
    await locker.query(`SELECT 1 FROM "${schema}".ledger_heads WHERE tenant = $1 FOR UPDATE`, [
      tenant,
    ]);
    return await during();
  } finally {
    await locker.query('ROLLBACK');
    await locker.end();
  }
}
