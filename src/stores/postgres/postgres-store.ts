/**
 * The PostgreSQL store (`pg`), for many processes or machines sharing one database: conditional
 * updates for compare-and-set, a unique key for the effect claim, and a locked per-tenant chain
 * head for the ledger. Commits are grouped per process: one transaction per batch, one savepoint
 * per commit (decision 024).
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
  /**
   * Once per batch that seals events: after every commit's proposal, claim and evidence writes
   * (the chain heads are already locked), right before the events are appended.
   */
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
interface HeadRow {
  tenant: string;
  sequence: string;
  hash: string;
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
/**
 * Most commits in one batch transaction. Each commit's savepoint that writes takes a
 * subtransaction id, and PostgreSQL caches only 64 per backend; beyond that every snapshot on
 * the server gets slower.
 */
const MAX_BATCH_COMMITS = 64;

/**
 * A SQL literal for the simple query protocol, which carries several statements in one round
 * trip but no parameters. Numbers are quoted as pg sends parameters (`'12'`), so PostgreSQL
 * parses and checks them against the column type exactly as before. Text with a backslash uses
 * the `E''` form so the result does not depend on `standard_conforming_strings`.
 */
function literal(value: string | number | null): string {
  if (value === null) return 'NULL';
  const text = typeof value === 'number' ? String(value) : value;
  if (text.includes('\u0000')) {
    // The protocol ends a query at NUL; PostgreSQL text cannot hold it either.
    throw new StoreInvariantError(
      'store_commit_malformed',
      'Refused store commit: a text value contains U+0000, which PostgreSQL cannot store',
    );
  }
  const quoted = text.replaceAll("'", "''");
  return text.includes('\\') ? `E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/** A batch found a chain head missing that it believed created; it is rolled back and rerun. */
class HeadsMissingError extends Error {}

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

  // Parameterised statements for the rare paths (a claim held by another proposal, a
  // compare-and-set conflict) and for truncation; the common path is built by commitStatements.
  const sql = {
    getProposal: `SELECT tenant, proposal, revision, status, record FROM ${q}.proposals
      WHERE tenant = $1 AND proposal = $2`,
    lockClaim: `SELECT proposal, claimed_at_ms FROM ${q}.effect_claims
      WHERE tenant = $1 AND effect_scope = $2 FOR UPDATE`,
    passClaim: `UPDATE ${q}.effect_claims SET proposal = $3, claimed_at_ms = $4
      WHERE tenant = $1 AND effect_scope = $2`,
    ownerStatus: `SELECT status FROM ${q}.proposals WHERE tenant = $1 AND proposal = $2`,
    lockHead: `SELECT sequence, hash FROM ${q}.ledger_heads WHERE tenant = $1 FOR UPDATE`,
  };

  /** One caller's commit, waiting in the queue for the next batch. */
  interface PendingCommit {
    readonly write: StoreCommit;
    /** The commit's writes as SQL with literals, one statement each (see `commitStatements`). */
    readonly statements: readonly string[];
    readonly resolve: (result: StoreCommitResult) => void;
    readonly reject: (error: unknown) => void;
  }
  /** What one commit of a batch came to, before the batch's COMMIT decides whether it stands. */
  type CommitOutcome =
    | {
        readonly kind: 'result';
        readonly result: StoreCommitResult;
        /** The sealed events of a committed result as `VALUES` rows for the batch's append. */
        readonly eventRows: readonly string[];
      }
    | { readonly kind: 'error'; readonly error: unknown };

  /**
   * A commit's writes, built before it is queued so the batch spends no time on JSON while it
   * holds the chain heads: the proposal write, the claim insert and one insert per evidence
   * item, in that order, each answering with its row count.
   */
  const commitStatements = (write: StoreCommit): string[] => {
    const statements: string[] = [];
    const tenant = literal(write.tenant);
    const change = write.proposal;
    if (change !== undefined) {
      const r = change.record;
      const values = [
        tenant,
        literal(r.proposal),
        literal(r.revision),
        literal(r.status),
        literal(r.effectScope),
        literal(r.createdAtMs),
        literal(r.dueAtMs),
        literal(encodeJson(r)),
      ];
      if (change.kind === 'insert') {
        statements.push(`INSERT INTO ${q}.proposals
          (tenant, proposal, revision, status, effect_scope, created_at_ms, due_at_ms, record)
          VALUES (${values.join(', ')}) ON CONFLICT (tenant, proposal) DO NOTHING`);
      } else {
        // Compare-and-set as a conditional update: a concurrent writer holding the row makes us
        // wait, then PostgreSQL re-checks the condition on the row it committed.
        statements.push(`UPDATE ${q}.proposals SET revision = ${values[2]}, status = ${values[3]},
          effect_scope = ${values[4]}, created_at_ms = ${values[5]}, due_at_ms = ${values[6]},
          record = ${values[7]}
          WHERE tenant = ${tenant} AND proposal = ${values[1]}
          AND revision = ${literal(change.expectedRevision)} AND status = ${literal(change.expectedStatus)}`);
      }
    }
    if (write.claim !== undefined) {
      const { effectScope, proposal, atMs } = write.claim;
      statements.push(`INSERT INTO ${q}.effect_claims (tenant, effect_scope, proposal, claimed_at_ms)
        VALUES (${tenant}, ${literal(effectScope)}, ${literal(proposal)}, ${literal(atMs)})
        ON CONFLICT (tenant, effect_scope) DO NOTHING`);
    }
    for (const item of write.evidence ?? []) {
      statements.push(`INSERT INTO ${q}.authority_evidence (tenant, proposal, evidence_digest, record)
        VALUES (${tenant}, ${literal(item.proposal)}, ${literal(item.evidenceDigest)}, ${literal(encodeJson(item))})
        ON CONFLICT (tenant, proposal, evidence_digest) DO NOTHING`);
    }
    return statements;
  };

  /**
   * Runs one commit's writes inside a new savepoint `savepoint` (opened in the same round trip)
   * and decides it. A refusal rolls back to the savepoint, so it leaves nothing behind; the
   * caller seals the events.
   */
  const applyCommit = async (
    client: pg.PoolClient,
    pending: PendingCommit,
    savepoint: string,
  ): Promise<StoreCommitResult> => {
    const { write, statements } = pending;
    if (statements.length === 0) return { kind: 'committed', events: [] };
    const opening = [`SAVEPOINT ${savepoint}`];
    const answered = await client.query([...opening, ...statements].join(';\n'));
    const results = (Array.isArray(answered) ? answered : [answered]) as pg.QueryResult[];
    if (results.length !== opening.length + statements.length) {
      throw new StoreInvariantError(
        'assertion_failed',
        `Assertion failed: ${results.length} results for ${opening.length + statements.length} statements in ${where}`,
      );
    }
    const rowCounts = results.slice(opening.length).map((result) => result.rowCount);
    const rollback = () => client.query(`ROLLBACK TO SAVEPOINT ${savepoint}`);
    const tenant = write.tenant;
    let next = 0;
    const change = write.proposal;
    if (change !== undefined) {
      if (rowCounts[next++] !== 1) {
        await rollback();
        if (change.kind === 'insert') return { kind: 'proposal_exists' };
        const current = await client.query<ProposalRow>(sql.getProposal, [
          tenant,
          change.record.proposal,
        ]);
        const row = current.rows[0];
        return {
          kind: 'revision_conflict',
          current: row === undefined ? undefined : toProposal(row),
        };
      }
    }
    if (write.claim !== undefined && rowCounts[next++] !== 1) {
      const { effectScope, proposal, atMs } = write.claim;
      const held = await client.query<{ proposal: string; claimed_at_ms: string }>(sql.lockClaim, [
        tenant,
        effectScope,
      ]);
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
      if (refused !== undefined) {
        await rollback();
        return refused;
      }
      await client.query(sql.passClaim, [tenant, effectScope, proposal, atMs]);
    }
    const evidence = write.evidence ?? [];
    if (evidence.length > 0) {
      // An insert that stored nothing met a stored digest (or an earlier copy in this commit;
      // firstDuplicateEvidence reports those itself, so only first copies are asked).
      const firstIndex = new Map<string, number>();
      evidence.forEach((item, index) => {
        const key = `${item.proposal}\u0000${item.evidenceDigest}`;
        if (!firstIndex.has(key)) firstIndex.set(key, index);
      });
      const duplicate = firstDuplicateEvidence(evidence, (item) => {
        const index = firstIndex.get(`${item.proposal}\u0000${item.evidenceDigest}`) ?? 0;
        return rowCounts[next + index] !== 1;
      });
      if (duplicate !== undefined) {
        await rollback();
        return { kind: 'evidence_duplicate', evidenceDigest: duplicate };
      }
    }
    return { kind: 'committed', events: [] };
  };

  /** Where a landed batch must have left a trace, to tell after a lost COMMIT whether it did. */
  type BatchMark =
    | { readonly kind: 'event'; readonly tenant: string; readonly event: LedgerEvent }
    | { readonly kind: 'evidence'; readonly item: AuthorityEvidenceRecord }
    | { readonly kind: 'nothing' };

  /**
   * After the connection dropped while COMMIT was in flight: makes sure the old backend is gone
   * (terminating it if it is still waiting inside the transaction), then looks for the batch's
   * first sealed event or evidence to learn whether it landed. The batch is one transaction, so
   * one trace answers for every commit in it. Undefined when the database cannot tell.
   */
  const batchLanded = async (mark: BatchMark, pid: number): Promise<boolean | undefined> => {
    try {
      const checker = await pool.connect();
      let failure: Error | undefined;
      try {
        return await markLanded(checker, mark, pid);
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
        return undefined;
      } finally {
        checker.release(failure);
      }
    } catch {
      return undefined;
    }
  };

  /** True/false once the old backend is gone; undefined while it might still be committing. */
  const markLanded = async (
    checker: pg.PoolClient,
    mark: BatchMark,
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
    if (mark.kind === 'event') {
      const found = await checker.query<{ hash: string }>(
        `SELECT hash FROM ${q}.ledger_events WHERE tenant = $1 AND sequence = $2`,
        [mark.tenant, mark.event.sequence],
      );
      return found.rows[0]?.hash === mark.event.hash;
    }
    if (mark.kind === 'evidence') {
      const item = mark.item;
      const found = await checker.query<{ record: string }>(
        `SELECT record FROM ${q}.authority_evidence WHERE tenant = $1 AND proposal = $2 AND evidence_digest = $3`,
        [item.tenant, item.proposal, item.evidenceDigest],
      );
      return found.rows[0]?.record === encodeJson(item);
    }
    return true; // the batch stored nothing
  };

  /** The error every caller of a batch gets when the database refused the batch as a whole. */
  const refusedByDatabase = (error: unknown): SideguardError => {
    if (error instanceof SideguardError) return error;
    const code = errorCode(error);
    return new StoreUnavailableError(
      'store_io_failed',
      `${where} refused the commit (${code ?? 'no code'}: ${error instanceof Error ? error.message : String(error)}); the transaction was rolled back and nothing was stored.`,
      { applied: false, cause: error },
    );
  };

  const connectionLostBeforeCommit = (cause: unknown): StoreUnavailableError =>
    new StoreUnavailableError(
      'store_connection_lost',
      `The connection to ${where} dropped before the commit was sent; the transaction was rolled back and nothing was stored. Retry the operation.`,
      { applied: false, cause },
    );

  /** Locks the chain heads of `tenants` that exist, in PostgreSQL's tenant order. */
  const selectHeads = (tenants: readonly string[]) =>
    `SELECT tenant, sequence, hash FROM ${q}.ledger_heads
      WHERE tenant IN (${tenants.map(literal).join(', ')}) ORDER BY tenant FOR UPDATE`;

  /**
   * Tenants whose head row is known to exist. Head rows are created before a batch's
   * transaction, never inside it: a row created inside could be rolled back with a refused
   * commit's savepoint. A head at sequence 0 is an empty chain (`ledgerHead` ignores it).
   */
  const knownHeads = new Set<string>();
  const createHeads = async (client: pg.PoolClient, tenants: readonly string[]) => {
    const missing = tenants.filter((tenant) => !knownHeads.has(tenant));
    if (missing.length === 0) return;
    const values = missing.map((tenant) => `(${literal(tenant)}, 0, ${literal(GENESIS_HASH)})`);
    await client.query(`INSERT INTO ${q}.ledger_heads (tenant, sequence, hash)
      VALUES ${values.join(', ')} ON CONFLICT (tenant) DO NOTHING`);
    for (const tenant of missing) knownHeads.add(tenant);
  };

  /**
   * Runs a batch once on one connection, in one transaction: every tenant's chain head locked
   * first, then each commit in its own savepoint, then all sealed events appended and the heads
   * moved together with COMMIT. Returns each caller's outcome once COMMIT has landed (or was
   * found to have landed); throws for the batch as a whole otherwise.
   */
  const batchOnce = async (batch: readonly PendingCommit[]): Promise<CommitOutcome[]> => {
    const client = await connect();
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    const pid = backendPid(client);
    let phase: 'transaction' | 'commit' = 'transaction';
    const outcomes: CommitOutcome[] = [];
    let mark: BatchMark = { kind: 'nothing' };
    let firstEvidence: AuthorityEvidenceRecord | undefined;
    try {
      const tenants = [...new Set(batch.map((pending) => pending.write.tenant))];
      await createHeads(client, tenants);
      const heads = new Map<string, LedgerHead>();
      let lockedHeads = new Map<string, LedgerHead>();
      let headsLocked = false;
      const appended: LedgerEvent[] = [];
      const eventRows: string[] = [];
      const record = (index: number, outcome: CommitOutcome): void => {
        outcomes[index] = outcome;
        if (outcome.kind !== 'result' || outcome.result.kind !== 'committed') return;
        const write = (batch[index] as PendingCommit).write;
        const last = outcome.result.events.at(-1);
        if (last !== undefined)
          heads.set(write.tenant, { sequence: last.sequence, hash: last.hash });
        appended.push(...outcome.result.events);
        eventRows.push(...outcome.eventRows);
        firstEvidence ??= write.evidence?.[0];
      };
      // Optimistically, every remaining commit travels in one round trip, each in a savepoint
      // nested in the one before. A commit all of whose writes touched one row each, and whose
      // events seal, is decided exactly as alone: it saw only the clean commits before it. At
      // the first commit that is not clean, roll back to its savepoint (undoing it and every
      // later one), decide it alone, and go on optimistically after it.
      let from = 0;
      while (!headsLocked || from < batch.length) {
        // The first round trip also opens the transaction and locks the heads that exist, so
        // a batch of clean commits holds them across one turn of the event loop only.
        const opening = headsLocked ? [] : ['BEGIN', selectHeads(tenants)];
        const sent = await sendRun(client, batch, from, opening);
        if (!headsLocked) {
          const locked = sent.opened?.[1] as pg.QueryResult<HeadRow> | undefined;
          // After a failed run the lock result was lost with it; the locks themselves hold.
          const rows = locked?.rows ?? (await client.query<HeadRow>(selectHeads(tenants))).rows;
          for (const row of rows) {
            heads.set(row.tenant, { sequence: Number(row.sequence), hash: row.hash });
          }
          const missing = tenants.filter((tenant) => !heads.has(tenant));
          if (missing.length > 0) {
            for (const tenant of missing) knownHeads.delete(tenant);
            throw new HeadsMissingError();
          }
          lockedHeads = new Map(heads);
          headsLocked = true;
        }
        const counts = sent.counts;
        if (counts === undefined) {
          // A statement failed somewhere in the run, now rolled back whole: decide the first
          // commit alone, then try the rest again.
          record(
            from,
            await applyInSavepoint(client, batch[from] as PendingCommit, from, heads, () => broken),
          );
          from += 1;
          continue;
        }
        let index = from;
        for (; index < batch.length; index += 1) {
          const pending = batch[index] as PendingCommit;
          const clean = (counts[index - from] ?? []).every((count) => count === 1);
          let sealed: CommitOutcome | undefined;
          if (clean) {
            try {
              sealed = sealOutcome(pending, heads);
            } catch (error) {
              if (pending.statements.length === 0) {
                // Nothing written, so nothing to undo under the later commits.
                record(index, { kind: 'error', error: refusedByDatabase(error) });
                continue;
              }
            }
          }
          if (sealed !== undefined) {
            record(index, sealed);
            continue;
          }
          await client.query(`ROLLBACK TO SAVEPOINT ${savepointName(index)}`);
          record(index, await applyInSavepoint(client, pending, index, heads, () => broken));
          index += 1;
          break;
        }
        from = index;
      }
      // Prefer an event as the trace: its hash names this batch's place in the chain.
      const firstEvent = appended[0];
      if (firstEvent !== undefined)
        mark = { kind: 'event', tenant: firstEvent.tenant, event: firstEvent };
      else if (firstEvidence !== undefined) mark = { kind: 'evidence', item: firstEvidence };
      const statements: string[] = [];
      if (appended.length > 0) {
        await hooks.beforeSeal?.(client, pid);
        statements.push(
          `INSERT INTO ${q}.ledger_events (tenant, sequence, proposal, hash, event) VALUES ${eventRows.join(',\n')}`,
        );
        const tenantsMoved = [...new Set(appended.map((event) => event.tenant))];
        const moved = tenantsMoved.map((tenant) => {
          const head = heads.get(tenant) as LedgerHead;
          const was = lockedHeads.get(tenant) as LedgerHead;
          return `(${literal(tenant)}, ${literal(head.sequence)}::bigint, ${literal(head.hash)}, ${literal(was.sequence)}::bigint)`;
        });
        // Asserts after the write what the seal assumed: every head moved, each from the value
        // locked at the start. Otherwise the division fails, and COMMIT with it.
        statements.push(`WITH moved AS (
            UPDATE ${q}.ledger_heads AS h SET sequence = v.sequence, hash = v.hash
            FROM (VALUES ${moved.join(', ')}) AS v (tenant, sequence, hash, was)
            WHERE h.tenant = v.tenant AND h.sequence = v.was RETURNING 1)
          SELECT 1 / (CASE WHEN count(*) = ${tenantsMoved.length} THEN 1 ELSE 0 END) FROM moved`);
      }
      phase = 'commit';
      if (hooks.commit === undefined) {
        // The append, the head update and COMMIT travel in one round trip.
        await client.query([...statements, 'COMMIT'].join(';\n'));
      } else {
        if (statements.length > 0) await client.query(statements.join(';\n'));
        await hooks.commit(client);
      }
      return outcomes;
    } catch (error) {
      if (isConnectionError(error) || broken !== undefined) {
        broken ??= error instanceof Error ? error : new Error(String(error));
        if (phase === 'transaction') throw connectionLostBeforeCommit(error);
        return lostCommitOutcomes(outcomes, await batchLanded(mark, pid), error);
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

  /**
   * Every caller's answer once a batch's COMMIT was lost: the outcomes as they were if it
   * landed; otherwise an error for each, `applied: false` wherever that is certain (refused and
   * failed commits were rolled back to their savepoints whatever COMMIT did).
   */
  const lostCommitOutcomes = (
    outcomes: readonly CommitOutcome[],
    landed: boolean | undefined,
    cause: unknown,
  ): CommitOutcome[] => {
    if (landed === true) return [...outcomes];
    return outcomes.map((outcome): CommitOutcome => {
      if (outcome.kind === 'error') return outcome;
      if (landed === false || outcome.result.kind !== 'committed') {
        // A refusal may rest on a batch-mate's write that did not land: it is no answer now.
        return {
          kind: 'error',
          error: new StoreUnavailableError(
            'store_connection_lost',
            `The connection to ${where} dropped during COMMIT and the commit did not land; nothing was stored. Retry the operation.`,
            { applied: false, cause },
          ),
        };
      }
      return {
        kind: 'error',
        error: new StoreUnavailableError(
          'store_commit_outcome_unknown',
          `The connection to ${where} dropped during COMMIT and the database could not tell whether it landed. Re-read the proposal before acting again.`,
          { applied: 'unknown', cause },
        ),
      };
    });
  };

  const savepointName = (index: number) => `sg_commit_${index}`;

  /** A committed result with the commit's events sealed onto `heads` (not moved here). */
  const sealOutcome = (
    pending: PendingCommit,
    heads: ReadonlyMap<string, LedgerHead>,
  ): CommitOutcome => {
    const write = pending.write;
    if (write.events.length === 0) {
      return { kind: 'result', result: { kind: 'committed', events: [] }, eventRows: [] };
    }
    const events = sealLedgerEvents(write.tenant, heads.get(write.tenant), write.events);
    const eventRows = events.map(
      (event) =>
        `(${literal(event.tenant)}, ${literal(event.sequence)}, ${literal(event.proposal)}, ${literal(event.hash)}, ${literal(encodeJson(event))})`,
    );
    return { kind: 'result', result: { kind: 'committed', events }, eventRows };
  };

  /**
   * Sends the writes of commits `from`… in one round trip, each commit behind `SAVEPOINT
   * sg_commit_<index>` nested in the previous one, and returns each commit's row counts. When a
   * statement fails, rolls back to the run's first savepoint and returns undefined.
   */
  const sendRun = async (
    client: pg.PoolClient,
    batch: readonly PendingCommit[],
    from: number,
    opening: readonly string[],
  ): Promise<{ opened?: pg.QueryResult[]; counts?: (number | null)[][] }> => {
    const parts: string[] = [...opening];
    let first: number | undefined;
    for (let index = from; index < batch.length; index += 1) {
      const statements = (batch[index] as PendingCommit).statements;
      if (statements.length === 0) continue;
      first ??= index;
      parts.push(`SAVEPOINT ${savepointName(index)}`, ...statements);
    }
    let results: pg.QueryResult[] = [];
    if (parts.length > 0) {
      try {
        const answered = await client.query(parts.join(';\n'));
        results = (Array.isArray(answered) ? answered : [answered]) as pg.QueryResult[];
      } catch (error) {
        if (isConnectionError(error) || first === undefined) throw error;
        // Fails (and the original error fails the batch) if the error came before the first
        // savepoint, i.e. in the opening statements.
        await client
          .query(`ROLLBACK TO SAVEPOINT ${savepointName(first)}`)
          .catch((rollbackError: unknown) => {
            throw isConnectionError(rollbackError) ? rollbackError : error;
          });
        return {};
      }
    }
    if (results.length !== parts.length) {
      throw new StoreInvariantError(
        'assertion_failed',
        `Assertion failed: ${results.length} results for ${parts.length} statements in ${where}`,
      );
    }
    const counts: (number | null)[][] = [];
    let next = opening.length;
    for (let index = from; index < batch.length; index += 1) {
      const statements = (batch[index] as PendingCommit).statements;
      if (statements.length === 0) {
        counts.push([]);
        continue;
      }
      next += 1; // the SAVEPOINT
      counts.push(results.slice(next, next + statements.length).map((result) => result.rowCount));
      next += statements.length;
    }
    return { opened: results.slice(0, opening.length), counts };
  };

  /**
   * One commit decided alone, inside a new savepoint named for its index, its events sealed
   * onto `heads` (not moved here). A database error that is not a lost connection, or events
   * that cannot be sealed, roll back to the savepoint and become this caller's error alone
   * (after a few tries for serialisation failures and deadlocks); a lost connection fails the
   * whole batch.
   */
  const applyInSavepoint = async (
    client: pg.PoolClient,
    pending: PendingCommit,
    index: number,
    heads: ReadonlyMap<string, LedgerHead>,
    brokenBy: () => Error | undefined,
  ): Promise<CommitOutcome> => {
    const savepoint = savepointName(index);
    for (let attempt = 1; ; attempt += 1) {
      try {
        const result = await applyCommit(client, pending, savepoint);
        if (result.kind !== 'committed') return { kind: 'result', result, eventRows: [] };
        return sealOutcome(pending, heads);
      } catch (error) {
        if (isConnectionError(error) || brokenBy() !== undefined) throw error;
        // A commit without writes opened no savepoint and left nothing to undo.
        if (pending.statements.length === 0) {
          return { kind: 'error', error: refusedByDatabase(error) };
        }
        // SAVEPOINT is the first statement of the round trip, so it exists whenever a later
        // statement failed; rolling back to it undoes this commit and nothing before it.
        await client.query(`ROLLBACK TO SAVEPOINT ${savepoint}`);
        const code = errorCode(error);
        if (attempt < MAX_ATTEMPTS && code !== undefined && RETRYABLE_CODES.has(code)) continue;
        return { kind: 'error', error: refusedByDatabase(error) };
      }
    }
  };

  let queue: PendingCommit[] = [];
  let draining = false;

  /** Runs a batch (retrying it whole after a serialisation failure or deadlock) and settles it. */
  const runBatch = async (batch: readonly PendingCommit[]): Promise<void> => {
    let outcomes: CommitOutcome[] | undefined;
    let failure: unknown;
    for (let attempt = 1; outcomes === undefined; attempt += 1) {
      try {
        outcomes = await batchOnce(batch);
      } catch (error) {
        const code = errorCode(error);
        const retryable =
          error instanceof HeadsMissingError || (code !== undefined && RETRYABLE_CODES.has(code));
        if (attempt < MAX_ATTEMPTS && retryable) continue;
        failure = refusedByDatabase(error);
        break;
      }
    }
    for (const [index, pending] of batch.entries()) {
      const outcome = outcomes?.[index];
      if (outcome === undefined) pending.reject(failure ?? new Error('unreachable: no outcome'));
      else if (outcome.kind === 'result') pending.resolve(outcome.result);
      else pending.reject(outcome.error);
    }
  };

  /** Runs queued commits batch by batch, one batch in flight at a time, until none is left. */
  const drain = async (): Promise<void> => {
    try {
      while (queue.length > 0) {
        const batch = queue.slice(0, MAX_BATCH_COMMITS);
        queue = queue.slice(MAX_BATCH_COMMITS);
        await runBatch(batch);
      }
    } finally {
      draining = false;
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

  return {
    kind: 'postgres',
    schema,

    async commit(write: StoreCommit): Promise<StoreCommitResult> {
      ensureOpen();
      assertCommitShape(write);
      const statements = commitStatements(write);
      return track(
        new Promise<StoreCommitResult>((resolve, reject) => {
          queue.push({ write, statements, resolve, reject });
          if (draining) return;
          draining = true;
          // Commits arriving in the same tick, or while a batch is in flight, share a batch.
          setImmediate(() => void drain());
        }),
      );
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
