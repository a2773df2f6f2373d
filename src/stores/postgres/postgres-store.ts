/**
 * The PostgreSQL store (`pg`), for many processes or machines sharing one database: conditional
 * updates for compare-and-set, a unique key for the effect claim, and a locked per-tenant chain
 * head for the ledger. Commits are grouped per process: one transaction per batch, one savepoint
 * per commit (decision 024). This module assembles the store from its parts.
 */
import type pg from 'pg';
import { ConfigurationError, StoreInvariantError } from '../../core/errors.js';
import type { GuardStore, StoreCommit, StoreCommitResult } from '../../core/store.js';
import { assertCommitShape } from '../../core/store-rules.js';
import { checkout, openPool, prepareSchema } from './postgres-connection.js';
import type { PostgresContext, PostgresStoreHooks } from './postgres-context.js';
import {
  isConnectionError,
  readConnectionLost,
  redactConnectionString,
} from './postgres-errors.js';
import { createCommitQueue } from './postgres-group-commit.js';
import { truncatePostgresLedger } from './postgres-maintenance.js';
import { quoteSchema } from './postgres-migrations.js';
import { postgresReads } from './postgres-reads.js';
import { commitStatements, parameterisedSql } from './postgres-sql.js';

export type { PostgresStoreHooks } from './postgres-context.js';
export { redactConnectionString } from './postgres-errors.js';

/** Options of {@link createPostgresStore}. Give either `connectionString` or `pool`. */
export interface PostgresStoreConfig {
  /** A `postgres://` URL. The store creates (and on `close` ends) its own pool. */
  readonly connectionString?: string;
  /** An existing pool; the store uses it and never ends it. */
  readonly pool?: pg.Pool;
  /** The schema holding Sideguard's tables; created if missing. @default 'sideguard' */
  readonly schema?: string;
  /** Pool size when the store creates the pool. @default 10 */
  readonly maxConnections?: number;
}

/** A {@link GuardStore} backed by PostgreSQL. */
export interface PostgresStore extends GuardStore {
  readonly kind: 'postgres';
  /** The schema the store uses. */
  readonly schema: string;
}

/**
 * Connects, migrates the schema (advisory-locked) and returns the store.
 * @throws ConfigurationError `store_connection_missing` without a URL or pool,
 *   `store_schema_newer` when the schema was written by a newer Sideguard.
 * @throws StoreUnavailableError `store_unreachable` when the database does not answer.
 */
export function createPostgresStore(config: PostgresStoreConfig): Promise<PostgresStore> {
  return createPostgresStoreWithHooks(config, {});
}

/** {@link createPostgresStore} with test hooks inside each commit. Internal: for tests only. */
export async function createPostgresStoreWithHooks(
  config: PostgresStoreConfig,
  hooks: PostgresStoreHooks,
): Promise<PostgresStore> {
  const schema = config.schema ?? 'sideguard';
  const q = quoteSchema(schema);
  if (config.pool === undefined && config.connectionString === undefined) {
    throw new ConfigurationError(
      'store_connection_missing',
      'createPostgresStore needs a connectionString (postgres://user@host:5432/db) or a pg pool.',
    );
  }
  const opened = openPool(config);
  const target =
    config.connectionString === undefined
      ? 'the given pool'
      : redactConnectionString(config.connectionString);
  const where = `PostgreSQL ${target}, schema "${schema}"`;
  await prepareSchema(opened, schema, where);

  const context: PostgresContext = {
    pool: opened.pool,
    q,
    where,
    sql: parameterisedSql(q),
    hooks,
    connect: () => checkout(opened.pool, where),
  };
  const queue = createCommitQueue(context);
  const reads = postgresReads(context);

  let closed = false;
  // Operations in flight; close() waits for them before ending the pool (pg-pool would leave
  // queued checkouts hanging).
  const inFlight = new Set<Promise<unknown>>();
  const track = <T>(operation: Promise<T>): Promise<T> => {
    inFlight.add(operation);
    const forget = () => inFlight.delete(operation);
    operation.then(forget, forget);
    return operation;
  };
  const ensureOpen = (): void => {
    if (closed) throw new StoreInvariantError('store_closed', `The store for ${where} is closed`);
  };
  const read = async <T>(run: () => Promise<T>): Promise<T> => {
    ensureOpen();
    try {
      return await track(run());
    } catch (error) {
      if (isConnectionError(error)) throw readConnectionLost(where, error);
      throw error;
    }
  };

  return {
    kind: 'postgres',
    schema,

    async commit(write: StoreCommit): Promise<StoreCommitResult> {
      ensureOpen();
      assertCommitShape(write);
      return track(queue.enqueue(write, commitStatements(q, write)));
    },
    getProposal: (tenant, proposal) => read(() => reads.getProposal(tenant, proposal)),
    listProposalsByEffect: (tenant, effectScope, limit = 50) =>
      read(() => reads.listProposalsByEffect(tenant, effectScope, limit)),
    getEffectClaim: (tenant, effectScope) => read(() => reads.getEffectClaim(tenant, effectScope)),
    listEvidence: (tenant, proposal) => read(() => reads.listEvidence(tenant, proposal)),
    listDue: (query) => read(() => reads.listDue(query)),
    readLedger: (query) => read(() => reads.readLedger(query)),
    ledgerHead: (tenant) => read(() => reads.ledgerHead(tenant)),
    truncateLedger: (tenant, throughSequence) =>
      read(() => truncatePostgresLedger(context, tenant, throughSequence)),
    ledgerCheckpoint: (tenant) => read(() => reads.ledgerCheckpoint(tenant)),

    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...inFlight]);
      if (opened.ownsPool) await opened.pool.end();
    },
  };
}
