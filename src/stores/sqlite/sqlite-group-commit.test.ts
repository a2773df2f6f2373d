/**
 * The SQLite batch's `synchronous` level (decision 124): a batch whose every commit is deferred
 * commits at NORMAL (no fsync of its own); a batch holding any synced commit, and any write made
 * outside the queue, at the store's configured level. Observed on the connection the queue uses.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoreCommit } from '../../core/store.js';
import { freshTenant, insertCommit, record } from '../conformance/conformance-fixtures.js';
import { openDatabase } from './sqlite-file.js';
import { createSqliteCommitQueue } from './sqlite-group-commit.js';
import { prepareStatements } from './sqlite-statements.js';

const directory = mkdtempSync(join(tmpdir(), 'sideguard-sqlite-level-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** SQLite's numbers for the levels. */
const NORMAL = 1;
const FULL = 2;

function openQueue(name: string, synchronous: 'full' | 'normal') {
  const path = join(directory, `${name}.db`);
  const db = openDatabase(path, { synchronous, busyTimeoutMs: 1000, checkOnOpen: 'none' });
  const queue = createSqliteCommitQueue(
    db,
    { statements: prepareStatements(db), where: path },
    path,
    synchronous,
  );
  const level = () => db.pragma('synchronous', { simple: true });
  return { db, queue, level };
}

const deferred = (write: StoreCommit): StoreCommit => ({ ...write, durability: 'deferred' });

describe('SQLite group commit: the synchronous level of a batch', () => {
  it('runs an all-deferred batch at NORMAL and anything with a synced commit at FULL', async () => {
    const { db, queue, level } = openQueue('full', 'full');
    const tenant = freshTenant('level');
    expect(level()).toBe(FULL);
    await queue.enqueue(deferred(insertCommit(record(tenant, 'p-1'))));
    // The level stays where the last batch left it until the next write needs another.
    expect(level()).toBe(NORMAL);
    const mixed = await Promise.all([
      queue.enqueue(deferred(insertCommit(record(tenant, 'p-2')))),
      queue.enqueue(insertCommit(record(tenant, 'p-3'))),
    ]);
    expect(mixed.map((result) => result.kind)).toEqual(['committed', 'committed']);
    expect(level()).toBe(FULL);
    await queue.enqueue(insertCommit(record(tenant, 'p-4')));
    expect(level()).toBe(FULL);
    await Promise.all([
      queue.enqueue(deferred(insertCommit(record(tenant, 'p-5')))),
      queue.enqueue(deferred(insertCommit(record(tenant, 'p-6')))),
    ]);
    expect(level()).toBe(NORMAL);
    // A write outside the queue (truncation) first returns to the configured level.
    queue.useConfiguredLevel();
    expect(level()).toBe(FULL);
    await queue.drained();
    db.close();
  });

  it('leaves a store configured NORMAL at NORMAL whatever the commits ask', async () => {
    const { db, queue, level } = openQueue('normal', 'normal');
    const tenant = freshTenant('level-normal');
    await queue.enqueue(insertCommit(record(tenant, 'p-1')));
    expect(level()).toBe(NORMAL);
    await queue.enqueue(deferred(insertCommit(record(tenant, 'p-2'))));
    expect(level()).toBe(NORMAL);
    await queue.drained();
    db.close();
  });
});

describe('SQLite group commit: a batch of one commit runs without a savepoint (decision 132)', () => {
  it('rolls a lone refused commit back whole and keeps committing after it', async () => {
    const { db, queue } = openQueue('lone-refused', 'full');
    const tenant = freshTenant('lone-refused');
    const first = await queue.enqueue(insertCommit(record(tenant, 'p-1')));
    expect(first.kind).toBe('committed');
    // The same id again: refused, and its event never reaches the chain.
    const again = await queue.enqueue(insertCommit(record(tenant, 'p-1', { revision: 1 })));
    expect(again.kind).not.toBe('committed');
    expect(db.inTransaction).toBe(false);
    const next = await queue.enqueue(insertCommit(record(tenant, 'p-2')));
    expect(next.kind).toBe('committed');
    const events = db
      .prepare('SELECT sequence, proposal FROM ledger_events WHERE tenant = ? ORDER BY sequence')
      .all(tenant);
    expect(events).toEqual([
      { sequence: 1, proposal: 'p-1' },
      { sequence: 2, proposal: 'p-2' },
    ]);
    await queue.drained();
    db.close();
  });

  it('rolls back a lone commit that fails mid-way: its proposal row goes with it', async () => {
    const { db, queue } = openQueue('lone-failed', 'full');
    const tenant = freshTenant('lone-failed');
    // The event insert fails after the proposal row was written in the same transaction.
    db.exec(`CREATE TRIGGER fail_boom BEFORE INSERT ON ledger_events WHEN NEW.proposal = 'boom'
      BEGIN SELECT RAISE(ABORT, 'boom refused'); END`);
    await expect(queue.enqueue(insertCommit(record(tenant, 'boom')))).rejects.toThrow();
    expect(db.inTransaction).toBe(false);
    const row = db
      .prepare('SELECT 1 AS present FROM proposals WHERE tenant = ? AND proposal = ?')
      .get(tenant, 'boom');
    expect(row).toBeUndefined();
    const next = await queue.enqueue(insertCommit(record(tenant, 'p-after')));
    expect(next.kind).toBe('committed');
    // Beside a commit that fails, the others of a larger batch still commit (savepoints).
    const mixed = await Promise.allSettled([
      queue.enqueue(insertCommit(record(tenant, 'boom'))),
      queue.enqueue(insertCommit(record(tenant, 'p-beside'))),
    ]);
    expect(mixed.map((outcome) => outcome.status)).toEqual(['rejected', 'fulfilled']);
    expect(
      db.prepare('SELECT proposal FROM proposals WHERE tenant = ? ORDER BY proposal').all(tenant),
    ).toEqual([{ proposal: 'p-after' }, { proposal: 'p-beside' }]);
    await queue.drained();
    db.close();
  });
});
