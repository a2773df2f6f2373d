/**
 * The PostgreSQL store's connections: the pool it creates (or the one it is given), with an
 * error listener on every client for its whole life, connect/statement/idle-in-transaction/read
 * timeouts, a check that the server speaks PostgreSQL at all, and the schema migration on open.
 * Whatever the server does, a call ends in a result or a definite `StoreUnavailableError`.
 */
import { Socket } from 'node:net';
import type pg from 'pg';
import { ConfigurationError, SideguardError } from '../../core/errors.js';
import { unreachable } from './postgres-errors.js';
import { migratePostgres } from './postgres-migrations.js';

/** How the store reaches PostgreSQL, and how long it waits (see `PostgresStoreConfig`). */
export interface PostgresConnectionConfig {
  readonly connectionString?: string;
  readonly pool?: pg.Pool;
  readonly maxConnections?: number;
  readonly applicationName?: string;
  readonly connectTimeoutMs?: number;
  readonly statementTimeoutMs?: number;
  readonly idleInTransactionTimeoutMs?: number;
  readonly queryTimeoutMs?: number;
}

/** The defaults of the timeouts and the pool, in milliseconds and connections. */
export const POSTGRES_CONNECTION_DEFAULTS = {
  maxConnections: 10,
  applicationName: 'sideguard',
  connectTimeoutMs: 10_000,
  statementTimeoutMs: 30_000,
  idleInTransactionTimeoutMs: 30_000,
  /** Added to `statementTimeoutMs` for the default `queryTimeoutMs`. */
  queryGraceMs: 5_000,
} as const;

/** The `pg` module (the driver). */
export type PostgresDriver = typeof pg;

/**
 * Loads `pg`, an optional peer dependency of sideguard, on first use: importing
 * `sideguard/postgres` never loads it, and a missing driver gets a message saying what to do.
 * @throws ConfigurationError `store_driver_missing` when `pg` is not installed.
 */
