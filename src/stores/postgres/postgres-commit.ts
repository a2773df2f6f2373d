/**
 * One commit inside a batch transaction (decision 024): its writes behind a savepoint, decided
 * by row counts on the fast path and alone (with the shared store rules) when a row count says
 * something is off. A refusal rolls back to the savepoint, so it leaves nothing behind.
 */
import type pg from 'pg';
import { StoreInvariantError } from '../../core/errors.js';
import { type LedgerEvent, type LedgerHead, sealLedgerEvents } from '../../core/ledger.js';
import type { StoreCommit, StoreCommitResult } from '../../core/store.js';
import { checkEffectClaim } from '../../core/store-rules.js';
import type { ProposalStatus } from '../../core/vocabulary.js';
import type { ProposalRow } from '../store-codec.js';
import { firstDuplicateEvidence } from '../store-codec.js';
import { envelopeChanged } from '../store-envelopes.js';
import { type PostgresContext, toProposal } from './postgres-context.js';
import {
  errorCode,
  isConnectionError,
  MAX_ATTEMPTS,
  PREPARED_STATEMENT_MISSING,
  RETRYABLE_CODES,
  refusedByDatabase,
} from './postgres-errors.js';
import type { RoundTripStatement } from './postgres-prepared.js';
import type { WriteSql } from './postgres-sql.js';
import type { SqlTemplate } from './postgres-sql-template.js';

/** One caller's commit, waiting in the queue for the next batch. */
export interface PendingCommit {
  readonly write: StoreCommit;
  /** The commit's writes (see `commitWrites`), built before the commit is queued. */
  readonly writes: readonly WriteSql[];
  /** The writes as statements answering with their row counts (see `countedSql`). */
  readonly statements: readonly SqlTemplate[];
  /**
   * The writes as one statement answering every row count in one row (`countedCommitSql`),
   * what the two-round-trip batch's optimistic run sends; undefined without writes.
   */
  readonly counted: SqlTemplate | undefined;
  readonly resolve: (result: StoreCommitResult) => void;
  readonly reject: (error: unknown) => void;
}

/** What one commit of a batch came to, before the batch's COMMIT decides whether it stands. */
export type CommitOutcome =
  | { readonly kind: 'result'; readonly result: StoreCommitResult }
  | { readonly kind: 'error'; readonly error: unknown };

/**
 * What a batch sends just before its COMMIT: `SET LOCAL synchronous_commit = off` when every
 * commit of it is deferred (decision 124), nothing otherwise. The batch is then visible and in
 * the WAL when COMMIT returns, and the WAL writer or the next synchronous commit flushes it —
 * any later synchronous commit flushes the WAL up to its own record, so durability stays a
 * prefix.
 */
export function commitLevelSql(batch: readonly PendingCommit[]): readonly string[] {
  return batch.every((pending) => pending.write.durability === 'deferred')
    ? ['SET LOCAL synchronous_commit = off']
    : [];
}

/** The savepoint a batch opens for its commit at `index`. */
export function savepointName(index: number): string {
  return `sg_commit_${index}`;
}

/** The results of one multi-statement round trip, asserted to be one per statement. */
export async function queryAll(
  context: PostgresContext,
  client: pg.PoolClient,
  statements: readonly RoundTripStatement[],
): Promise<pg.QueryResult[]> {
  const answered = await client.query(context.prepared.render(client, statements));
  const results = (Array.isArray(answered) ? answered : [answered]) as pg.QueryResult[];
  if (results.length !== statements.length) {
    throw new StoreInvariantError(
      'assertion_failed',
      `Assertion failed: ${results.length} results for ${statements.length} statements in ${context.where}`,
    );
  }
  return results;
}

