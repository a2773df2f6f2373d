/**
 * The PostgreSQL store (`pg`), for many processes or machines sharing one database: conditional
 * updates for compare-and-set, a unique key for the effect claim, and a locked per-tenant chain
 * head for the ledger, all in one transaction per commit.
 */
import pg from 'pg';
import { ConfigurationError, SideguardError, StoreInvariantError } from '../../core/errors.js';
import {
  GENESIS_HASH,
  type LedgerEvent,
  type LedgerHead,
  sealLedgerEvents,
} from '../../core/ledger.js';
import type {
  AuthorityEvidenceRecord,
  DueQuery,
  GuardStore,
  LedgerQuery,
  ProposalRecord,
  StoreCommit,
  StoreCommitResult,
} from '../../core/store.js';
import { assertCommitShape, checkEffectClaim } from '../../core/store-rules.js';
import type { ProposalStatus } from '../../core/vocabulary.js';
import {
  decodeEvent,
  decodeEvidence,
  decodeProposal,
  encodeJson,
  firstDuplicateEvidence,
} from '../store-codec.js';
import { StoreUnavailableError } from '../store-errors.js';
import { migratePostgres, quoteSchema } from './postgres-migrations.js';

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
 * Points inside a commit where tests can act (for example terminate the backend). Not part of
 * the public API: only `createPostgresStoreWithHooks` accepts them.
 */
export interface PostgresStoreHooks {
  /** After the proposal, claim and evidence writes, right before the chain head is locked. */
  readonly beforeSeal?: (client: pg.PoolClient, backendPid: number) => Promise<void>;
  /** Replaces `COMMIT` (it must send it); lets a test lose the connection around it. */
  readonly commit?: (client: pg.PoolClient) => Promise<void>;
}

interface ProposalRow {
  tenant: string;
  proposal: string;
  revision: number;
  status: string;
  record: string;
}
interface EventRow {
  tenant: string;
  sequence: number;
  hash: string;
  event: string;
}
interface EvidenceRow {
  tenant: string;
  proposal: string;
  evidence_digest: string;
  record: string;
}

const CONNECTION_ERROR_CODES = new Set([
  '57P01', // admin_shutdown (pg_terminate_backend)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08003',
  '08006',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);
/** Serialization failure and deadlock: the transaction was rolled back whole; run it again. */
const RETRYABLE_CODES = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 5;

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function isConnectionError(error: unknown): boolean {
  if (error instanceof SideguardError) return false;
  const code = errorCode(error);
  if (code !== undefined && CONNECTION_ERROR_CODES.has(code)) return true;
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection error|not queryable|socket|ECONNRESET/i.test(message);
}

/** A connection string with any password replaced, safe for messages. */
export function redactConnectionString(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return connectionString.replace(/(password\s*=\s*)\S+/gi, '$1***');
  }
}

