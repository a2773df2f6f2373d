/**
 * The PostgreSQL store's connections: the pool it creates (or the one it is given), checkout
 * with a definite error when the database cannot be reached, and the schema migration on open.
 */
import pg from 'pg';
import { SideguardError } from '../../core/errors.js';
import { unreachable } from './postgres-errors.js';
import { migratePostgres } from './postgres-migrations.js';

/** How the store reaches PostgreSQL. */
export interface PostgresPoolConfig {
  readonly connectionString?: string;
  readonly pool?: pg.Pool;
  readonly maxConnections?: number;
}

/** A pool the store uses, and whether it must end it on close. */
export interface StorePool {
  readonly pool: pg.Pool;
  readonly ownsPool: boolean;
}

/** Creates the store's pool, or adopts the given one. */
export function openPool(config: PostgresPoolConfig): StorePool {
  if (config.pool !== undefined) return { pool: config.pool, ownsPool: false };
  const pool = new pg.Pool({
    connectionString: config.connectionString,
    max: config.maxConnections ?? 10,
  });
  // An idle connection that the server closes must not crash the process; the next checkout
  // gets a fresh connection.
  pool.on('error', () => undefined);
  return { pool, ownsPool: true };
}

/**
 * Checks a client out of `pool`.
 * @throws StoreUnavailableError `store_unreachable` when no connection can be made.
 */
export async function checkout(pool: pg.Pool, where: string): Promise<pg.PoolClient> {
  try {
    return await pool.connect();
  } catch (error) {
    throw unreachable(where, error);
  }
}

/**
 * Migrates `schema` on one checked-out connection. On failure the pool is ended (if the store
 * owns it) and the error is definite.
 * @throws ConfigurationError `store_schema_newer`; StoreUnavailableError `store_unreachable`.
 */
export async function prepareSchema(
  opened: StorePool,
  schema: string,
  where: string,
): Promise<void> {
  const endPool = async () => {
    if (opened.ownsPool) await opened.pool.end().catch(() => undefined);
  };
  const client = await checkout(opened.pool, where).catch(async (error: unknown) => {
    await endPool();
    throw error;
  });
  try {
    await migratePostgres(client, schema, where);
    client.release();
  } catch (error) {
    client.release(error instanceof Error ? error : true);
    await endPool();
    if (error instanceof SideguardError) throw error;
    throw unreachable(where, error, 'prepare');
  }
}
