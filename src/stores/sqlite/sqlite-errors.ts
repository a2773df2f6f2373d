/**
 * How the SQLite store turns driver errors into definite Sideguard errors (decision 023) that
 * name the file and say what to do.
 */
import Database from 'better-sqlite3';
import { SideguardError, StoreInvariantError } from '../../core/errors.js';
import { StoreUnavailableError } from '../store-errors.js';

function sqliteCode(error: unknown): string | undefined {
  return error instanceof Database.SqliteError ? error.code : undefined;
}

/** The file is damaged; Sideguard never recreates it. */
export function corruptedFile(path: string, reason: string): StoreInvariantError {
  return new StoreInvariantError(
    'store_corrupted',
    `SQLite database ${path} is corrupted or truncated: ${reason}. Sideguard never recreates it: restore the file from a backup or move it aside to start empty.`,
    { data: { path } },
  );
}

/** Turns a driver error into a Sideguard error that names the file and says what to do. */
export function translateError(error: unknown, path: string): unknown {
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
