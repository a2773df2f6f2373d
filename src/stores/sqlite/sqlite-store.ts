/**
 * The embedded SQLite store (better-sqlite3): one WAL file, immediate transactions, and group
 * commit — the commits that arrive in the same tick share one transaction and one fsync.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  constants as fsConstants,
  linkSync,
  mkdirSync,
  openSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { SideguardError, StoreInvariantError } from '../../core/errors.js';
import { type LedgerEvent, type LedgerHead, sealLedgerEvents } from '../../core/ledger.js';
import type {
  AuthorityEvidenceRecord,
  DueQuery,
  EffectClaim,
  GuardStore,
  LedgerQuery,
  ProposalRecord,
  StoreCommit,
  StoreCommitResult,
} from '../../core/store.js';
import { assertCommitShape, checkEffectClaim, checkProposalWrite } from '../../core/store-rules.js';
import type { ProposalStatus } from '../../core/vocabulary.js';
import {
  decodeEvent,
  decodeEvidence,
  decodeProposal,
  encodeJson,
  firstDuplicateEvidence,
} from '../store-codec.js';
import { StoreUnavailableError } from '../store-errors.js';
import { migrateSqlite } from './sqlite-migrations.js';

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
}

const DEFAULT_PATH = '.sideguard/sideguard.db';
const SQLITE_MAGIC = 'SQLite format 3\u0000';

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
interface HeadRow {
  sequence: number;
  hash: string;
  checkpoint_sequence: number | null;
  checkpoint_hash: string | null;
}

interface PendingCommit {
  readonly write: StoreCommit;
  readonly resolve: (result: StoreCommitResult) => void;
  readonly reject: (error: unknown) => void;
}

type Settled =
  | { readonly ok: true; readonly result: StoreCommitResult }
  | { readonly ok: false; readonly error: unknown };

function sqliteCode(error: unknown): string | undefined {
  return error instanceof Database.SqliteError ? error.code : undefined;
}

/** Turns a driver error into a Sideguard error that names the file and says what to do. */
function translateError(error: unknown, path: string): unknown {
  if (error instanceof SideguardError) return error;
  const code = sqliteCode(error);
  if (code === undefined) return error;
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return new StoreInvariantError(
      'store_corrupted',
      `SQLite database ${path} is corrupted or truncated (${code}). Sideguard never recreates it: restore the file from a backup or move it aside to start empty.`,
      { cause: error, data: { path, sqliteCode: code } },
    );
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new StoreUnavailableError(
      'store_busy',
      `SQLite database ${path} stayed locked by another writer past the busy timeout; nothing was stored. Retry, or raise busyTimeoutMs.`,
      { applied: false, cause: error, data: { path } },
    );
  }
  return new StoreUnavailableError(
    'store_io_failed',
    `SQLite database ${path} failed (${code}); nothing of the commit was stored. Check the disk and file permissions.`,
    { applied: false, cause: error, data: { path, sqliteCode: code } },
  );
}

function corruptedFile(path: string, reason: string): StoreInvariantError {
  return new StoreInvariantError(
    'store_corrupted',
    `SQLite database ${path} is corrupted or truncated: ${reason}. Sideguard never recreates it: restore the file from a backup or move it aside to start empty.`,
    { data: { path } },
  );
}

/** Checks the file header before SQLite sees it, so an empty or foreign file is never reused. */
function checkHeader(path: string): void {
  const size = statSync(path).size;
  if (size === 0) throw corruptedFile(path, 'the file is empty (0 bytes)');
  if (size < 100) throw corruptedFile(path, `the file is only ${size} bytes long`);
  const header = Buffer.alloc(100);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, header, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  if (header.toString('latin1', 0, 16) !== SQLITE_MAGIC) {
    throw corruptedFile(path, 'it does not start with the SQLite header');
  }
  const pageSizeField = header.readUInt16BE(16);
  const pageSize = pageSizeField === 1 ? 65536 : pageSizeField;
  if (size % pageSize !== 0) {
    throw corruptedFile(path, `its size (${size} bytes) is not a whole number of pages`);
  }
}

/**
 * Creates a new database under a temporary name and links it into place, so another process
 * never sees a half-initialised file, and a zero-byte file at `path` can only mean damage.
 */
