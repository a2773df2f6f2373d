/**
 * Several OS processes committing to one store at once (one SQLite file, one PostgreSQL schema):
 * one claim winner, one compare-and-set winner, and a gapless ledger chain that verifies.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyLedgerChain } from '../../src/core/ledger.js';
import type { GuardStore, ProposalRecord } from '../../src/core/store.js';
import { createPostgresStore } from '../../src/stores/postgres/postgres-store.js';
import { createSqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import { freshTestSchema, postgresTestUrl } from '../support/postgres.js';
import { BASE_MS, sampleProposal } from '../support/store-records.js';
import { buildWorker } from './fixtures/build-worker.js';
import type { WorkerConfig, WorkerReport } from './fixtures/commit-worker.js';

const directory = mkdtempSync(join(tmpdir(), 'sideguard-multiprocess-'));
const workerPath = buildWorker('commit-worker');
afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
  rmSync(join(workerPath, '..', '..', '..', '..'), { recursive: true, force: true });
});
const url = await postgresTestUrl();

const UPDATES_PER_CALLER = 2;

function contested(tenant: string): ProposalRecord {
  return sampleProposal(tenant, 'contested', {
    semanticEffectKey: 'sek-shared',
    expiresAtMs: BASE_MS + 3_600_000,
  });
}

function runWorkers(
  count: number,
  base: Omit<WorkerConfig, 'worker'>,
): Promise<readonly WorkerReport[]> {
  const children = Array.from({ length: count }, (_, worker) =>
    fork(workerPath, [JSON.stringify({ ...base, worker })], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const ready = children.map(
    (child) =>
      new Promise<void>((resolve, reject) => {
        child.once('message', () => resolve());
        child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
      }),
  );
  const reports = children.map(
    (child) =>
      new Promise<WorkerReport>((resolve, reject) => {
        child.on('message', (message: { report?: WorkerReport; fatal?: string }) => {
          if (message.report !== undefined) resolve(message.report);
          if (message.fatal !== undefined) reject(new Error(`worker failed: ${message.fatal}`));
        });
        child.once('exit', (code) => {
          if (code !== 0) reject(new Error(`worker exited with ${code}`));
        });
      }),
  );
  return Promise.all(ready).then(() => {
    for (const child of children) child.send('go');
    return Promise.all(reports);
  });
}

async function checkRace(
  store: GuardStore,
  tenant: string,
  reports: readonly WorkerReport[],
  callers: number,
): Promise<void> {
  expect(reports.flatMap((report) => report.errors)).toEqual([]);
  const winners = reports.flatMap((report) => report.claimWinners);
  expect(winners).toHaveLength(1);
  expect(reports.reduce((sum, report) => sum + report.claimRefusals, 0)).toBe(callers - 1);
  expect(reports.reduce((sum, report) => sum + report.casApplied, 0)).toBe(1);
  expect(reports.reduce((sum, report) => sum + report.casConflicts, 0)).toBe(callers - 1);
  const claim = await store.getEffectClaim(tenant, 'support.refund@1#sek-shared');
  expect(claim?.proposal).toBe(winners[0]);
  expect((await store.getProposal(tenant, 'contested'))?.revision).toBe(2);
  const ledger = await store.readLedger({ tenant });
  const committed = reports.reduce((sum, report) => sum + report.committedEvents, 0);
  expect(ledger).toHaveLength(committed + 1);
  expect(ledger.map((event) => event.sequence)).toEqual(ledger.map((_, index) => index + 1));
  expect(verifyLedgerChain(ledger)).toMatchObject({ kind: 'valid', count: committed + 1 });
}

async function seedContested(store: GuardStore, tenant: string): Promise<ProposalRecord> {
  const record = contested(tenant);
  const result = await store.commit({
    tenant,
    proposal: { kind: 'insert', record },
    events: [
      {
        proposal: 'contested',
        type: 'policy_decided',
        at: new Date(BASE_MS).toISOString(),
        actionType: 'support.refund@1',
        status: 'authorized',
        revision: 1,
        data: {},
      },
    ],
  });
  expect(result.kind).toBe('committed');
  return record;
}

describe('SQLite shared by several processes', () => {
  it('two processes committing to one file concurrently leave one claim winner and a chain that verifies', async () => {
    const path = join(directory, 'two.db');
    const tenant = 'tenant-two-processes';
    const store = createSqliteStore({ path });
    const seeded = await seedContested(store, tenant);
    const reports = await runWorkers(2, {
      store: { kind: 'sqlite', path },
      tenant,
      callers: 8,
      updatesPerCaller: UPDATES_PER_CALLER,
      contested: seeded,
    });
    await checkRace(store, tenant, reports, 16);
    await store.close();
  }, 60_000);

  it('4 processes × 16 callers on one file: one claim, one compare-and-set, a gapless verifying chain', async () => {
    const path = join(directory, 'four.db');
    const tenant = 'tenant-four-processes';
    const store = createSqliteStore({ path });
    const seeded = await seedContested(store, tenant);
    const reports = await runWorkers(4, {
      store: { kind: 'sqlite', path },
      tenant,
      callers: 16,
      updatesPerCaller: UPDATES_PER_CALLER,
      contested: seeded,
    });
    await checkRace(store, tenant, reports, 64);
    await store.close();
  }, 60_000);
});

describe.skipIf(url === undefined)('PostgreSQL shared by several processes', () => {
  it('4 processes × 16 callers on one schema: one claim, one compare-and-set, a gapless verifying chain', async () => {
    const run = freshTestSchema(url as string, 'multiprocess');
    const store = await createPostgresStore({
      connectionString: url as string,
      schema: run.schema,
    });
    try {
      const tenant = 'tenant-four-processes';
      const seeded = await seedContested(store, tenant);
      const reports = await runWorkers(4, {
        store: { kind: 'postgres', url: url as string, schema: run.schema },
        tenant,
        callers: 16,
        updatesPerCaller: UPDATES_PER_CALLER,
        contested: seeded,
      });
      await checkRace(store, tenant, reports, 64);
    } finally {
      await store.close();
      await run.drop();
    }
  }, 60_000);
});
