/**
 * What the PostgreSQL store's modules share: the pool, the quoted schema, the statements, a
 * checkout that never leaves a client without an error listener, and the test hooks.
 */
import type pg from 'pg';
import type { ProposalRecord } from '../../core/store.js';
import { decodeProposal, type ProposalRow } from '../store-codec.js';
import type { DedicatedConnection } from './postgres-connection.js';
import type { PreparedStatements } from './postgres-prepared.js';
import type { PostgresStatements } from './postgres-sql.js';

/**
 * Points inside a commit where tests can act (for example terminate the backend). Not part of
 * the public API: only `createPostgresStoreWithHooks` accepts them.
 */
export interface PostgresStoreHooks {
  /**
   * Once per batch that seals events: after every commit's proposal, claim and evidence writes
   * (the chain heads are already locked), right before the events are appended.
   */
  readonly beforeSeal?: (client: pg.PoolClient, backendPid: number) => Promise<void>;
  /** Replaces `COMMIT` (it must send it); lets a test lose the connection around it. */
  readonly commit?: (client: pg.PoolClient) => Promise<void>;
}

/** The store's shared state, passed to each module (never captured across them). */
export interface PostgresContext {
  readonly pool: pg.Pool;
  /** The schema, quoted for SQL. */
  readonly q: string;
  /** `PostgreSQL <redacted url>, schema "<name>"`, for messages. */
  readonly where: string;
  readonly sql: PostgresStatements;
  /** Whether reads run as named statements, prepared once per connection (decision 120). */
  readonly preparedStatements: boolean;
  /** The batches' statements, prepared once per connection where allowed (decision 120). */
  readonly prepared: PreparedStatements;
  readonly hooks: PostgresStoreHooks;
  /**
   * Checks a client out of the pool.
   * @throws StoreUnavailableError `store_unreachable` when no connection can be made.
   */
  readonly connect: () => Promise<pg.PoolClient>;
  /** A connection without statement or read timeout, for maintenance (`VACUUM FULL`). */
  readonly dedicated: () => Promise<DedicatedConnection>;
}

/** Decodes a proposal row, asserting it is the row that was asked for. */
export function toProposal(context: PostgresContext, row: ProposalRow): ProposalRecord {
  return decodeProposal(row, context.where);
}

/** The backend process id of a checked-out client (0 when unknown). */
export function backendPid(client: pg.PoolClient): number {
  return (client as unknown as { processID: number | null }).processID ?? 0;
}
