/**
 * Group commit for the SQLite store (decision 020): the commits that arrive in the same tick
 * share one immediate transaction and one fsync, each inside its own savepoint; callers are
 * settled only after the outer COMMIT succeeded. A batch whose every commit is `deferred` runs
 * with `synchronous = NORMAL` (no fsync of its own; the next synced batch's fsync of the WAL
 * covers it, decision 124).
 */
import type Database from 'better-sqlite3';
import type { StoreCommit, StoreCommitResult } from '../../core/store.js';
import { applyCommit, type SqliteCommitContext } from './sqlite-commit.js';
import { translateError } from './sqlite-errors.js';
import { scrubFile } from './sqlite-file.js';

interface PendingCommit {
  readonly write: StoreCommit;
  readonly resolve: (result: StoreCommitResult) => void;
  readonly reject: (error: unknown) => void;
}

type Settled =
  | { readonly ok: true; readonly result: StoreCommitResult }
  | { readonly ok: false; readonly error: unknown };

/** Queues commits and flushes them a tick at a time. */
export interface SqliteCommitQueue {
  /** Queues a commit; settles after the batch holding it committed (or failed). */
  enqueue(write: StoreCommit): Promise<StoreCommitResult>;
  /**
   * Puts the connection back at the configured `synchronous` level, for a write made outside
   * the queue (truncation). Throws SQLite's error if it cannot.
   */
  useConfiguredLevel(): void;
  /** Resolves once nothing is queued or flushing (for `close`). */
  drained(): Promise<void>;
  /**
   * Truncates the WAL (done after every batch that erased a snapshot; `force` does it even if
   * none is due); true when no erased snapshot can be left in the WAL.
   */
  scrub(force: boolean): boolean;
}

