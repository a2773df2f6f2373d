/**
 * Opening the SQLite file: created atomically when missing, its header checked before SQLite
 * sees it, WAL mode and the synchronous level set, an integrity check, then the migrations.
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
import { type FileHandle, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { corruptedFile, translateError } from './sqlite-errors.js';
import { migrateSqlite, REWRITE_FLAG } from './sqlite-migrations.js';

/** How a file is opened (the store's config with its defaults applied). */
export interface SqliteOpenOptions {
  readonly synchronous: 'full' | 'normal';
  readonly busyTimeoutMs: number;
  readonly checkOnOpen: 'quick' | 'none';
}

const SQLITE_MAGIC = 'SQLite format 3\u0000';

/** The page cache of a connection, in KiB (decision 132). */
export const CACHE_KIB = 4000;
/** WAL frames written before a commit checkpoints them into the file (SQLite's default; 132). */
export const AUTOCHECKPOINT_FRAMES = 1000;

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

/**
 * Copies every WAL frame into the database file and truncates the WAL to zero bytes, so old
 * page versions (an erased snapshot among them) no longer sit in it. Waits up to the busy
 * timeout for other connections' readers and writers; returns false when it could not finish
 * (another process kept reading an older snapshot): a later call finishes the job.
 */
export function truncateWal(db: Database.Database): boolean {
  const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
  return result?.busy === 0;
}

/**
 * Syncs the WAL file to stable storage, so every commit whose frames are in it — deferred ones
 * included, this process's or another's — survives a power loss (decision 124). A missing WAL
 * means a checkpoint moved every frame into the database file and synced it: nothing to do.
 */
export async function syncWal(path: string): Promise<void> {
  let handle: FileHandle;
  try {
    handle = await open(`${path}-wal`, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Makes sure the files hold no erased snapshot: one VACUUM if the file is flagged as written
 * before snapshots were kept apart (it rebuilds every page, so no old bytes stay in free
 * space), then the WAL truncated. Best effort: another process using the file makes VACUUM
 * wait up to the busy timeout and fail, and the flag stays for the next try. True when done.
 */
export function scrubFile(db: Database.Database): boolean {
  const flagged = db
    .prepare('SELECT 1 AS present FROM sideguard_maintenance WHERE name = ?')
    .get(REWRITE_FLAG);
  if (flagged !== undefined) {
    try {
      db.exec('VACUUM');
      db.prepare('DELETE FROM sideguard_maintenance WHERE name = ?').run(REWRITE_FLAG);
    } catch {
      truncateWal(db);
      return false;
    }
  }
  return truncateWal(db);
}

/**
 * Opens (creating if missing) the database at the absolute `path`, migrated and checked.
 * @throws StoreInvariantError `store_corrupted`; ConfigurationError `store_schema_newer`.
 */
export function openDatabase(path: string, options: SqliteOpenOptions): Database.Database {
  mkdirSync(dirname(path), { recursive: true });
  if (!existsSync(path)) createFresh(path, options.busyTimeoutMs);
  checkHeader(path);
  let db: Database.Database;
  try {
    db = new Database(path, { fileMustExist: true, timeout: options.busyTimeoutMs });
  } catch (error) {
    throw translateError(error, path);
  }
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs))}`);
    const mode = db.pragma('journal_mode', { simple: true });
    if (mode !== 'wal') db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    db.pragma('foreign_keys = OFF');
    // Deleted content (an erased snapshot, the old version of a rewritten row) is overwritten
    // with zeros, in the page and in freed pages, instead of lingering in free space.
    db.pragma('secure_delete = ON');
    // Each commit of a batch runs in a savepoint, whose journal keeps the original of every page
    // it changes. On disk that journal spilled to a new temporary file past 64 KiB — about once
    // per action (open, ~9 writes, close, unlink; old page bytes left in freed disk blocks). In
    // memory it is bounded by the pages one batch touches (docs/benchmarks.md, "SQLite pages").
    db.pragma('temp_store = MEMORY');
    // Decision 132. At the end of every write transaction SQLite drops cached pages past the end
    // of the file; a page split that re-sorts its siblings parks a page at the lock-byte page's
    // number (262,145) for a moment, so that drop scans the whole page-cache hash — one bucket
    // per cached page, twice per action: 78 µs of CPU per action at 1,300 cached pages, more as
    // better-sqlite3's 16 MB cache (~3,700 pages) fills. 4 MB keeps the hot b-tree pages cached.
    db.pragma(`cache_size = ${-CACHE_KIB}`);
    // SQLite's own 1,000 WAL frames between checkpoints, said explicitly: 4,000 copied the hot
    // pages fewer times per action on a small file, but on the growth suite's 7 GB store a
    // checkpoint of a 16 MB WAL scatters its writes and c64 fell from 0.79–0.84 to 0.73–0.75 of
    // the empty store's rate (decision 132).
    db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_FRAMES}`);
    if (options.checkOnOpen === 'quick') {
      const verdict = db.pragma('quick_check', { simple: true });
      if (verdict !== 'ok') throw corruptedFile(path, `quick_check reported ${String(verdict)}`);
    }
    // A migration that rewrote records leaves their old pages in the WAL until a checkpoint,
    // and a file written before snapshots were kept apart gets one VACUUM.
    if (migrateSqlite(db, path, Date.now())) scrubFile(db);
    return db;
  } catch (error) {
    db.close();
    throw translateError(error, path);
  }
}
