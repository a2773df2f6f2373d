/**
 * `sideguard ledger export`: an auditor exports a tenant's ledger from the store (SQLite or
 * PostgreSQL), streamed, and checks it with `ledger verify --expect-head` against a head anchored
 * with `ledger head`. The file holds exactly what the guard's own export holds; bad input exits 2.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/stores/postgres/postgres-store.js';
import { createSqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import { runCli } from '../support/cli.js';
import { runRefunds } from '../support/ledger-refunds.js';
import { freshTestSchema, postgresTestUrl } from '../support/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'sideguard-ledger-export-'));
const url = await postgresTestUrl();
const schema = url === undefined ? undefined : freshTestSchema(url, 'cli_ledger_export');
afterAll(async () => {
  await schema?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** Exports with the CLI, then verifies the file against the anchored head. */
function exportAndVerify(storeArgs: string[], tenant: string, file: string) {
  const head = runCli(['ledger', 'head', ...storeArgs, '--tenant', tenant]);
  expect(head.status).toBe(0);
  const anchor = JSON.parse(head.stdout) as { sequence: number; hash: string };
  const exported = runCli(['ledger', 'export', ...storeArgs, '--tenant', tenant, '--output', file]);
  expect(exported.status).toBe(0);
  expect(exported.stderr).toMatch(
    new RegExp(`^sideguard ledger export: ${anchor.sequence} events of tenant ${tenant} → `),
  );
  const verified = runCli([
    'ledger',
    'verify',
    file,
    '--expect-head',
    `${tenant}@${anchor.sequence}:${anchor.hash}`,
  ]);
  expect(verified.status).toBe(0);
}

describe('sideguard ledger export', () => {
  it('writes the SQLite store’s ledger as the guard exports it, and it verifies against the anchored head', async () => {
    const path = join(dir, 'store.db');
    const store = createSqliteStore({ path });
    const guard = await runRefunds(store, 'acme', 0, 3);
    const file = join(dir, 'acme.jsonl');
    exportAndVerify(['--store', path], 'acme', file);
    expect(readFileSync(file, 'utf8')).toBe(await guard.exportLedger({ tenant: 'acme' }));
    // Standard output by default.
    const printed = runCli(['ledger', 'export', '--store', path, '--tenant', 'acme']);
    expect(printed.status).toBe(0);
    expect(printed.stdout).toBe(readFileSync(file, 'utf8'));
    await store.close();
  });

  it.runIf(url !== undefined)('exports a PostgreSQL store’s ledger', async () => {
    const store = await createPostgresStore({ connectionString: url!, schema: schema!.schema });
    await runRefunds(store, 'globex', 0, 2);
    await store.close();
    exportAndVerify(
      ['--store', url!, '--schema', schema!.schema],
      'globex',
      join(dir, 'globex.jsonl'),
    );
  });

  it.each([
    [['--store', join(dir, 'missing.db'), '--tenant', 'acme'], /no such SQLite file/],
    [['--store', join(dir, 'store.db'), '--tenant', 'nobody'], /tenant "nobody" has no ledger/],
    [['--store', join(dir, 'store.db'), '--tenant', ''], /--tenant: /],
  ])('bad input exits 2 with one line: %s', (args, message) => {
    const run = runCli(['ledger', 'export', ...args]);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });
});
