/**
 * PostgreSQL store maintenance that runs outside group commit: ledger retention (truncation to
 * a checkpoint, with the tenant's chain head locked), and the purge that removes erased
 * envelopes from the table files (decision 025).
 */
import type { ErasurePurge } from '../store-envelopes.js';
import { dedicatedConnection, loadPostgresDriver, openPool } from './postgres-connection.js';
import type { PostgresContext } from './postgres-context.js';
import { readFailure, redactConnectionString } from './postgres-errors.js';
import { OLD_ENVELOPES_FLAG, quoteSchema } from './postgres-migrations.js';

/**
 * How long the purge waits for the exclusive lock `VACUUM FULL` needs, in milliseconds. While
 * it waits, every other session that touches the table queues behind it, so it gives up early
 * (`store_busy`) rather than stall the application.
 */
const PURGE_LOCK_TIMEOUT_MS = 5_000;

/**
 * Removes the tenant's events through `throughSequence` and records the last one removed as
 * the checkpoint, holding the chain head so no commit seals onto the chain meanwhile.
 */
export async function truncatePostgresLedger(
  context: PostgresContext,
  tenant: string,
  throughSequence: number,
): Promise<void> {
  const { sql } = context;
  const client = await context.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    // Lock the head so no commit seals onto the tenant's chain while it is cut.
    await client.query(sql.lockHead, [tenant]);
    const last = (
      await client.query<{ sequence: string; hash: string }>(sql.lastEventThrough, [
        tenant,
        throughSequence,
      ])
    ).rows[0];
    if (last !== undefined) {
      await client.query(sql.deleteEventsThrough, [tenant, throughSequence]);
      await client.query(sql.setCheckpoint, [tenant, last.sequence, last.hash]);
    }
    await client.query('COMMIT');
  } catch (error) {
    broken = error instanceof Error ? error : new Error(String(error));
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * Rewrites `proposal_envelopes` (and, once after the schema-2 migration, `proposals`) with
 * `VACUUM FULL`, so the row versions an erasure deleted are no longer in any table file: plain
 * `VACUUM` marks them free but can leave their bytes in the page until the space is reused.
 * Takes an exclusive lock on each table while it copies the live rows.
 * @throws StoreUnavailableError `store_busy` when the lock is not granted within 5 s.
 */
export async function purgePostgresErased(context: PostgresContext): Promise<ErasurePurge> {
  const { q } = context;
  const { client, done } = await context.dedicated();
  let broken: Error | undefined;
  try {
    await client.query(`SET lock_timeout = ${PURGE_LOCK_TIMEOUT_MS}`);
    await client.query('SET statement_timeout = 0');
    await client.query(`VACUUM FULL ${q}.proposal_envelopes`);
    const flagged = await client.query(`SELECT value FROM ${q}.maintenance WHERE name = $1`, [
      OLD_ENVELOPES_FLAG,
    ]);
    const tables = ['proposal_envelopes'];
    if (flagged.rows.length > 0) {
      await client.query(`VACUUM FULL ${q}.proposals`);
      await client.query(`DELETE FROM ${q}.maintenance WHERE name = $1`, [OLD_ENVELOPES_FLAG]);
      tables.push('proposals');
    }
    await client.query('RESET lock_timeout');
    await client.query('RESET statement_timeout');
    return {
      complete: true,
      detail: `rewrote ${tables.join(' and ')} in ${context.where} (VACUUM FULL); WAL segments, WAL archives, backups and replicas keep what they already hold`,
    };
  } catch (error) {
    broken = error instanceof Error ? error : new Error(String(error));
    throw readFailure(context.where, error);
  } finally {
    await done(broken);
  }
}

/** Options of {@link dropPostgresSchema}. */
export interface DropSchemaOptions {
  readonly connectionString: string;
  /** The schema to drop, with everything in it. */
  readonly schema: string;
  /** Longest wait for the connection, in milliseconds. @default 10000 */
  readonly connectTimeoutMs?: number;
}

/**
 * Drops a schema and everything in it (for throwaway schemas, such as the gate's), on a
 * connection with the store's safeguards (connect timeout, error listener, protocol check).
 * Loads the optional peer `pg` only when called.
 * @throws ConfigurationError `store_schema_name_invalid`, `store_driver_missing`;
 *   StoreUnavailableError when the database cannot be reached or the drop fails.
 */
export async function dropPostgresSchema(options: DropSchemaOptions): Promise<void> {
  const q = quoteSchema(options.schema);
  const where = `PostgreSQL ${redactConnectionString(options.connectionString)}, schema "${options.schema}"`;
  const opened = openPool(await loadPostgresDriver(), {
    connectionString: options.connectionString,
    ...(options.connectTimeoutMs === undefined
      ? {}
      : { connectTimeoutMs: options.connectTimeoutMs }),
  });
  try {
    const { client, done } = await dedicatedConnection(opened, where);
    try {
      await client.query(`DROP SCHEMA IF EXISTS ${q} CASCADE`);
      await done();
    } catch (error) {
      await done(error instanceof Error ? error : new Error(String(error)));
      throw readFailure(where, error);
    }
  } finally {
    await opened.pool.end().catch(() => undefined);
  }
}
