/**
 * Erasure leaves nothing recoverable in the SQLite files (issue 8, window 8b; decision 025):
 * after `erase`, the raw bytes of the database file and its WAL hold neither the ciphertext
 * nor the wrapped data key of the erased snapshot, as stored (base64url) or raw. Each test
 * first shows the same search finds them before the erasure, so a pass is not a blind search.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { SealedEnvelope } from '../../src/core/envelope.js';
import type { ProposalRecord } from '../../src/core/store.js';
import {
  SQLITE_MIGRATIONS,
  SQLITE_SCHEMA_VERSION,
} from '../../src/stores/sqlite/sqlite-migrations.js';
import { createSqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import {
  addOutput,
  eraseProposal,
  expectEachFound,
  expectSnapshots,
  foundInFiles,
  needles,
  randomEnvelope,
  seedWithSnapshots,
} from '../support/erasure.js';
import { sampleProposal } from '../support/store-records.js';

const directory = mkdtempSync(join(tmpdir(), 'sideguard-sqlite-erasure-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const files = (path: string) => [path, `${path}-wal`];
const TENANT = 'tenant-erasure';

describe('SQLite erasure', () => {
  it('leaves neither the ciphertexts nor the wrapped keys (snapshot and output) in the database file or the WAL', async () => {
    const path = join(directory, 'erase.db');
    const store = createSqliteStore({ path });
    const records = await seedWithSnapshots(
      store,
      TENANT,
      Array.from({ length: 40 }, (_, index) => (index < 2 ? 24_000 : 96)),
    );
    // Revisions rewrite records (and their pages) around the sealed parts, and add outputs.
    for (const [index, record] of records.slice(0, 20).entries()) {
      records[index] = await addOutput(store, record);
    }
    const victims = [records[0], records[7], records[33]] as ProposalRecord[];
    const searched = await expectEachFound(victims, (own) => foundInFiles(files(path), own).length);

    for (const victim of victims) await eraseProposal(store, victim);
    expect(foundInFiles(files(path), searched)).toEqual([]);
    await expectSnapshots(store, records, victims);
    await store.close();
    expect(foundInFiles(files(path), searched)).toEqual([]);
  });

  it('while another connection reads, the purge says it is incomplete; once it stops, the purge completes', async () => {
    const path = join(directory, 'reader.db');
    const store = createSqliteStore({ path, busyTimeoutMs: 100 });
    const [victim, ...others] = await seedWithSnapshots(store, TENANT, [96, 96, 96, 96, 96]);
    const searched = needles((victim as ProposalRecord).snapshot as SealedEnvelope);
    const reader = new Database(path, { readonly: true });
    try {
      reader.prepare('BEGIN').run();
      reader.prepare('SELECT count(*) FROM proposals').get();
      await eraseProposal(store, victim as ProposalRecord);
      // The reader's snapshot still needs the old frames: they stay in the WAL for now.
      expect(foundInFiles([`${path}-wal`], searched).length).toBeGreaterThan(0);
      expect((await store.purgeErased()).complete).toBe(false);
      reader.prepare('COMMIT').run();
      const purge = await store.purgeErased();
      expect(purge).toMatchObject({ complete: true });
      expect(foundInFiles(files(path), searched)).toEqual([]);
      await expectSnapshots(
        store,
        [victim as ProposalRecord, ...others],
        [victim as ProposalRecord],
      );
    } finally {
      reader.close();
      await store.close();
    }
  });

  it('migrates a schema-1 file (snapshots and outputs inside the records): they read back, and an erased one leaves no trace', async () => {
    const path = join(directory, 'v1.db');
    const records = Array.from({ length: 12 }, (_, index) =>
      sampleProposal(TENANT, `old-${index}`, {
        snapshot: randomEnvelope(index === 3 ? 9_000 : 80),
        // Records written before schema 2 may hold a sealed output too.
        ...(index % 2 === 0 ? { output: randomEnvelope(150) } : {}),
      }),
    );
    const v1 = new Database(path);
    v1.pragma('journal_mode = WAL');
    v1.exec((SQLITE_MIGRATIONS[0] as { sql: string }).sql);
    v1.exec(`CREATE TABLE sideguard_schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL)`);
    v1.prepare('INSERT INTO sideguard_schema_migrations VALUES (1, ?, 0)').run('v1');
    const insert = v1.prepare(`INSERT INTO proposals
      (tenant, proposal, revision, status, effect_scope, created_at_ms, due_at_ms, record)
      VALUES (?, ?, 1, 'authorized', ?, ?, NULL, ?)`);
    for (const record of records) {
      insert.run(
        TENANT,
        record.proposal,
        record.effectScope,
        record.createdAtMs,
        JSON.stringify(record),
      );
    }
    v1.close();
    const victims = [records[3], records[8]] as ProposalRecord[];
    const searched = await expectEachFound(victims, (own) => foundInFiles(files(path), own).length);

    const store = createSqliteStore({ path });
    try {
      const version = new Database(path, { readonly: true });
      const row = version
        .prepare('SELECT max(version) AS v FROM sideguard_schema_migrations')
        .get();
      version.close();
      expect(row).toEqual({ v: SQLITE_SCHEMA_VERSION });
      await expectSnapshots(store, records, []);
      // The listing columns (schema 3) were filled from the old records.
      const listed = await store.listProposals({ statuses: ['authorized'], tenant: TENANT });
      expect(listed.map((value) => value.proposal)).toEqual(
        records.map((value) => value.proposal).sort(),
      );
      for (const victim of victims) await eraseProposal(store, victim);
      expect(foundInFiles(files(path), searched)).toEqual([]);
      await expectSnapshots(store, records, victims);
    } finally {
      await store.close();
    }
    expect(foundInFiles(files(path), searched)).toEqual([]);
  });
});
