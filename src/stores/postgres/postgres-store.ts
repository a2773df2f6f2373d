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
import type { ErasurePurge } from '../store-envelopes.js';
import {
  checkout,
  dedicatedConnection,
  loadPostgresDriver,
  openPool,
  prepareSchema,
} from './postgres-connection.js';
import type { PostgresContext, PostgresStoreHooks } from './postgres-context.js';
import { readFailure, redactConnectionString } from './postgres-errors.js';
import { createCommitQueue } from './postgres-group-commit.js';
import { purgePostgresErased, truncatePostgresLedger } from './postgres-maintenance.js';
import { quoteSchema } from './postgres-migrations.js';
import { createPreparedStatements } from './postgres-prepared.js';
import { postgresReads } from './postgres-reads.js';
import { commitWrites, parameterisedSql } from './postgres-sql.js';

export type { PostgresStoreHooks } from './postgres-context.js';
export { redactConnectionString } from './postgres-errors.js';

/** Options of {@link createPostgresStore}. Give either `connectionString` or `pool`. */
export interface PostgresStoreConfig {
  /** A `postgres://` URL. The store creates (and on `close` ends) its own pool. */
  readonly connectionString?: string;
  /**
   * An existing pool; the store uses it and never ends it. The timeouts below then do not
   * apply: configure them on the pool (`connectionTimeoutMillis`, `statement_timeout`,
   * `idle_in_transaction_session_timeout`, `query_timeout`) and give it an `error` listener.
   * The store adds an error listener to each client it checks out.
   */
  readonly pool?: pg.Pool;
  /** The schema holding Sideguard's tables; created if missing. @default 'sideguard' */
  readonly schema?: string;
  /**
   * Run the reads as named statements, prepared once per connection, so PostgreSQL neither
   * parses nor (mostly) plans them again (decision 120). Turn it off behind a pooler that
   * cannot keep prepared statements per client (PgBouncer in transaction mode before 1.21,
   * or without `max_prepared_statements`). @default true
   */
  readonly preparedStatements?: boolean;
  /** Pool size when the store creates the pool. @default 10 */
  readonly maxConnections?: number;
  /**
   * `application_name` of the store's connections, so operators can find them in
   * `pg_stat_activity`; an `application_name` in the URL wins. @default 'sideguard'
   */
  readonly applicationName?: string;
  /**
   * Longest wait for a new connection (TCP, TLS, authentication), in milliseconds; then
   * `store_unreachable`. @default 10000
   */
  readonly connectTimeoutMs?: number;
  /**
   * PostgreSQL's `statement_timeout` for every statement, in milliseconds: a commit or read
   * stuck behind another transaction's lock ends with `store_busy` (nothing stored).
   * @default 30000
   */
  readonly statementTimeoutMs?: number;
  /**
   * PostgreSQL's `idle_in_transaction_session_timeout`, in milliseconds: the server ends a
   * session that sits inside a transaction this long (a frozen or partitioned process), which
   * rolls it back and frees the ledger head it locked for every other process. @default 30000
   */
  readonly idleInTransactionTimeoutMs?: number;
  /**
   * How long the client waits for any answer before it gives the connection up as lost, in
   * milliseconds (a server that froze, or a network that dropped packets without a reset).
   * A commit whose COMMIT was in flight then answers `store_commit_outcome_unknown` if the
   * database cannot be asked whether it landed. @default statementTimeoutMs + 5000
   */
  readonly queryTimeoutMs?: number;
}

/** A {@link GuardStore} backed by PostgreSQL. */
export interface PostgresStore extends GuardStore {
  readonly kind: 'postgres';
  /** The schema the store uses. */
  readonly schema: string;
  /**
   * The maintenance step after erasures (decision 025): `VACUUM FULL` of the envelope table
   * (and once after the schema-2 migration of `proposals`), so no table file holds an erased
   * envelope any more. It locks each table exclusively while it copies the live rows: run it
   * in a quiet moment (e.g. nightly). WAL segments, WAL archives, backups and replicas keep
   * what they already hold; see the README.
   * @throws StoreUnavailableError `store_busy` when the table lock is not granted within 5 s.
   */
  purgeErased(): Promise<ErasurePurge>;
}

/**
 * Connects, migrates the schema (advisory-locked) and returns the store.
 * @throws ConfigurationError `store_driver_missing` when the optional peer `pg` is not
 *   installed, `store_connection_missing` without a URL or pool,
 *   `store_config_invalid` for a timeout that is not a whole number of milliseconds,
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
  const opened = openPool(await loadPostgresDriver(), config);
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
    preparedStatements: config.preparedStatements ?? true,
    prepared: createPreparedStatements(config.preparedStatements ?? true),
    hooks,
    connect: () => checkout(opened.pool, where),
    dedicated: () => dedicatedConnection(opened, where),
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
      throw readFailure(where, error);
    }
  };

  return {
    kind: 'postgres',
    refusesListedEffects: true,
    schema,

    async commit(write: StoreCommit): Promise<StoreCommitResult> {
      ensureOpen();
      assertCommitShape(write);
      return track(queue.enqueue(write, commitWrites(q, write)));
    },
    getProposal: (tenant, proposal) => read(() => reads.getProposal(tenant, proposal)),
    listProposalsByEffect: (tenant, effectScope, limit = 50) =>
      read(() => reads.listProposalsByEffect(tenant, effectScope, limit)),
    getEffectClaim: (tenant, effectScope) => read(() => reads.getEffectClaim(tenant, effectScope)),
    listEvidence: (tenant, proposal) => read(() => reads.listEvidence(tenant, proposal)),
    listDue: (query) => read(() => reads.listDue(query)),
    listProposals: (query) => read(() => reads.listProposals(query)),
    readLedger: (query) => read(() => reads.readLedger(query)),
    ledgerHead: (tenant) => read(() => reads.ledgerHead(tenant)),
    // Reading the head flushes the WAL past it (its commit takes a transaction id, decision 124).
    sync: (tenant) =>
      read(async () => {
        await reads.ledgerHead(tenant);
      }),
    truncateLedger: (tenant, throughSequence) =>
      read(() => truncatePostgresLedger(context, tenant, throughSequence)),
    ledgerCheckpoint: (tenant) => read(() => reads.ledgerCheckpoint(tenant)),
    purgeErased: () => read(() => purgePostgresErased(context)),

    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...inFlight]);
      opened.detach();
      if (opened.ownsPool) await opened.pool.end();
    },
  };
}