/** Creates the commit queue of one open database. */
export function createSqliteCommitQueue(
  db: Database.Database,
  context: SqliteCommitContext,
  path: string,
  synchronous: 'full' | 'normal',
): SqliteCommitQueue {
  const { statements } = context;
  let queue: PendingCommit[] = [];
  let flushScheduled = false;
  let signalDrained: (() => void) | undefined;
  /** The batch being applied deleted a snapshot (its COMMIT then makes a scrub due). */
  let erasedInBatch = false;
  /** A snapshot was erased and the WAL may still hold its old page. */
  let scrubDue = false;
  /**
   * The connection's `synchronous` level. A batch whose every commit is deferred (in a store
   * configured FULL) runs at NORMAL: in WAL mode the frames are still written before COMMIT
   * returns, so the batch survives a crash of the process; only its fsync is left to the next
   * synced batch (or to `ledgerHead`'s sync of the WAL). Anything else writes at the
   * configured level, switched back to before it runs (`useLevel` throws if it cannot be).
   */
  let level = synchronous;
  const useLevel = (wanted: 'full' | 'normal'): void => {
    if (wanted === level) return;
    // Not a prepared statement: SQLite applies a PRAGMA's setting when it compiles it.
    db.exec(wanted === 'full' ? 'PRAGMA synchronous = FULL' : 'PRAGMA synchronous = NORMAL');
    level = wanted;
  };
  const levelFor = (batch: readonly PendingCommit[]): 'full' | 'normal' =>
    batch.every((pending) => pending.write.durability === 'deferred') ? 'normal' : synchronous;

  /** Truncates the WAL if an erasure left old pages in it; never fails a caller. */
  const scrub = (): boolean => {
    try {
      if (scrubFile(db)) scrubDue = false;
    } catch {
      // The commit stands; the next batch or purgeErased() tries again.
    }
    return !scrubDue;
  };

  const abortTransaction = (): void => {
    if (!db.inTransaction) return;
    try {
      statements.rollback.run();
    } catch {
      // The connection is unusable; the next BEGIN will report it.
    }
  };

  const finishFlush = (): void => {
    if (queue.length > 0) {
      flushScheduled = true;
      setImmediate(flush);
    } else if (signalDrained !== undefined) {
      signalDrained();
      signalDrained = undefined;
    }
  };

  /**
   * Applies each commit of the open transaction in its own savepoint. Returns each caller's
   * outcome, or the error that ended the whole transaction (then nothing of the batch stands).
   */
  const applyAll = (
    batch: readonly PendingCommit[],
  ): { settled: Settled[] } | { failed: unknown } => {
    const settled: Settled[] = [];
    erasedInBatch = false;
    for (const pending of batch) {
      try {
        statements.savepoint.run();
      } catch (error) {
        abortTransaction();
        return { failed: error };
      }
      try {
        const { result, deletedEnvelope } = applyCommit(context, pending.write);
        if (result.kind !== 'committed') statements.rollbackToSavepoint.run();
        statements.releaseSavepoint.run();
        settled.push({ ok: true, result });
        if (deletedEnvelope) erasedInBatch = true;
      } catch (error) {
        // SQLite rolled the whole transaction back (I/O error, disk full): nothing of the
        // batch is stored, so every caller gets the error.
        if (!db.inTransaction) return { failed: error };
        try {
          statements.rollbackToSavepoint.run();
          statements.releaseSavepoint.run();
        } catch (rollbackError) {
          abortTransaction();
          return { failed: rollbackError };
        }
        settled.push({ ok: false, error: translateError(error, path) });
      }
    }
    return { settled };
  };

  /**
   * Applies a batch of one commit without a savepoint (decision 132): the transaction holds
   * nothing else, so a refusal or an error rolls the whole transaction back instead. A savepoint
   * journals the original of every page the commit changes, in memory; at c1 every batch is one
   * commit. Returns the caller's outcome and whether the transaction is still open to commit.
   */
  const applyOne = (
    pending: PendingCommit,
  ): { settled: Settled[]; open: boolean } | { failed: unknown } => {
    erasedInBatch = false;
    try {
      const { result, deletedEnvelope } = applyCommit(context, pending.write);
      if (result.kind !== 'committed') {
        statements.rollback.run();
        return { settled: [{ ok: true, result }], open: false };
      }
      if (deletedEnvelope) erasedInBatch = true;
      return { settled: [{ ok: true, result }], open: true };
    } catch (error) {
      if (!db.inTransaction) return { failed: error };
      try {
        statements.rollback.run();
      } catch (rollbackError) {
        abortTransaction();
        return { failed: rollbackError };
      }
      return { settled: [{ ok: false, error: translateError(error, path) }], open: false };
    }
  };

  /** Runs the batch in one immediate transaction: each caller's outcome, or the error for all. */
  const runTransaction = (
    batch: readonly PendingCommit[],
  ): { settled: Settled[] } | { failed: unknown } => {
    try {
      useLevel(levelFor(batch));
      statements.begin.run();
    } catch (error) {
      return { failed: error };
    }
    const [only] = batch;
    const applied =
      batch.length === 1 && only !== undefined
        ? applyOne(only)
        : { ...applyAll(batch), open: true };
    if ('failed' in applied) return applied;
    // A lone refused commit already rolled the transaction back: nothing to commit.
    if (!applied.open) return applied;
    try {
      statements.commit.run();
    } catch (error) {
      abortTransaction();
      return { failed: error };
    }
    if (erasedInBatch) scrubDue = true;
    if (scrubDue) scrub();
    return applied;
  };

  /**
   * Runs every queued commit in one immediate transaction, each inside its own savepoint, and
   * settles the callers only after the outer COMMIT (and so after the sync) succeeded.
   */
  const flush = (): void => {
    flushScheduled = false;
    const batch = queue;
    queue = [];
    const outcome = batch.length === 0 ? { settled: [] } : runTransaction(batch);
    if ('failed' in outcome) {
      const translated = translateError(outcome.failed, path);
      for (const pending of batch) pending.reject(translated);
    } else {
      for (const [index, pending] of batch.entries()) {
        const settled = outcome.settled[index];
        if (settled === undefined) pending.reject(new Error('unreachable: missing outcome'));
        else if (settled.ok) pending.resolve(settled.result);
        else pending.reject(settled.error);
      }
    }
    finishFlush();
  };

  return {
    enqueue(write) {
      return new Promise<StoreCommitResult>((resolve, reject) => {
        queue.push({ write, resolve, reject });
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flush);
        }
      });
    },
    useConfiguredLevel() {
      useLevel(synchronous);
    },
    scrub(force) {
      if (force) scrubDue = true;
      return scrubDue ? scrub() : true;
    },
    drained() {
      if (!flushScheduled && queue.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        signalDrained = resolve;
      });
    },
  };
}