/** Decides a claim insert that stored nothing: refused, or passed over from a releasing owner. */
async function takeHeldClaim(
  context: PostgresContext,
  client: pg.PoolClient,
  write: StoreCommit,
  claim: NonNullable<StoreCommit['claim']>,
): Promise<StoreCommitResult | undefined> {
  const { effectScope, proposal, atMs } = claim;
  const tenant = write.tenant;
  const held = await client.query<{ proposal: string; claimed_at_ms: string }>(
    context.sql.lockClaim,
    [tenant, effectScope],
  );
  const row = held.rows[0];
  if (row === undefined) {
    throw new StoreInvariantError(
      'assertion_failed',
      `Assertion failed: effect claim ${effectScope} vanished in ${context.where}`,
    );
  }
  const owner =
    row.proposal === proposal
      ? undefined
      : (
          await client.query<{ status: ProposalStatus }>(context.sql.ownerStatus, [
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
  await client.query(context.sql.passClaim, [tenant, effectScope, proposal, atMs]);
  return undefined;
}

/** The first evidence item the database refused as a duplicate (by its insert's row count). */
function duplicateEvidence(
  write: StoreCommit,
  rowCounts: readonly (number | null)[],
): string | undefined {
  const evidence = write.evidence ?? [];
  // An insert that stored nothing met a stored digest (or an earlier copy in this commit;
  // firstDuplicateEvidence reports those itself, so only first copies are asked).
  const firstIndex = new Map<string, number>();
  evidence.forEach((item, index) => {
    const key = `${item.proposal}\u0000${item.evidenceDigest}`;
    if (!firstIndex.has(key)) firstIndex.set(key, index);
  });
  return firstDuplicateEvidence(evidence, (item) => {
    const index = firstIndex.get(`${item.proposal}\u0000${item.evidenceDigest}`) ?? 0;
    return rowCounts[index] !== 1;
  });
}

/**
 * Runs one commit's writes inside a new savepoint `savepoint` (opened in the same round trip)
 * and decides it alone. A refusal rolls back to the savepoint; the caller seals the events.
 */
export async function applyCommit(
  context: PostgresContext,
  client: pg.PoolClient,
  pending: PendingCommit,
  savepoint: string,
): Promise<StoreCommitResult> {
  const { write, statements } = pending;
  if (statements.length === 0) return { kind: 'committed', events: [] };
  const results = await queryAll(context, client, [`SAVEPOINT ${savepoint}`, ...statements]);
  const rowCounts = results.slice(1).map((result) => result.rowCount);
  const rollback = () => client.query(`ROLLBACK TO SAVEPOINT ${savepoint}`);
  let next = 0;
  const change = write.proposal;
  if (write.onlyIfEffectUnlisted === true && change !== undefined && rowCounts[next++] !== 1) {
    await rollback();
    return { kind: 'effect_listed' };
  }
  if (change !== undefined && rowCounts[next++] !== 1) {
    await rollback();
    if (change.kind === 'insert') return { kind: 'proposal_exists' };
    const current = await client.query<ProposalRow>(context.sql.getProposal, [
      write.tenant,
      change.record.proposal,
    ]);
    const row = current.rows[0];
    // The row is where the caller expected it, so the update's envelope check refused it.
    if (
      row !== undefined &&
      Number(row.revision) === change.expectedRevision &&
      row.status === change.expectedStatus
    ) {
      throw envelopeChanged(write);
    }
    return {
      kind: 'revision_conflict',
      current: row === undefined ? undefined : toProposal(context, row),
    };
  }
  if (write.claim !== undefined && rowCounts[next++] !== 1) {
    const refused = await takeHeldClaim(context, client, write, write.claim);
    if (refused !== undefined) {
      await rollback();
      return refused;
    }
  }
  const duplicate = duplicateEvidence(write, rowCounts.slice(next));
  if (duplicate !== undefined) {
    await rollback();
    return { kind: 'evidence_duplicate', evidenceDigest: duplicate };
  }
  return { kind: 'committed', events: [] };
}

/** A committed result with the commit's events sealed onto `heads` (not moved here). */
export function sealOutcome(
  pending: PendingCommit,
  heads: ReadonlyMap<string, LedgerHead>,
): CommitOutcome {
  const write = pending.write;
  if (write.events.length === 0) {
    return { kind: 'result', result: { kind: 'committed', events: [] } };
  }
  const events: LedgerEvent[] = sealLedgerEvents(
    write.tenant,
    heads.get(write.tenant),
    write.events,
  );
  return { kind: 'result', result: { kind: 'committed', events } };
}

/**
 * Sends the writes of commits `from`… in one round trip, each commit's writes as one statement
 * (decision 131) behind `SAVEPOINT sg_commit_<index>` nested in the previous one, and returns
 * each commit's row counts, one per write. When a
 * statement fails, rolls back to the run's first savepoint and returns no counts.
 */
export async function sendRun(
  context: PostgresContext,
  client: pg.PoolClient,
  batch: readonly PendingCommit[],
  from: number,
  opening: readonly string[],
): Promise<{ opened?: pg.QueryResult[]; counts?: (number | null)[][] }> {
  const parts: RoundTripStatement[] = [...opening];
  let first: number | undefined;
  for (let index = from; index < batch.length; index += 1) {
    const { counted } = batch[index] as PendingCommit;
    if (counted === undefined) continue;
    first ??= index;
    parts.push(`SAVEPOINT ${savepointName(index)}`, counted);
  }
  let results: pg.QueryResult[] = [];
  if (parts.length > 0) {
    try {
      results = await queryAll(context, client, parts);
    } catch (error) {
      if (isConnectionError(error) || first === undefined) throw error;
      if (error instanceof StoreInvariantError) throw error;
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
  const counts: (number | null)[][] = [];
  let next = opening.length;
  for (let index = from; index < batch.length; index += 1) {
    const { statements, counted } = batch[index] as PendingCommit;
    if (counted === undefined) {
      counts.push([]);
      continue;
    }
    next += 1; // the SAVEPOINT
    const row = (results[next] as pg.QueryResult<Record<string, string>>).rows[0];
    counts.push(statements.map((_, at) => (row === undefined ? null : Number(row[`c${at}`]))));
    next += 1;
  }
  return { opened: results.slice(0, opening.length), counts };
}

/**
 * One commit decided alone, inside a new savepoint named for its index, its events sealed
 * onto `heads` (not moved here). A database error that is not a lost connection, or events
 * that cannot be sealed, roll back to the savepoint and become this caller's error alone
 * (after a few tries for serialisation failures and deadlocks); a lost connection fails the
 * whole batch.
 */
export async function applyInSavepoint(
  context: PostgresContext,
  client: pg.PoolClient,
  pending: PendingCommit,
  index: number,
  heads: ReadonlyMap<string, LedgerHead>,
  brokenBy: () => Error | undefined,
): Promise<CommitOutcome> {
  const savepoint = savepointName(index);
  for (let attempt = 1; ; attempt += 1) {
    try {
      const result = await applyCommit(context, client, pending, savepoint);
      if (result.kind !== 'committed') return { kind: 'result', result };
      return sealOutcome(pending, heads);
    } catch (error) {
      if (isConnectionError(error) || brokenBy() !== undefined) throw error;
      // A commit without writes opened no savepoint and left nothing to undo.
      if (pending.statements.length === 0) {
        return { kind: 'error', error: refusedByDatabase(context.where, error) };
      }
      // SAVEPOINT is the first statement of the round trip, so it exists whenever a later
      // statement failed; rolling back to it undoes this commit and nothing before it.
      await client.query(`ROLLBACK TO SAVEPOINT ${savepoint}`);
      const code = errorCode(error);
      if (code === PREPARED_STATEMENT_MISSING && attempt < MAX_ATTEMPTS) {
        // A pooler dropped the connection's prepared statements: send the text instead.
        context.prepared.forget(client);
        continue;
      }
      if (attempt < MAX_ATTEMPTS && code !== undefined && RETRYABLE_CODES.has(code)) continue;
      return { kind: 'error', error: refusedByDatabase(context.where, error) };
    }
  }
}
