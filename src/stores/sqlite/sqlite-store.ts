/**
 * The embedded SQLite store (better-sqlite3): one WAL file, immediate transactions, and group
 * commit — the commits that arrive in the same tick share one transaction and one fsync. This
 * module assembles the store from its parts and holds the reads (synchronous, one statement).
 */
import { resolve } from 'node:path';
import { StoreInvariantError } from '../../core/errors.js';
import type { LedgerHead } from '../../core/ledger.js';
import type {
  AuthorityEvidenceRecord,
  DueQuery,
  GuardStore,
  LedgerQuery,
  ProposalListQuery,
  StoreCommit,
  StoreCommitResult,
} from '../../core/store.js';
import { assertCommitShape } from '../../core/store-rules.js';
import { decodeEvent, decodeEvidence } from '../store-codec.js';
import type { ErasurePurge } from '../store-envelopes.js';
import { StoreUnavailableError } from '../store-errors.js';
import { checkProposalListQuery, mergeListed } from '../store-queries.js';
import { type SqliteCommitContext, toProposal } from './sqlite-commit.js';
import { translateError } from './sqlite-errors.js';
import { openDatabase, syncWal } from './sqlite-file.js';
import { createSqliteCommitQueue } from './sqlite-group-commit.js';
import { prepareStatements } from './sqlite-statements.js';

/** Options of {@link createSqliteStore}. */
export interface SqliteStoreConfig {
  /**
   * The database file. Relative paths resolve against the working directory; missing
   * directories are created. @default '.sideguard/sideguard.db'
   */
  readonly path?: string;
  /**
   * `full` syncs the WAL on every commit: a committed decision survives a power loss.
   * `normal` syncs only at WAL checkpoints: much faster, still never corrupts the file and
   * survives a process crash, but an OS crash or power loss can lose the most recent commits —
   * a claim or ledger entry the caller was told is durable may vanish, and with it the proof
   * that an effect was already started. @default 'full'
   */
  readonly synchronous?: 'full' | 'normal';
  /**
   * How long a commit waits for another process that holds the write lock before failing with
   * `store_busy`, in milliseconds. @default 5000
   */
  readonly busyTimeoutMs?: number;
  /**
   * Integrity check when opening: `quick` runs SQLite's `quick_check` (reads every page once, so
   * cost grows with the file: roughly a second per few hundred MB); `none` skips it and relies
   * on SQLite reporting damage when a damaged page is read. @default 'quick'
   */
  readonly checkOnOpen?: 'quick' | 'none';
}

/** A {@link GuardStore} backed by one SQLite file. */
export interface SqliteStore extends GuardStore {
  readonly kind: 'sqlite';
  /** The absolute path of the database file. */
  readonly path: string;
  /**
   * Makes sure no erased snapshot survives in the files (decision 025). Deleted content is
   * zeroed in place (`secure_delete`), and the store already truncates the WAL after every
   * commit that erased a snapshot; this runs that truncation again, for when another process
   * was reading at the time. `complete: false` means a reader still holds old WAL frames:
   * call it again later.
   */
  purgeErased(): Promise<ErasurePurge>;
}

const DEFAULT_PATH = '.sideguard/sideguard.db';

/**
 * Opens (creating if missing) a SQLite store. Safe for several processes on one file: writes
 * take SQLite's write lock with `BEGIN IMMEDIATE` and wait up to `busyTimeoutMs` for it.
 * @throws ConfigurationError `store_schema_newer` when the file was written by a newer schema.
 * @throws StoreInvariantError `store_corrupted` when the file is empty, truncated or damaged.
 */
