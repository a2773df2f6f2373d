/**
 * Group commit for the PostgreSQL store (decision 024): commits queued in the same tick, or
 * while a batch is in flight, share one transaction on one connection — chain heads locked
 * first, a savepoint per commit, the sealed events appended with COMMIT in the last round trip.
 * A batch whose chain heads this process wrote last goes as one round trip (decision 119).
 */
import type pg from 'pg';
import type { LedgerEvent, LedgerHead } from '../../core/ledger.js';
import type { AuthorityEvidenceRecord, StoreCommit, StoreCommitResult } from '../../core/store.js';
import {
  applyInSavepoint,
  type CommitOutcome,
  commitLevelSql,
  type PendingCommit,
  savepointName,
  sealOutcome,
  sendRun,
} from './postgres-commit.js';
import {
  type BatchMark,
  batchLanded,
  batchMark,
  lostCommitOutcomes,
} from './postgres-commit-outcome.js';
import { backendPid, type PostgresContext } from './postgres-context.js';
import {
  connectionLostBeforeCommit,
  errorCode,
  HeadsMissingError,
  isConnectionError,
  isStatementTimeout,
  MAX_ATTEMPTS,
  PREPARED_STATEMENT_MISSING,
  RETRYABLE_CODES,
  refusedByDatabase,
} from './postgres-errors.js';
import { createHeadCache, planOneTrip } from './postgres-one-trip.js';
import {
  appendAndMoveSql,
  countedCommitSql,
  countedSql,
  createHeadsSql,
  type HeadRow,
  selectHeadsSql,
  type WriteSql,
} from './postgres-sql.js';

/**
 * Most commits in one batch transaction. Each commit's savepoint that writes takes a
 * subtransaction id, and PostgreSQL caches only 64 per backend; beyond that every snapshot on
 * the server gets slower.
 */
const MAX_BATCH_COMMITS = 64;

/** Queues commits and runs them batch by batch, one batch in flight at a time. */
export interface CommitQueue {
  /** Queues a commit (its writes already built as SQL) and settles once its batch has. */
  enqueue(write: StoreCommit, writes: readonly WriteSql[]): Promise<StoreCommitResult>;
}

/** What the batch's first part decided, before the events are appended and COMMIT is sent. */
interface DecidedBatch {
  readonly outcomes: CommitOutcome[];
  /** Every tenant's head as locked at the start, and as moved by the sealed events. */
  readonly lockedHeads: ReadonlyMap<string, LedgerHead>;
  readonly heads: ReadonlyMap<string, LedgerHead>;
  readonly appended: readonly LedgerEvent[];
  readonly firstEvidence: AuthorityEvidenceRecord | undefined;
}

