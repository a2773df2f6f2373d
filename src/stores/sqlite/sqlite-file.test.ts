/**
 * How the SQLite file is opened: the connection settings a commit's cost depends on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AUTOCHECKPOINT_FRAMES, CACHE_KIB, openDatabase } from './sqlite-file.js';

const directory = mkdtempSync(join(tmpdir(), 'sideguard-sqlite-file-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** SQLite's number for `temp_store = MEMORY`. */
const MEMORY = 2;

describe('SQLite file: connection settings', () => {
  it('keeps savepoint and statement journals in memory, so a commit creates no temporary file', () => {
    const db = openDatabase(join(directory, 'temp-store.db'), {
      synchronous: 'full',
      busyTimeoutMs: 1000,
      checkOnOpen: 'none',
    });
    try {
      expect(db.pragma('temp_store', { simple: true })).toBe(MEMORY);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('secure_delete', { simple: true })).toBe(1);
    } finally {
      db.close();
    }
  });

  it('caps the page cache at 4 MB and checkpoints every 1,000 WAL frames (decision 132)', () => {
    const db = openDatabase(join(directory, 'cache.db'), {
      synchronous: 'normal',
      busyTimeoutMs: 1000,
      checkOnOpen: 'none',
    });
    try {
      // A negative cache_size is in KiB; better-sqlite3's own default is 16,000 KiB.
      expect(CACHE_KIB).toBe(4000);
      expect(db.pragma('cache_size', { simple: true })).toBe(-CACHE_KIB);
      expect(AUTOCHECKPOINT_FRAMES).toBe(1000);
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(AUTOCHECKPOINT_FRAMES);
      // The checkpoint still runs by itself: 1,000 one-page commits wrap the WAL back to its start.
      db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      const insert = db.prepare('INSERT INTO filler (body) VALUES (?)');
      for (let index = 0; index < AUTOCHECKPOINT_FRAMES + 10; index += 1) insert.run('x');
      const [state] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
      expect(state?.log).toBeLessThan(AUTOCHECKPOINT_FRAMES);
    } finally {
      db.close();
    }
  });
});