function createFresh(path: string, busyTimeoutMs: number): void {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.creating`;
  const db = new Database(temporary, { timeout: busyTimeoutMs });
  try {
    db.pragma('journal_mode = WAL');
    migrateSqlite(db, path, Date.now());
  } finally {
    db.close();
  }
  try {
    try {
      linkSync(temporary, path);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return; // another process created it first: use theirs
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV') throw error;
      try {
        copyFileSync(temporary, path, fsConstants.COPYFILE_EXCL);
      } catch (copyError) {
        if ((copyError as NodeJS.ErrnoException).code !== 'EEXIST') throw copyError;
      }
    }
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${temporary}${suffix}`, { force: true });
  }
}

function openDatabase(
  path: string,
  config: Required<Omit<SqliteStoreConfig, 'path'>>,
): Database.Database {
  mkdirSync(dirname(path), { recursive: true });
  if (!existsSync(path)) createFresh(path, config.busyTimeoutMs);
  checkHeader(path);
  let db: Database.Database;
  try {
    db = new Database(path, { fileMustExist: true, timeout: config.busyTimeoutMs });
  } catch (error) {
    throw translateError(error, path);
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(config.busyTimeoutMs))}`);
    const mode = db.pragma('journal_mode', { simple: true });
    if (mode !== 'wal') db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${config.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    db.pragma('foreign_keys = OFF');
    if (config.checkOnOpen === 'quick') {
      const verdict = db.pragma('quick_check', { simple: true });
      if (verdict !== 'ok') throw corruptedFile(path, `quick_check reported ${String(verdict)}`);
    }
    migrateSqlite(db, path, Date.now());
    return db;
  } catch (error) {
    db.close();
    throw translateError(error, path);
  }
}

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

  const statements = {
    begin: db.prepare('BEGIN IMMEDIATE'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT sideguard_commit'),
    rollbackToSavepoint: db.prepare('ROLLBACK TO sideguard_commit'),
    releaseSavepoint: db.prepare('RELEASE sideguard_commit'),
    getProposal: db.prepare<[string, string], ProposalRow>(
      'SELECT tenant, proposal, revision, status, record FROM proposals WHERE tenant = ? AND proposal = ?',
    ),
    getStatus: db.prepare<[string, string], { status: ProposalStatus }>(
      'SELECT status FROM proposals WHERE tenant = ? AND proposal = ?',
    ),
    insertProposal: db.prepare(
      `INSERT INTO proposals (tenant, proposal, revision, status, effect_scope, created_at_ms, due_at_ms, record)
       VALUES (@tenant, @proposal, @revision, @status, @effectScope, @createdAtMs, @dueAtMs, @record)`,
    ),
    updateProposal: db.prepare(
      `UPDATE proposals SET revision = @revision, status = @status, effect_scope = @effectScope,
         created_at_ms = @createdAtMs, due_at_ms = @dueAtMs, record = @record
       WHERE tenant = @tenant AND proposal = @proposal AND revision = @expectedRevision AND status = @expectedStatus`,
    ),
    listByEffect: db.prepare<[string, string, number], ProposalRow>(
      `SELECT tenant, proposal, revision, status, record FROM proposals
       WHERE tenant = ? AND effect_scope = ? ORDER BY created_at_ms DESC, proposal DESC LIMIT ?`,
    ),
    listDue: db.prepare<[string, number, string, number], ProposalRow>(
      `SELECT tenant, proposal, revision, status, record FROM proposals
       WHERE tenant = ? AND due_at_ms IS NOT NULL AND due_at_ms <= ?
         AND status IN (SELECT value FROM json_each(?))
       ORDER BY due_at_ms, proposal LIMIT ?`,
    ),
    getClaim: db.prepare<[string, string], { proposal: string; claimed_at_ms: number }>(
      'SELECT proposal, claimed_at_ms FROM effect_claims WHERE tenant = ? AND effect_scope = ?',
    ),
    upsertClaim: db.prepare(
      `INSERT INTO effect_claims (tenant, effect_scope, proposal, claimed_at_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT (tenant, effect_scope) DO UPDATE SET proposal = excluded.proposal, claimed_at_ms = excluded.claimed_at_ms`,
    ),
    evidenceExists: db.prepare<[string, string, string], { present: number }>(
      'SELECT 1 AS present FROM authority_evidence WHERE tenant = ? AND proposal = ? AND evidence_digest = ?',
    ),
    insertEvidence: db.prepare(
      'INSERT INTO authority_evidence (tenant, proposal, evidence_digest, record) VALUES (?, ?, ?, ?)',
    ),
    listEvidence: db.prepare<[string, string], EvidenceRow>(
      `SELECT tenant, proposal, evidence_digest, record FROM authority_evidence
       WHERE tenant = ? AND proposal = ? ORDER BY position`,
    ),
    getHead: db.prepare<[string], HeadRow>(
      'SELECT sequence, hash, checkpoint_sequence, checkpoint_hash FROM ledger_heads WHERE tenant = ?',
    ),
    upsertHead: db.prepare(
      `INSERT INTO ledger_heads (tenant, sequence, hash) VALUES (?, ?, ?)
       ON CONFLICT (tenant) DO UPDATE SET sequence = excluded.sequence, hash = excluded.hash`,
    ),
    insertEvent: db.prepare(
      'INSERT INTO ledger_events (tenant, sequence, proposal, hash, event) VALUES (?, ?, ?, ?, ?)',
    ),
    readLedger: db.prepare<[string, number, number], EventRow>(
      `SELECT tenant, sequence, hash, event FROM ledger_events
       WHERE tenant = ? AND sequence > ? ORDER BY sequence LIMIT ?`,
    ),
    readLedgerOfProposal: db.prepare<[string, string, number, number], EventRow>(
      `SELECT tenant, sequence, hash, event FROM ledger_events
       WHERE tenant = ? AND proposal = ? AND sequence > ? ORDER BY sequence LIMIT ?`,
    ),
    lastEventThrough: db.prepare<[string, number], { sequence: number; hash: string }>(
      `SELECT sequence, hash FROM ledger_events WHERE tenant = ? AND sequence <= ?
       ORDER BY sequence DESC LIMIT 1`,
    ),
    deleteEventsThrough: db.prepare('DELETE FROM ledger_events WHERE tenant = ? AND sequence <= ?'),
    setCheckpoint: db.prepare(
      'UPDATE ledger_heads SET checkpoint_sequence = ?, checkpoint_hash = ? WHERE tenant = ?',
    ),
  };

  let queue: PendingCommit[] = [];
  let flushScheduled = false;
  let closed = false;
  let signalDrained: (() => void) | undefined;

  const where = `SQLite database ${path}`;
  const toProposal = (row: ProposalRow): ProposalRecord => decodeProposal(row.record, row, where);

  const ensureOpen = (): void => {
    if (closed) {
      throw new StoreInvariantError('store_closed', `The SQLite store for ${path} is closed`);
    }
  };

  /** Decides and applies one commit; runs inside the batch transaction and its savepoint. */
  const applyCommit = (write: StoreCommit): StoreCommitResult => {
    const tenant = write.tenant;
    const change = write.proposal;
    const currentRow =
      change === undefined ? undefined : statements.getProposal.get(tenant, change.record.proposal);
    // The common case — the row is where the caller expects it — needs only the revision and
    // status columns; the full record is decoded (and validated) only to report a conflict.
    const expected =
      change?.kind === 'update' &&
      currentRow !== undefined &&
      currentRow.revision === change.expectedRevision &&
      currentRow.status === change.expectedStatus;
    const refused = expected
      ? undefined
      : checkProposalWrite(write, currentRow === undefined ? undefined : toProposal(currentRow));
    if (refused !== undefined) return refused;
    if (write.claim !== undefined) {
      const row = statements.getClaim.get(tenant, write.claim.effectScope);
      const existing: EffectClaim | undefined =
        row === undefined
          ? undefined
          : {
              tenant,
              effectScope: write.claim.effectScope,
              proposal: row.proposal,
              claimedAtMs: row.claimed_at_ms,
            };
      const owner =
        existing === undefined ? undefined : statements.getStatus.get(tenant, existing.proposal);
      const claimRefused = checkEffectClaim(write.claim.proposal, existing, owner?.status);
      if (claimRefused !== undefined) return claimRefused;
    }
    const evidence = write.evidence ?? [];
    const duplicate = firstDuplicateEvidence(
      evidence,
      (item) =>
        statements.evidenceExists.get(tenant, item.proposal, item.evidenceDigest) !== undefined,
    );
    if (duplicate !== undefined) return { kind: 'evidence_duplicate', evidenceDigest: duplicate };

    if (change !== undefined) {
      const record = change.record;
      const columns = {
        tenant,
        proposal: record.proposal,
        revision: record.revision,
        status: record.status,
        effectScope: record.effectScope,
        createdAtMs: record.createdAtMs,
        dueAtMs: record.dueAtMs,
        record: encodeJson(record),
      };
      if (change.kind === 'insert') {
        statements.insertProposal.run(columns);
      } else {
        const updated = statements.updateProposal.run({
          ...columns,
          expectedRevision: change.expectedRevision,
          expectedStatus: change.expectedStatus,
        });
        if (updated.changes !== 1) {
          throw new StoreInvariantError(
            'assertion_failed',
            `Assertion failed: compare-and-set on ${record.proposal} changed ${updated.changes} rows in ${where}`,
          );
        }
      }
    }
    if (write.claim !== undefined) {
      statements.upsertClaim.run(
        tenant,
        write.claim.effectScope,
        write.claim.proposal,
        write.claim.atMs,
      );
    }
    for (const item of evidence) {
      statements.insertEvidence.run(tenant, item.proposal, item.evidenceDigest, encodeJson(item));
    }
    let events: LedgerEvent[] = [];
    if (write.events.length > 0) {
      const head = statements.getHead.get(tenant);
      events = sealLedgerEvents(
        tenant,
        head === undefined ? undefined : { sequence: head.sequence, hash: head.hash },
        write.events,
      );
      for (const event of events) {
        statements.insertEvent.run(
          tenant,
          event.sequence,
          event.proposal,
          event.hash,
          encodeJson(event),
        );
      }
      const last = events.at(-1);
      if (last !== undefined) statements.upsertHead.run(tenant, last.sequence, last.hash);
    }
    return { kind: 'committed', events };
  };

  /**
   * Runs every queued commit in one immediate transaction, each inside its own savepoint, and
   * settles the callers only after the outer COMMIT (and so after the sync) succeeded.
   */
  const flush = (): void => {
    flushScheduled = false;
    const batch = queue;
    queue = [];
    if (batch.length === 0) return;
    const failAll = (error: unknown): void => {
      const translated = translateError(error, path);
      for (const pending of batch) pending.reject(translated);
    };
    try {
      statements.begin.run();
    } catch (error) {
      failAll(error);
      finishFlush();
      return;
    }
    const settled: Settled[] = [];
    for (const pending of batch) {
      try {
        statements.savepoint.run();
      } catch (error) {
        abortTransaction();
        failAll(error);
        finishFlush();
        return;
      }
      try {
        const result = applyCommit(pending.write);
        if (result.kind !== 'committed') statements.rollbackToSavepoint.run();
        statements.releaseSavepoint.run();
        settled.push({ ok: true, result });
      } catch (error) {
        if (!db.inTransaction) {
          // SQLite rolled the whole transaction back (I/O error, disk full): nothing of the
          // batch is stored, so every caller gets the error.
          failAll(error);
          finishFlush();
          return;
        }
        try {
          statements.rollbackToSavepoint.run();
          statements.releaseSavepoint.run();
        } catch (rollbackError) {
          abortTransaction();
          failAll(rollbackError);
          finishFlush();
          return;
        }
        settled.push({ ok: false, error: translateError(error, path) });
      }
    }
    try {
      statements.commit.run();
    } catch (error) {
      abortTransaction();
      failAll(error);
      finishFlush();
      return;
    }
    for (const [index, pending] of batch.entries()) {
      const outcome = settled[index];
      if (outcome === undefined) pending.reject(new Error('unreachable: missing outcome'));
      else if (outcome.ok) pending.resolve(outcome.result);
      else pending.reject(outcome.error);
    }
    finishFlush();
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
    path,

    commit(write: StoreCommit): Promise<StoreCommitResult> {
      try {
        ensureOpen();
        assertCommitShape(write);
      } catch (error) {
        return Promise.reject(error);
      }
      return new Promise<StoreCommitResult>((resolvePromise, rejectPromise) => {
        queue.push({ write, resolve: resolvePromise, reject: rejectPromise });
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flush);
        }
      });
    },

    getProposal(tenant, proposal) {
      return read(() => {
        const row = statements.getProposal.get(tenant, proposal);
        return row === undefined ? undefined : toProposal(row);
      });
    },

    listProposalsByEffect(tenant, effectScope, limit = 50) {
      return read(() => statements.listByEffect.all(tenant, effectScope, limit).map(toProposal));
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
          .map(toProposal),
      );
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

    ledgerHead(tenant): Promise<LedgerHead | undefined> {
      return read(() => {
        const row = statements.getHead.get(tenant);
        return row === undefined ? undefined : { sequence: row.sequence, hash: row.hash };
      });
    },

    truncateLedger(tenant, throughSequence) {
      return read(() => {
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

    async close() {
      if (closed) return;
      closed = true;
      if (flushScheduled || queue.length > 0) {
        await new Promise<void>((resolveDrained) => {
          signalDrained = resolveDrained;
        });
      }
      db.close();
    },
  };
}
