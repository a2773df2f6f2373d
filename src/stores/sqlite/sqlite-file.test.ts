/**
 * How the SQLite file is opened: the connection settings a commit's cost depends on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './sqlite-file.js';

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
});