/** Creates the store's commit queue. */
export function createCommitQueue(context: PostgresContext): CommitQueue {
  let queue: PendingCommit[] = [];
  let draining = false;
  /**
   * Tenants whose head row is known to exist. Head rows are created before a batch's
   * transaction, never inside it: a row created inside could be rolled back with a refused
   * commit's savepoint. A head at sequence 0 is an empty chain (`ledgerHead` ignores it).
   */
  const knownHeads = new Set<string>();
  const headCache = createHeadCache();
  // Test hooks act between the two round trips, so a store with hooks always takes both.
  const oneTripAllowed =
    context.hooks.beforeSeal === undefined && context.hooks.commit === undefined;

  const createHeads = async (client: pg.PoolClient, tenants: readonly string[]) => {
    const missing = tenants.filter((tenant) => !knownHeads.has(tenant));
    if (missing.length === 0) return;
    await client.query(createHeadsSql(context.q, missing));
    for (const tenant of missing) knownHeads.add(tenant);
  };

  /**
   * Opens the transaction, locks every tenant's chain head, and decides each commit in its own
   * savepoint. Optimistically, every remaining commit travels in one round trip, each in a
   * savepoint nested in the one before. A commit all of whose writes touched one row each, and
   * whose events seal, is decided exactly as alone: it saw only the clean commits before it.
   * At the first commit that is not clean, roll back to its savepoint (undoing it and every
   * later one), decide it alone, and go on optimistically after it. A one-round-trip attempt
   * that failed left no transaction open (decision 135), so nothing needs ending first.
   */
  const decideBatch = async (
    client: pg.PoolClient,
    batch: readonly PendingCommit[],
    brokenBy: () => Error | undefined,
  ): Promise<DecidedBatch> => {
    const tenants = [...new Set(batch.map((pending) => pending.write.tenant))];
    await createHeads(client, tenants);
    const outcomes: CommitOutcome[] = [];
    const heads = new Map<string, LedgerHead>();
    let lockedHeads = new Map<string, LedgerHead>();
    let headsLocked = false;
    const appended: LedgerEvent[] = [];
    let firstEvidence: AuthorityEvidenceRecord | undefined;
    const record = (index: number, outcome: CommitOutcome): void => {
      outcomes[index] = outcome;
      if (outcome.kind !== 'result' || outcome.result.kind !== 'committed') return;
      const write = (batch[index] as PendingCommit).write;
      const last = outcome.result.events.at(-1);
      if (last !== undefined) heads.set(write.tenant, { sequence: last.sequence, hash: last.hash });
      appended.push(...outcome.result.events);
      firstEvidence ??= write.evidence?.[0];
    };
    const decideAlone = async (index: number) =>
      record(
        index,
        await applyInSavepoint(
          context,
          client,
          batch[index] as PendingCommit,
          index,
          heads,
          brokenBy,
        ),
      );
    let from = 0;
    while (!headsLocked || from < batch.length) {
      // The first round trip also opens the transaction and locks the heads that exist, so a
      // batch of clean commits holds them across one turn of the event loop only.
      const opening = headsLocked ? [] : ['BEGIN', selectHeadsSql(context.q, tenants)];
      const sent = await sendRun(context, client, batch, from, opening);
      if (!headsLocked) {
        const locked = sent.opened?.at(-1) as pg.QueryResult<HeadRow> | undefined;
        // After a failed run the lock result was lost with it; the locks themselves hold.
        const rows =
          locked?.rows ?? (await client.query<HeadRow>(selectHeadsSql(context.q, tenants))).rows;
        for (const row of rows) {
          heads.set(row.tenant, { sequence: Number(row.sequence), hash: row.hash });
        }
        const missing = tenants.filter((tenant) => !heads.has(tenant));
        if (missing.length > 0) {
          for (const tenant of missing) knownHeads.delete(tenant);
          throw new HeadsMissingError();
        }
        lockedHeads = new Map(heads);
        headCache.locked(lockedHeads);
        headsLocked = true;
      }
      const counts = sent.counts;
      if (counts === undefined) {
        // A statement failed somewhere in the run, now rolled back whole: decide the first
        // commit alone, then try the rest again.
        await decideAlone(from);
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
              record(index, { kind: 'error', error: refusedByDatabase(context.where, error) });
              continue;
            }
          }
        }
        if (sealed !== undefined) {
          record(index, sealed);
          continue;
        }
        await client.query(`ROLLBACK TO SAVEPOINT ${savepointName(index)}`);
        await decideAlone(index);
        index += 1;
        break;
      }
      from = index;
    }
    return { outcomes, lockedHeads, heads, appended, firstEvidence };
  };

  /**
   * Runs a batch once on one connection, in one transaction. Returns each caller's outcome
   * once COMMIT has landed (or was found to have landed); throws for the batch as a whole
   * otherwise.
   */
  const batchOnce = async (batch: readonly PendingCommit[]): Promise<CommitOutcome[]> => {
    const tenants = [...new Set(batch.map((pending) => pending.write.tenant))];
    const client = await context.connect();
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on('error', onError);
    const pid = backendPid(client);
    let phase: 'transaction' | 'commit' = 'transaction';
    let outcomes: CommitOutcome[] = [];
    let mark: BatchMark = { kind: 'nothing' };
    try {
      const remembered = oneTripAllowed ? headCache.trusted(tenants) : undefined;
      const oneTrip = remembered && planOneTrip(context.q, batch, remembered);
      // Outside the transaction: the statements this connection will EXECUTE.
      await context.prepared.prepare(
        client,
        oneTrip?.statements ??
          batch.flatMap((pending) => (pending.counted === undefined ? [] : [pending.counted])),
      );
      if (oneTrip !== undefined) {
        const text = context.prepared.render(client, oneTrip.statements);
        phase = 'commit';
        outcomes = oneTrip.outcomes;
        mark = oneTrip.mark;
        try {
          await client.query(text);
          headCache.landed(oneTrip.heads);
          return outcomes;
        } catch (error) {
          // Lost connection: the landed check below. A timeout: the two-round-trip batch
          // would wait as long again. Anything else (a head another process moved, a write
          // that touched no row) aborted the whole transaction: decide the batch in two.
          if (isConnectionError(error) || broken !== undefined || isStatementTimeout(error)) {
            throw error;
          }
          headCache.distrust(tenants);
          if (errorCode(error) === PREPARED_STATEMENT_MISSING) context.prepared.forget(client);
          phase = 'transaction';
          outcomes = [];
          mark = { kind: 'nothing' };
        }
      }
      const decided = await decideBatch(client, batch, () => broken);
      outcomes = decided.outcomes;
      // Prefer an event as the trace: its hash names this batch's place in the chain.
      mark = batchMark(decided.appended, decided.firstEvidence);
      const statements = appendAndMoveSql(context.q, decided.appended, decided.lockedHeads);
      if (statements.length > 0) await context.hooks.beforeSeal?.(client, pid);
      phase = 'commit';
      if (context.hooks.commit === undefined) {
        // The append, the head update and COMMIT travel in one round trip.
        await client.query([...statements, ...commitLevelSql(batch), 'COMMIT'].join(';\n'));
      } else {
        const last = [...statements, ...commitLevelSql(batch)];
        if (last.length > 0) await client.query(last.join(';\n'));
        await context.hooks.commit(client);
      }
      headCache.landed(decided.heads);
      return outcomes;
    } catch (error) {
      headCache.distrust(tenants);
      if (isConnectionError(error) || broken !== undefined) {
        broken ??= error instanceof Error ? error : new Error(String(error));
        if (phase === 'transaction') throw connectionLostBeforeCommit(context.where, error);
        const landed = await batchLanded(context, mark, pid);
        return lostCommitOutcomes(context.where, outcomes, landed, error);
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
        failure = refusedByDatabase(context.where, error);
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

  return {
    enqueue(write, writes) {
      return new Promise<StoreCommitResult>((resolve, reject) => {
        queue.push({
          write,
          writes,
          statements: writes.map(countedSql),
          counted: countedCommitSql(writes),
          resolve,
          reject,
        });
        if (draining) return;
        draining = true;
        // Commits arriving in the same tick, or while a batch is in flight, share a batch.
        setImmediate(() => void drain());
      });
    },
  };
}
