/**
 * `sideguard ledger head`: an auditor anchors a chain head outside the store, and later proves
 * with `ledger verify --expect-head` that the chain up to it was not rewritten — even by someone
 * who rehashed every event after editing one (which a chain alone cannot show).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hashLedgerEvent, type LedgerEvent } from '../../src/core/ledger.js';
import { createPostgresStore } from '../../src/stores/postgres/postgres-store.js';
import { createSqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import { runCli } from '../support/cli.js';
import { runRefunds } from '../support/ledger-refunds.js';
import { freshTestSchema, postgresTestUrl } from '../support/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'sideguard-ledger-head-'));
const url = await postgresTestUrl();
const schema = url === undefined ? undefined : freshTestSchema(url, 'core_b_ledger_head');
afterAll(async () => {
  await schema?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, events: readonly LedgerEvent[]): string => {
  const file = join(dir, name);
  writeFileSync(file, events.map((event) => `${JSON.stringify(event)}\n`).join(''));
  return file;
};

/** What someone with write access to the store can do: edit an event and rehash the chain. */
function rewritten(events: readonly LedgerEvent[], index: number): LedgerEvent[] {
  const result: LedgerEvent[] = [];
  for (const [position, event] of events.entries()) {
    const { hash: _old, ...rest } = {
      ...event,
      previousHash: result.at(-1)?.hash ?? event.previousHash,
      data: position === index ? { ...event.data, reasonCode: 'rewritten' } : event.data,
    };
    result.push({ ...rest, hash: hashLedgerEvent(rest) });
  }
  return result;
}

describe('sideguard ledger head', () => {
  it('prints the head as JSON and anchors a later export against a rewritten chain (SQLite)', async () => {
    const path = join(dir, 'anchored.db');
    const store = createSqliteStore({ path });
    const guard = await runRefunds(store, 'acme', 0, 2);

    const printed = runCli(['ledger', 'head', '--store', path, '--tenant', 'acme']);
    expect(printed.stderr).toBe('');
    expect(printed.status).toBe(0);
    const anchor = JSON.parse(printed.stdout) as Record<string, unknown>;
    const events = await store.readLedger({ tenant: 'acme' });
    expect(anchor).toEqual({
      tenant: 'acme',
      sequence: events.at(-1)?.sequence,
      hash: events.at(-1)?.hash,
      at: events.at(-1)?.at,
    });
    const expectHead = `acme@${anchor.sequence}:${anchor.hash}`;

    // The ledger grows after the anchor; the export is cut at the anchored sequence to check it.
    await runRefunds(store, 'acme', 2, 1);
    const exported = (await guard.exportLedger({ tenant: 'acme' }))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as LedgerEvent);
    const upToAnchor = exported.filter((event) => event.sequence <= Number(anchor.sequence));
    const intact = runCli([
      'ledger',
      'verify',
      write('intact.jsonl', upToAnchor),
      '--expect-head',
      expectHead,
    ]);
    expect(intact.status).toBe(0);

    // A rewritten chain verifies on its own, but not against the anchor.
    const forged = write('forged.jsonl', rewritten(upToAnchor, 3));
    expect(runCli(['ledger', 'verify', forged]).status).toBe(0);
    const anchored = runCli(['ledger', 'verify', forged, '--expect-head', expectHead]);
    expect(anchored.status).toBe(1);
    expect(anchored.stdout).toMatch(/head_mismatch/);
    await store.close();
  });

  it.runIf(url !== undefined)('prints the head of a PostgreSQL store', async () => {
    const store = await createPostgresStore({ connectionString: url!, schema: schema!.schema });
    await runRefunds(store, 'globex', 0, 1);
    const head = await store.ledgerHead('globex');
    await store.close();
    const printed = runCli([
      'ledger',
      'head',
      '--store',
      url!,
      '--schema',
      schema!.schema,
      '--tenant',
      'globex',
    ]);
    expect(printed.status).toBe(0);
    expect(JSON.parse(printed.stdout)).toMatchObject({ tenant: 'globex', ...head });
  });

  it('exits 2 for a tenant without a ledger, a missing file (left uncreated) and a non-NFC tenant', async () => {
    const path = join(dir, 'small.db');
    const store = createSqliteStore({ path });
    await runRefunds(store, 'acme', 0, 1);
    await store.close();

    const unknown = runCli(['ledger', 'head', '--store', path, '--tenant', 'initech']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/tenant "initech" has no ledger in this store/);

    const missing = join(dir, 'missing.db');
    const absent = runCli(['ledger', 'head', '--store', missing, '--tenant', 'acme']);
    expect(absent.status).toBe(2);
    expect(absent.stderr).toMatch(/no such SQLite file/);
    expect(existsSync(missing)).toBe(false);

    const nfd = runCli(['ledger', 'head', '--store', path, '--tenant', 'acme\u0301']);
    expect(nfd.status).toBe(2);
    expect(nfd.stderr).toMatch(/NFC/);
  });
});
