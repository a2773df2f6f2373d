/**
 * The SQLite store refuses damaged or foreign files with an error that names the file, and never
 * recreates or rewrites them: corrupted pages, truncation, a newer schema version.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigurationError, StoreInvariantError } from '../../src/core/errors.js';
import { verifyLedgerChain } from '../../src/core/ledger.js';
import { SQLITE_SCHEMA_VERSION } from '../../src/stores/sqlite/sqlite-migrations.js';
import { createSqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import { BASE_MS, sampleProposal } from '../support/store-records.js';

const directory = mkdtempSync(join(tmpdir(), 'sideguard-sqlite-damage-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;
const proposal = (tenant: string, id: string) =>
  sampleProposal(tenant, id, { reasonCode: `padding-${'x'.repeat(400)}` });

/** A closed database file holding `count` proposals (spread over several pages). */
async function populatedFile(count = 60): Promise<string> {
  files += 1;
  const path = join(directory, `store-${files}.db`);
  const store = createSqliteStore({ path });
  await Promise.all(
    Array.from({ length: count }, (_, index) =>
      store.commit({
        tenant: 'tenant-a',
        proposal: { kind: 'insert', record: proposal('tenant-a', `p-${index}`) },
        events: [
          {
            proposal: `p-${index}`,
            type: 'policy_decided',
            at: new Date(BASE_MS).toISOString(),
            actionType: 'support.refund@1',
            status: 'authorized',
            revision: 1,
            data: {},
          },
        ],
      }),
    ),
  );
  await store.close();
  return path;
}

function openError(path: string): unknown {
  try {
    void createSqliteStore({ path }).close();
  } catch (error) {
    return error;
  }
  return undefined;
}

function expectRefused(path: string, before: Buffer): StoreInvariantError {
  const error = openError(path);
  expect(error).toBeInstanceOf(StoreInvariantError);
  const refused = error as StoreInvariantError;
  expect(refused.code).toBe('store_corrupted');
  expect(refused.message).toContain(path);
  expect(refused.message).toMatch(/restore the file from a backup/);
  expect(readFileSync(path).equals(before)).toBe(true);
  return refused;
}

describe('SQLite file damage', () => {
  it('a file with corrupted pages is refused with store_corrupted naming the file, and left untouched', async () => {
    const path = await populatedFile();
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16);
    for (let offset = pageSize; offset < bytes.length; offset += pageSize) {
      bytes.fill(0xa5, offset + 8, offset + 64);
    }
    writeFileSync(path, bytes);
    expectRefused(path, bytes);
  });

  it('a file whose header is overwritten is refused as not a SQLite database', async () => {
    const path = await populatedFile(5);
    const bytes = readFileSync(path);
    bytes.write('not a database!!', 0, 'latin1');
    writeFileSync(path, bytes);
    expect(expectRefused(path, bytes).message).toMatch(/SQLite header/);
  });

  it('a file truncated to zero bytes is refused, never recreated as an empty database', async () => {
    const path = await populatedFile(5);
    truncateSync(path, 0);
    expect(expectRefused(path, Buffer.alloc(0)).message).toMatch(/empty \(0 bytes\)/);
    expect(statSync(path).size).toBe(0);
  });

  it('a file truncated mid-page or at a page boundary is refused with store_corrupted', async () => {
    const midPage = await populatedFile();
    const size = statSync(midPage).size;
    truncateSync(midPage, Math.floor(size / 2) + 123);
    expectRefused(midPage, readFileSync(midPage));

    const atBoundary = await populatedFile();
    const bytes = readFileSync(atBoundary);
    const pageSize = bytes.readUInt16BE(16);
    truncateSync(atBoundary, pageSize * Math.max(2, Math.floor(bytes.length / pageSize / 2)));
    expectRefused(atBoundary, readFileSync(atBoundary));
  });

  it('a file written by a newer schema version is refused with a ConfigurationError naming the file and both versions', async () => {
    const path = await populatedFile(3);
    const raw = new Database(path);
    raw
      .prepare(
        'INSERT INTO sideguard_schema_migrations (version, name, applied_at_ms) VALUES (?, ?, ?)',
      )
      .run(SQLITE_SCHEMA_VERSION + 98, 'from the future', BASE_MS);
    raw.close();
    const before = readFileSync(path);
    const error = openError(path);
    expect(error).toBeInstanceOf(ConfigurationError);
    const refused = error as ConfigurationError;
    expect(refused.code).toBe('store_schema_newer');
    expect(refused.message).toContain(path);
    expect(refused.message).toContain(`schema version ${SQLITE_SCHEMA_VERSION + 98}`);
    expect(refused.message).toContain(`supports up to ${SQLITE_SCHEMA_VERSION}`);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('a healthy file reopens with every proposal and a verifying chain', async () => {
    const path = await populatedFile(20);
    const store = createSqliteStore({ path, synchronous: 'normal' });
    expect((await store.getProposal('tenant-a', 'p-19'))?.revision).toBe(1);
    const ledger = await store.readLedger({ tenant: 'tenant-a' });
    expect(verifyLedgerChain(ledger)).toMatchObject({ kind: 'valid', count: 20 });
    await store.close();
  });

  it('creates missing directories for a new file', async () => {
    const path = join(directory, 'nested', 'deeper', 'sideguard.db');
    const store = createSqliteStore({ path });
    expect(store.path).toBe(path);
    expect(statSync(path).size).toBeGreaterThan(0);
    await store.close();
  });
});