export async function loadPostgresDriver(): Promise<PostgresDriver> {
  try {
    const loaded = (await import('pg')) as PostgresDriver & { default?: PostgresDriver };
    return loaded.default ?? loaded;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const missing =
      (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
      /['"]pg['"]/.test(error instanceof Error ? error.message : '');
    if (!missing) throw error;
    throw new ConfigurationError(
      'store_driver_missing',
      'The PostgreSQL store needs the `pg` package, an optional peer dependency of sideguard: run `npm install pg@^8.11` in your project (the SQLite store needs nothing more).',
      { cause: error },
    );
  }
}

/** A pool the store uses, whether it must end it, and how to undo what the store added. */
export interface StorePool {
  readonly driver: PostgresDriver;
  readonly pool: pg.Pool;
  readonly ownsPool: boolean;
  /** The settings a dedicated connection (the migration) uses; undefined for a given pool. */
  readonly clientConfig: pg.ClientConfig | undefined;
  /** Removes the store's listeners from a pool it was given. */
  readonly detach: () => void;
}

/** The longest timer Node accepts (about 24.8 days). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

function timeout(name: string, value: number | undefined, fallback: number): number {
  const chosen = value ?? fallback;
  if (!Number.isInteger(chosen) || chosen < 1 || chosen > MAX_TIMEOUT_MS) {
    throw new ConfigurationError(
      'store_config_invalid',
      `createPostgresStore: ${name} must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}, got ${String(value)}.`,
    );
  }
  return chosen;
}

/**
 * What a PostgreSQL server sends first: `R` (authentication), `E` (an error such as too many
 * connections), `v` (protocol negotiation), or `S`/`N` after an SSL request.
 */
const POSTGRES_FIRST_BYTES = new Set(['R', 'E', 'v', 'S', 'N']);

function describeByte(byte: number): string {
  const printable = byte >= 0x20 && byte < 0x7f ? ` '${String.fromCharCode(byte)}'` : '';
  return `0x${byte.toString(16).padStart(2, '0')}${printable}`;
}

/**
 * A socket that ends the connection at once when the first byte the server sends is not one a
 * PostgreSQL server sends (an HTTP, Redis or SSH port answers with something else, and the
 * driver would otherwise wait for a message length it never gets).
 */
function postgresSocket(): Socket {
  const socket = new Socket();
  socket.once('data', (chunk: Buffer) => {
    const first = chunk[0];
    if (first === undefined || POSTGRES_FIRST_BYTES.has(String.fromCharCode(first))) return;
    socket.destroy(
      new Error(
        `the server is not a PostgreSQL server: it answered the startup message with ${describeByte(first)}, where PostgreSQL sends 'R', 'E' or 'v'. Check the host and port`,
      ),
    );
  });
  return socket;
}

const guarded = new WeakSet<pg.ClientBase>();

/**
 * Gives a client an error listener for the rest of its life. pg-pool removes its own listener
 * while a client is checked out, so an error that arrives before the borrower attaches one (a
 * backend terminated during the hand-over) would otherwise be an uncaught exception. The
 * client's failure still reaches whoever uses it: its queries fail and it is not queryable.
 */
function guardClient(client: pg.ClientBase): void {
  if (guarded.has(client)) return;
  guarded.add(client);
  client.on('error', () => undefined);
}

/** The pg settings of the store's own connections. */
function clientConfig(config: PostgresConnectionConfig): pg.ClientConfig {
  const d = POSTGRES_CONNECTION_DEFAULTS;
  const statementTimeoutMs = timeout(
    'statementTimeoutMs',
    config.statementTimeoutMs,
    d.statementTimeoutMs,
  );
  return {
    ...(config.connectionString === undefined ? {} : { connectionString: config.connectionString }),
    application_name: config.applicationName ?? d.applicationName,
    connectionTimeoutMillis: timeout(
      'connectTimeoutMs',
      config.connectTimeoutMs,
      d.connectTimeoutMs,
    ),
    statement_timeout: statementTimeoutMs,
    idle_in_transaction_session_timeout: timeout(
      'idleInTransactionTimeoutMs',
      config.idleInTransactionTimeoutMs,
      d.idleInTransactionTimeoutMs,
    ),
    query_timeout: timeout(
      'queryTimeoutMs',
      config.queryTimeoutMs,
      Math.min(MAX_TIMEOUT_MS, statementTimeoutMs + d.queryGraceMs),
    ),
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    stream: postgresSocket,
  };
}

/** Creates the store's pool, or adopts the given one (adding only error listeners). */
export function openPool(driver: PostgresDriver, config: PostgresConnectionConfig): StorePool {
  if (config.pool !== undefined) {
    const given = config.pool;
    given.on('acquire', guardClient);
    return {
      driver,
      pool: given,
      ownsPool: false,
      clientConfig: undefined,
      detach: () => given.removeListener('acquire', guardClient),
    };
  }
  const settings = clientConfig(config);
  const pool = new driver.Pool({
    ...settings,
    max: config.maxConnections ?? POSTGRES_CONNECTION_DEFAULTS.maxConnections,
  });
  // An idle connection that the server closes must not crash the process; the next checkout
  // gets a fresh connection.
  pool.on('error', () => undefined);
  pool.on('acquire', guardClient);
  return { driver, pool, ownsPool: true, clientConfig: settings, detach: () => undefined };
}

/**
 * Checks a client out of `pool`.
 * @throws StoreUnavailableError `store_unreachable` when no connection can be made in time.
 */
export async function checkout(pool: pg.Pool, where: string): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (error) {
    throw unreachable(where, error);
  }
}

/** A connection for long maintenance, and how to give it back (with the error that broke it). */
export interface DedicatedConnection {
  readonly client: pg.ClientBase;
  readonly done: (error?: Error) => Promise<void>;
}

/**
 * A connection for long maintenance (a migration, `VACUUM FULL`). A pool the store created
 * gets a dedicated connection with the same connect timeout but no statement or read timeout:
 * a migration that rewrites a large table must not be cut off half way (it would only roll
 * back and try again next time). A given pool lends one of its clients.
 */
export async function dedicatedConnection(
  opened: StorePool,
  where: string,
): Promise<DedicatedConnection> {
  if (opened.clientConfig === undefined) {
    const client = await checkout(opened.pool, where);
    return { client, done: async (error) => client.release(error) };
  }
  const { statement_timeout: _statement, query_timeout: _query, ...settings } = opened.clientConfig;
  const client = new opened.driver.Client(settings);
  guardClient(client);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw unreachable(where, error);
  }
  return { client, done: () => client.end().catch(() => undefined) };
}

/**
 * Migrates `schema`. On failure the pool is ended (if the store owns it) and the error is
 * definite.
 * @throws ConfigurationError `store_schema_newer`; StoreUnavailableError `store_unreachable`.
 */
export async function prepareSchema(
  opened: StorePool,
  schema: string,
  where: string,
): Promise<void> {
  const endPool = async () => {
    opened.detach();
    if (opened.ownsPool) await opened.pool.end().catch(() => undefined);
  };
  const connection = await dedicatedConnection(opened, where).catch(async (error: unknown) => {
    await endPool();
    throw error;
  });
  try {
    await migratePostgres(connection.client, schema, where);
    await connection.done();
  } catch (error) {
    await connection.done(error instanceof Error ? error : new Error(String(error)));
    await endPool();
    if (error instanceof SideguardError) throw error;
    throw unreachable(where, error, 'prepare');
  }
}