function backendPid(client: pg.PoolClient): number {
  return (client as unknown as { processID: number | null }).processID ?? 0;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
  const ownsPool = config.pool === undefined;
  const pool =
    config.pool ??
    new pg.Pool({ connectionString: config.connectionString, max: config.maxConnections ?? 10 });
  // An idle connection that the server closes must not crash the process; the next checkout
  // gets a fresh connection.
  if (ownsPool) pool.on('error', () => undefined);
  const target =
    config.connectionString === undefined
      ? 'the given pool'
      : redactConnectionString(config.connectionString);
  const where = `PostgreSQL ${target}, schema "${schema}"`;

  const connect = async (): Promise<pg.PoolClient> => {
    try {
      return await pool.connect();
    } catch (error) {
      throw new StoreUnavailableError(
        'store_unreachable',
        `Could not connect to ${where}: ${error instanceof Error ? error.message : String(error)}. Nothing was stored; check that the database is running and reachable.`,
        { applied: false, cause: error },
      );
    }
  };

  {
    const client = await connect().catch(async (error: unknown) => {
      if (ownsPool) await pool.end().catch(() => undefined);
      throw error;
    });
    try {
      await migratePostgres(client, schema, where);
      client.release();
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      if (ownsPool) await pool.end().catch(() => undefined);
      if (error instanceof SideguardError) throw error;
      throw new StoreUnavailableError(
        'store_unreachable',
        `Could not prepare ${where}: ${error instanceof Error ? error.message : String(error)}.`,
        { applied: false, cause: error },
      );
    }
  }

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
  const toProposal = (row: ProposalRow): ProposalRecord => decodeProposal(row.record, row, where);

  const sql = {
    insertProposal: `INSERT INTO ${q}.proposals
        (tenant, proposal, revision, status, effect_scope, created_at_ms, due_at_ms, record)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tenant, proposal) DO NOTHING`,
    updateProposal: `UPDATE ${q}.proposals SET revision = $3, status = $4, effect_scope = $5,
        created_at_ms = $6, due_at_ms = $7, record = $8
      WHERE tenant = $1 AND proposal = $2 AND revision = $9 AND status = $10`,
    getProposal: `SELECT tenant, proposal, revision, status, record FROM ${q}.proposals
      WHERE tenant = $1 AND proposal = $2`,
    insertClaim: `INSERT INTO ${q}.effect_claims (tenant, effect_scope, proposal, claimed_at_ms)
      VALUES ($1, $2, $3, $4) ON CONFLICT (tenant, effect_scope) DO NOTHING`,
    lockClaim: `SELECT proposal, claimed_at_ms FROM ${q}.effect_claims
      WHERE tenant = $1 AND effect_scope = $2 FOR UPDATE`,
    passClaim: `UPDATE ${q}.effect_claims SET proposal = $3, claimed_at_ms = $4
      WHERE tenant = $1 AND effect_scope = $2`,
    ownerStatus: `SELECT status FROM ${q}.proposals WHERE tenant = $1 AND proposal = $2`,
    storedEvidence: `SELECT proposal, evidence_digest FROM ${q}.authority_evidence
      WHERE tenant = $1 AND proposal = ANY($2::text[]) AND evidence_digest = ANY($3::text[])`,
    insertEvidence: `INSERT INTO ${q}.authority_evidence (tenant, proposal, evidence_digest, record)
      VALUES ($1, $2, $3, $4) ON CONFLICT (tenant, proposal, evidence_digest) DO NOTHING`,
    lockHead: `SELECT sequence, hash FROM ${q}.ledger_heads WHERE tenant = $1 FOR UPDATE`,
    createHead: `INSERT INTO ${q}.ledger_heads (tenant, sequence, hash) VALUES ($1, 0, $2)
      ON CONFLICT (tenant) DO NOTHING`,
    appendEvents: `WITH appended AS (
        INSERT INTO ${q}.ledger_events (tenant, sequence, proposal, hash, event)
        SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[])
      )
      UPDATE ${q}.ledger_heads SET sequence = $6, hash = $7 WHERE tenant = $1`,
  };

  /** Decides and applies one commit inside an open transaction; undefined result = committed. */
  const applyCommit = async (
    client: pg.PoolClient,
    write: StoreCommit,
  ): Promise<StoreCommitResult> => {
    const tenant = write.tenant;
    const change = write.proposal;
    if (change !== undefined) {
      const r = change.record;
      const values = [
        tenant,
        r.proposal,
        r.revision,
        r.status,
        r.effectScope,
        r.createdAtMs,
        r.dueAtMs,
        encodeJson(r),
      ];
      if (change.kind === 'insert') {
        const inserted = await client.query(sql.insertProposal, values);
        if (inserted.rowCount !== 1) return { kind: 'proposal_exists' };
      } else {
        // Compare-and-set as a conditional update: a concurrent writer holding the row makes us
        // wait, then PostgreSQL re-checks the condition on the row it committed.
        const updated = await client.query(sql.updateProposal, [
          ...values,
          change.expectedRevision,
          change.expectedStatus,
        ]);
        if (updated.rowCount !== 1) {
          const current = await client.query<ProposalRow>(sql.getProposal, [tenant, r.proposal]);
          const row = current.rows[0];
          return {
            kind: 'revision_conflict',
            current: row === undefined ? undefined : toProposal(row),
          };
        }
      }
    }
    if (write.claim !== undefined) {
      const { effectScope, proposal, atMs } = write.claim;
      const taken = await client.query(sql.insertClaim, [tenant, effectScope, proposal, atMs]);
      if (taken.rowCount !== 1) {
        const held = await client.query<{ proposal: string; claimed_at_ms: string }>(
          sql.lockClaim,
          [tenant, effectScope],
        );
        const row = held.rows[0];
        if (row === undefined) {
          throw new StoreInvariantError(
            'assertion_failed',
            `Assertion failed: effect claim ${effectScope} vanished in ${where}`,
          );
        }
        const owner =
          row.proposal === proposal
            ? undefined
            : (
                await client.query<{ status: ProposalStatus }>(sql.ownerStatus, [
                  tenant,
                  row.proposal,
                ])
              ).rows[0];
        const refused = checkEffectClaim(
          proposal,
          { tenant, effectScope, proposal: row.proposal, claimedAtMs: Number(row.claimed_at_ms) },
          owner?.status,
        );
        if (refused !== undefined) return refused;
        await client.query(sql.passClaim, [tenant, effectScope, proposal, atMs]);
      }
    }
    const evidence = write.evidence ?? [];
    if (evidence.length > 0) {
      const stored = await client.query<{ proposal: string; evidence_digest: string }>(
        sql.storedEvidence,
        [
          tenant,
          evidence.map((item) => item.proposal),
          evidence.map((item) => item.evidenceDigest),
        ],
      );
      const present = new Set(
        stored.rows.map((row) => `${row.proposal}\u0000${row.evidence_digest}`),
      );
      const duplicate = firstDuplicateEvidence(evidence, (item) =>
        present.has(`${item.proposal}\u0000${item.evidenceDigest}`),
      );
      if (duplicate !== undefined) return { kind: 'evidence_duplicate', evidenceDigest: duplicate };
      for (const item of evidence) {
        const inserted = await client.query(sql.insertEvidence, [
          tenant,
          item.proposal,
          item.evidenceDigest,
          encodeJson(item),
        ]);
        // A concurrent commit stored the same digest after our check: it won.
        if (inserted.rowCount !== 1) {
          return { kind: 'evidence_duplicate', evidenceDigest: item.evidenceDigest };
        }
      }
    }
    if (write.events.length === 0) return { kind: 'committed', events: [] };
    await hooks.beforeSeal?.(client, backendPid(client));
    // The chain head is taken as late as possible: it serialises every commit of the tenant
    // from here until COMMIT returns.
    let head = (await client.query<{ sequence: string; hash: string }>(sql.lockHead, [tenant]))
      .rows[0];
    if (head === undefined) {
      await client.query(sql.createHead, [tenant, GENESIS_HASH]);
      head = (await client.query<{ sequence: string; hash: string }>(sql.lockHead, [tenant]))
        .rows[0];
    }
    if (head === undefined) {
      throw new StoreInvariantError(
        'assertion_failed',
        `Assertion failed: no chain head in ${where}`,
      );
    }
    const events = sealLedgerEvents(
      tenant,
      { sequence: Number(head.sequence), hash: head.hash },
      write.events,
    );
    const last = events.at(-1) as LedgerEvent;
    await client.query(sql.appendEvents, [
      tenant,
      events.map((event) => event.sequence),
      events.map((event) => event.proposal),
      events.map((event) => event.hash),
      events.map((event) => encodeJson(event)),
      last.sequence,
      last.hash,
    ]);
    return { kind: 'committed', events };
  };

  /**
   * After the connection dropped while COMMIT was in flight: makes sure the old backend is gone
   * (terminating it if it is still waiting inside the transaction), then looks for the commit's
   * first sealed event or evidence to learn whether it landed.
   */
  const resolveLostCommit = async (
    write: StoreCommit,
    result: StoreCommitResult,
    pid: number,
    cause: unknown,
  ): Promise<StoreCommitResult> => {
    let landed: boolean | undefined;
    try {
      const checker = await pool.connect();
      let failure: Error | undefined;
      try {
        landed = await commitLanded(checker, write, result, pid);
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
      } finally {
        checker.release(failure);
      }
    } catch {
      landed = undefined;
    }
    if (landed === true) return result;
    if (landed === false) {
      throw new StoreUnavailableError(
        'store_connection_lost',
        `The connection to ${where} dropped during COMMIT and the commit did not land; nothing was stored. Retry the operation.`,
        { applied: false, cause },
      );
    }
    throw new StoreUnavailableError(
      'store_commit_outcome_unknown',
      `The connection to ${where} dropped during COMMIT and the database could not tell whether it landed. Re-read the proposal before acting again.`,
      { applied: 'unknown', cause },
    );
  };

  /** True/false once the old backend is gone; undefined while it might still be committing. */
  const commitLanded = async (
    checker: pg.PoolClient,
    write: StoreCommit,
    result: StoreCommitResult,
    pid: number,
  ): Promise<boolean | undefined> => {
    let gone = pid === 0;
    for (let waitedMs = 0; !gone && waitedMs < 10_000; waitedMs += 50) {
      const activity = await checker.query<{ state: string | null }>(
        'SELECT state FROM pg_stat_activity WHERE pid = $1',
        [pid],
      );
      const state = activity.rows[0]?.state;
      if (state === undefined || state === null || state === 'idle') {
        gone = true;
        break;
      }
      // Still inside the transaction: COMMIT never arrived. Terminating rolls it back for sure.
      if (state.startsWith('idle in transaction')) {
        await checker.query('SELECT pg_terminate_backend($1)', [pid]);
      }
      await sleep(50);
    }
    if (!gone) return undefined;
    const first = result.kind === 'committed' ? result.events[0] : undefined;
    const firstEvidence = write.evidence?.[0];
    if (first !== undefined) {
      const found = await checker.query<{ hash: string }>(
        `SELECT hash FROM ${q}.ledger_events WHERE tenant = $1 AND sequence = $2`,
        [write.tenant, first.sequence],
      );
      return found.rows[0]?.hash === first.hash;
    }
    if (firstEvidence !== undefined) {
      const found = await checker.query<{ record: string }>(
        `SELECT record FROM ${q}.authority_evidence WHERE tenant = $1 AND proposal = $2 AND evidence_digest = $3`,
        [write.tenant, firstEvidence.proposal, firstEvidence.evidenceDigest],
      );
      return found.rows[0]?.record === encodeJson(firstEvidence);
    }
    return true; // the commit stored nothing
  };

  const commitOnce = async (write: StoreCommit): Promise<StoreCommitResult> => {
    const client = await connect();
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    const pid = backendPid(client);
    let phase: 'transaction' | 'commit' = 'transaction';
    let result: StoreCommitResult | undefined;
    try {
      await client.query('BEGIN');
      result = await applyCommit(client, write);
      if (result.kind !== 'committed') {
        await client.query('ROLLBACK');
        return result;
      }
      phase = 'commit';
      if (hooks.commit === undefined) await client.query('COMMIT');
      else await hooks.commit(client);
      return result;
    } catch (error) {
      if (isConnectionError(error) || broken !== undefined) {
        broken ??= error instanceof Error ? error : new Error(String(error));
        if (phase === 'commit' && result !== undefined) {
          return await resolveLostCommit(write, result, pid, error);
        }
        throw new StoreUnavailableError(
          'store_connection_lost',
          `The connection to ${where} dropped before the commit was sent; the transaction was rolled back and nothing was stored. Retry the operation.`,
          { applied: false, cause: error },
        );
      }
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  };

  const read = async <T>(run: (client: pg.Pool) => Promise<T>): Promise<T> => {
    ensureOpen();
    try {
      return await track(run(pool));
    } catch (error) {
      if (isConnectionError(error)) {
        throw new StoreUnavailableError(
          'store_connection_lost',
          `Reading from ${where} failed: the connection dropped. Retry the read.`,
          { applied: false, cause: error },
        );
      }
      throw error;
    }
  };

  const commitWithRetries = async (write: StoreCommit): Promise<StoreCommitResult> => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await commitOnce(write);
      } catch (error) {
        const code = errorCode(error);
        if (attempt < MAX_ATTEMPTS && code !== undefined && RETRYABLE_CODES.has(code)) continue;
        if (error instanceof SideguardError) throw error;
        throw new StoreUnavailableError(
          'store_io_failed',
          `${where} refused the commit (${code ?? 'no code'}: ${error instanceof Error ? error.message : String(error)}); the transaction was rolled back and nothing was stored.`,
          { applied: false, cause: error },
        );
      }
    }
  };

  return {
    kind: 'postgres',
    schema,

    async commit(write: StoreCommit): Promise<StoreCommitResult> {
      ensureOpen();
      assertCommitShape(write);
      return track(commitWithRetries(write));
    },

    getProposal(tenant, proposal) {
      return read(async (db) => {
        const row = (await db.query<ProposalRow>(sql.getProposal, [tenant, proposal])).rows[0];
        return row === undefined ? undefined : toProposal(row);
      });
    },

    listProposalsByEffect(tenant, effectScope, limit = 50) {
      return read(async (db) => {
        const result = await db.query<ProposalRow>(
          `SELECT tenant, proposal, revision, status, record FROM ${q}.proposals
           WHERE tenant = $1 AND effect_scope = $2
           ORDER BY created_at_ms DESC, proposal DESC LIMIT $3`,
          [tenant, effectScope, limit],
        );
        return result.rows.map(toProposal);
      });
    },

    getEffectClaim(tenant, effectScope) {
      return read(async (db) => {
        const row = (
          await db.query<{ proposal: string; claimed_at_ms: string }>(
            `SELECT proposal, claimed_at_ms FROM ${q}.effect_claims WHERE tenant = $1 AND effect_scope = $2`,
            [tenant, effectScope],
          )
        ).rows[0];
        return row === undefined
          ? undefined
          : { tenant, effectScope, proposal: row.proposal, claimedAtMs: Number(row.claimed_at_ms) };
      });
    },

    listEvidence(tenant, proposal): Promise<readonly AuthorityEvidenceRecord[]> {
      return read(async (db) => {
        const result = await db.query<EvidenceRow>(
          `SELECT tenant, proposal, evidence_digest, record FROM ${q}.authority_evidence
           WHERE tenant = $1 AND proposal = $2 ORDER BY position`,
          [tenant, proposal],
        );
        return result.rows.map((row) => decodeEvidence(row.record, row, where));
      });
    },

    listDue(query: DueQuery) {
      return read(async (db) => {
        const result = await db.query<ProposalRow>(
          `SELECT tenant, proposal, revision, status, record FROM ${q}.proposals
           WHERE tenant = $1 AND due_at_ms IS NOT NULL AND due_at_ms <= $2 AND status = ANY($3::text[])
           ORDER BY due_at_ms, proposal LIMIT $4`,
          [query.tenant, query.dueAtOrBeforeMs, query.statuses, query.limit ?? 100],
        );
        return result.rows.map(toProposal);
      });
    },

    readLedger(query: LedgerQuery) {
      return read(async (db) => {
        const result = await db.query<EventRow>(
          `SELECT tenant, sequence, hash, event FROM ${q}.ledger_events
           WHERE tenant = $1 AND sequence > $2 AND ($3::text IS NULL OR proposal = $3)
           ORDER BY sequence LIMIT $4`,
          [query.tenant, query.afterSequence ?? 0, query.proposal ?? null, query.limit ?? null],
        );
        return result.rows.map((row) => decodeEvent(row.event, row, where));
      });
    },

    ledgerHead(tenant): Promise<LedgerHead | undefined> {
      return read(async (db) => {
        const row = (
          await db.query<{ sequence: string; hash: string }>(
            `SELECT sequence, hash FROM ${q}.ledger_heads WHERE tenant = $1 AND sequence > 0`,
            [tenant],
          )
        ).rows[0];
        return row === undefined ? undefined : { sequence: Number(row.sequence), hash: row.hash };
      });
    },

    truncateLedger(tenant, throughSequence) {
      return read(async () => {
        const client = await connect();
        let broken: Error | undefined;
        try {
          await client.query('BEGIN');
          // Lock the head so no commit seals onto the tenant's chain while it is cut.
          await client.query(sql.lockHead, [tenant]);
          const last = (
            await client.query<{ sequence: string; hash: string }>(
              `SELECT sequence, hash FROM ${q}.ledger_events WHERE tenant = $1 AND sequence <= $2
               ORDER BY sequence DESC LIMIT 1`,
              [tenant, throughSequence],
            )
          ).rows[0];
          if (last !== undefined) {
            await client.query(
              `DELETE FROM ${q}.ledger_events WHERE tenant = $1 AND sequence <= $2`,
              [tenant, throughSequence],
            );
            await client.query(
              `UPDATE ${q}.ledger_heads SET checkpoint_sequence = $2, checkpoint_hash = $3 WHERE tenant = $1`,
              [tenant, last.sequence, last.hash],
            );
          }
          await client.query('COMMIT');
        } catch (error) {
          broken = error instanceof Error ? error : new Error(String(error));
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        } finally {
          client.release(broken);
        }
      });
    },

    ledgerCheckpoint(tenant): Promise<LedgerHead | undefined> {
      return read(async (db) => {
        const row = (
          await db.query<{ checkpoint_sequence: string | null; checkpoint_hash: string | null }>(
            `SELECT checkpoint_sequence, checkpoint_hash FROM ${q}.ledger_heads WHERE tenant = $1`,
            [tenant],
          )
        ).rows[0];
        if (row === undefined || row.checkpoint_sequence === null || row.checkpoint_hash === null) {
          return undefined;
        }
        return { sequence: Number(row.checkpoint_sequence), hash: row.checkpoint_hash };
      });
    },

    async close() {
      if (closed) return;
      closed = true;
      await Promise.allSettled([...inFlight]);
      if (ownsPool) await pool.end();
    },
  };
}
