/**
 * What a SQLite commit writes, page by page: an update that keeps a proposal's effect scope,
 * creation time and action type leaves `proposals_by_effect` untouched (decision 127); one that
 * changes them moves the proposal in that index.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  freshTenant,
  insertCommit,
  record,
  updateCommit,
} from '../conformance/conformance-fixtures.js';
import { openDatabase } from './sqlite-file.js';
import { createSqliteCommitQueue } from './sqlite-group-commit.js';
import { prepareStatements } from './sqlite-statements.js';

const directory = mkdtempSync(join(tmpdir(), 'sideguard-sqlite-commit-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;

/** The page numbers of the WAL's valid frames, in order. */
function walPages(path: string): number[] {
  const wal = readFileSync(`${path}-wal`);
  const pageSize = wal.readUInt32BE(8);
  const salts = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  const pages: number[] = [];
  for (let at = WAL_HEADER_BYTES; at + FRAME_HEADER_BYTES + pageSize <= wal.length; ) {
    if (wal.readUInt32BE(at + 8) !== salts[0] || wal.readUInt32BE(at + 12) !== salts[1]) break;
    pages.push(wal.readUInt32BE(at));
    at += FRAME_HEADER_BYTES + pageSize;
  }
  return pages;
}

/** Which table or index each page belongs to. */
function pageOwners(db: Database.Database): Map<number, string> {
  const rows = db.prepare('SELECT name, pageno FROM dbstat').all() as {
    name: string;
    pageno: number;
  }[];
  return new Map(rows.map((row) => [row.pageno, row.name]));
}

function open(name: string) {
  const path = join(directory, `${name}.db`);
  const db = openDatabase(path, { synchronous: 'full', busyTimeoutMs: 1000, checkOnOpen: 'none' });
  const statements = prepareStatements(db);
  const queue = createSqliteCommitQueue(db, { statements, where: path }, path, 'full');
  /** The b-trees the commits made by `body` wrote pages of. */
  const written = async (body: () => Promise<unknown>): Promise<Set<string>> => {
    const before = walPages(path).length;
    await body();
    const owners = pageOwners(db);
    return new Set(
      walPages(path)
        .slice(before)
        .map((page) => owners.get(page) ?? `page ${page}`),
    );
  };
  return { db, queue, statements, written };
}

describe('SQLite commit: pages an update writes', () => {
  it('an update that keeps the effect scope writes no page of proposals_by_effect', async () => {
    const { db, queue, written } = open('keeps');
    const tenant = freshTenant('pages');
    const first = record(tenant, 'p-1');
    // Open the WAL with a first commit, so the update's frames follow in the same WAL.
    await queue.enqueue(insertCommit(record(tenant, 'p-0')));
    const inserted = await written(() => queue.enqueue(insertCommit(first)));
    expect(inserted).toContain('proposals_by_effect');
    const updated = await written(() =>
      queue.enqueue(updateCommit(first, { status: 'executing' })),
    );
    expect(updated).toContain('proposals');
    expect(updated).toContain('effect_claims');
    expect(updated).not.toContain('proposals_by_effect');
    await queue.drained();
    db.close();
  });

  it('an update that changes the effect scope moves the proposal to the new scope', async () => {
    const { db, queue, statements } = open('moves');
    const tenant = freshTenant('moves');
    const first = record(tenant, 'p-1');
    await queue.enqueue(insertCommit(first));
    const moved = await queue.enqueue(
      updateCommit(first, { status: 'executing', effectScope: 'support.refund@1#sek-other' }),
    );
    expect(moved.kind).toBe('committed');
    const listed = (scope: string) =>
      statements.listByEffect.all(tenant, scope, 10).map((row) => [row.proposal, row.revision]);
    expect(listed('support.refund@1#sek-other')).toEqual([['p-1', 2]]);
    expect(listed(first.effectScope)).toEqual([]);
    await queue.drained();
    db.close();
  });
});