export function createSqliteStore(config: SqliteStoreConfig = {}): SqliteStore {
  const path = resolve(config.path ?? DEFAULT_PATH);
  const db = openDatabase(path, {
    synchronous: config.synchronous ?? 'full',
    busyTimeoutMs: config.busyTimeoutMs ?? 5000,
    checkOnOpen: config.checkOnOpen ?? 'quick',
  });
  const statements = prepareStatements(db);
  const where = `SQLite database ${path}`;
  const context: SqliteCommitContext = { statements, where };
  const synchronous = config.synchronous ?? 'full';
  const queue = createSqliteCommitQueue(db, context, path, synchronous);
  let closed = false;

  const ensureOpen = (): void => {
    if (closed) {
      throw new StoreInvariantError('store_closed', `The SQLite store for ${path} is closed`);
    }
  };

  /** Syncs the WAL: every acknowledged commit, deferred ones included, is then durable. */
  const sync = async (): Promise<void> => {
    ensureOpen();
    try {
      await syncWal(path);
    } catch (error) {
      throw new StoreUnavailableError(
        'store_io_failed',
        `Syncing the WAL of SQLite database ${path} failed (${(error as NodeJS.ErrnoException).code ?? 'error'}), so its latest commits may not be durable yet; check the disk, then try again.`,
        { applied: false, cause: error, data: { path } },
      );
    }
  };

  const read = <T>(run: () => T): Promise<T> => {
    try {
      ensureOpen();
      return Promise.resolve(run());
    } catch (error) {
      return Promise.reject(translateError(error, path));
    }
  };

  return {
    kind: 'sqlite',
    refusesListedEffects: true,
    path,

    commit(write: StoreCommit): Promise<StoreCommitResult> {
      try {
        ensureOpen();
        assertCommitShape(write);
      } catch (error) {
        return Promise.reject(error);
      }
      return queue.enqueue(write);
    },

    getProposal(tenant, proposal) {
      return read(() => {
        const row = statements.getProposal.get(tenant, proposal);
        return row === undefined ? undefined : toProposal(context, row);
      });
    },

    listProposalsByEffect(tenant, effectScope, limit = 50) {
      return read(() =>
        statements.listByEffect
          .all(tenant, effectScope, limit)
          .map((row) => toProposal(context, row)),
      );
    },

    getEffectClaim(tenant, effectScope) {
      return read(() => {
        const row = statements.getClaim.get(tenant, effectScope);
        return row === undefined
          ? undefined
          : { tenant, effectScope, proposal: row.proposal, claimedAtMs: row.claimed_at_ms };
      });
    },

    listEvidence(tenant, proposal): Promise<readonly AuthorityEvidenceRecord[]> {
      return read(() =>
        statements.listEvidence
          .all(tenant, proposal)
          .map((row) => decodeEvidence(row.record, row, where)),
      );
    },

    listDue(query: DueQuery) {
      return read(() =>
        statements.listDue
          .all(
            query.tenant,
            query.dueAtOrBeforeMs,
            JSON.stringify(query.statuses),
            query.limit ?? 100,
          )
          .map((row) => toProposal(context, row)),
      );
    },

    listProposals(query: ProposalListQuery) {
      return read(() => {
        const checked = checkProposalListQuery(query);
        const { after } = checked;
        const statement =
          after === undefined ? statements.listByStatus : statements.listByStatusAfter;
        // One ordered index range per status, merged: each reads at most `limit` rows.
        const lists = checked.statuses.map((status) =>
          statement
            .all({
              status,
              tenant: checked.tenant ?? null,
              actionType: checked.actionType ?? null,
              limit: checked.limit,
              afterExpiresAtMs: after?.expiresAtMs ?? null,
              afterTenant: after?.tenant ?? null,
              afterProposal: after?.proposal ?? null,
            })
            .map((row) => toProposal(context, row)),
        );
        return mergeListed(lists, checked.limit);
      });
    },

    readLedger(query: LedgerQuery) {
      return read(() => {
        const after = query.afterSequence ?? 0;
        const limit = query.limit ?? -1;
        const rows =
          query.proposal === undefined
            ? statements.readLedger.all(query.tenant, after, limit)
            : statements.readLedgerOfProposal.all(query.tenant, query.proposal, after, limit);
        return rows.map((row) => decodeEvent(row.event, row, where));
      });
    },

    async ledgerHead(tenant): Promise<LedgerHead | undefined> {
      const head = await read(() => {
        const row = statements.getHead.get(tenant);
        return row === undefined ? undefined : { sequence: row.sequence, hash: row.hash };
      });
      // Read first, then sync: every commit the head includes has its frames in the WAL by now,
      // deferred ones (of any process) too (decision 124).
      await sync();
      return head;
    },

    sync: () => sync(),

    truncateLedger(tenant, throughSequence) {
      return read(() => {
        queue.useConfiguredLevel();
        db.transaction(() => {
          const last = statements.lastEventThrough.get(tenant, throughSequence);
          if (last === undefined) return;
          statements.deleteEventsThrough.run(tenant, throughSequence);
          statements.setCheckpoint.run(last.sequence, last.hash, tenant);
        }).immediate();
      });
    },

    ledgerCheckpoint(tenant): Promise<LedgerHead | undefined> {
      return read(() => {
        const row = statements.getHead.get(tenant);
        if (row === undefined || row.checkpoint_sequence === null || row.checkpoint_hash === null) {
          return undefined;
        }
        return { sequence: row.checkpoint_sequence, hash: row.checkpoint_hash };
      });
    },

    async purgeErased(): Promise<ErasurePurge> {
      ensureOpen();
      await queue.drained();
      return queue.scrub(true)
        ? { complete: true, detail: `the WAL of ${path} is checkpointed and truncated` }
        : {
            complete: false,
            detail: `another connection still reads old frames of the WAL of ${path}; try again when it is idle`,
          };
    },

    async close() {
      if (closed) return;
      closed = true;
      await queue.drained();
      queue.scrub(false);
      db.close();
    },
  };
}
