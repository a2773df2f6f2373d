/**
 * Schema 4 (decision 127) rebuilds `proposals` and `ledger_events` as rowid tables. A file the
 * guard wrote under schema 3 opens with the new code: every proposal, claim, sealed part and
 * event reads back as it was, the chain verifies and continues from its head, an effect run
 * before the migration is replayed (never executed twice), and new actions run on the file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createDevelopmentKeyRing,
  createGuard,
  type GuardStore,
  type ProposalRecord,
} from '../../src/index.js';
import { SQLITE_MIGRATIONS } from '../../src/stores/sqlite/sqlite-migrations.js';
import { createSqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import { createFakeProvider, refundAction, refundArgs } from '../support/guard-harness.js';

const directory = mkdtempSync(join(tmpdir(), 'sideguard-sqlite-rowid-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const TENANTS = ['tenant-rowid-a', 'tenant-rowid-b'];
const principal = 'agent-svc';
/** The tables schema 3 holds, copied row for row into the old-layout file. */
const TABLES = [
  'proposals',
  'proposal_envelopes',
  'effect_claims',
  'authority_evidence',
  'ledger_events',
  'ledger_heads',
  'sideguard_maintenance',
];

const keyRing = createDevelopmentKeyRing('sideguard-tests');
const provider = createFakeProvider();
const refund = refundAction(provider);
const direct = refundAction(provider, { resolve: undefined } as never);

/** Writes real guard history: verified runs (one and two commits, a lost answer), one awaiting approval. */
async function writeHistory(store: GuardStore): Promise<string[]> {
  const guard = createGuard({ store, keyRing });
  const proposals: string[] = [];
  for (const tenant of TENANTS) {
    for (let index = 0; index < 6; index += 1) {
      const action = index % 2 === 0 ? direct : refund;
      if (index === 4) provider.steps.push('lost_after_write');
      const input = refundArgs({ orderId: `ord_${tenant}_${index}`, requestId: `r-${index}` });
      const result = await guard.run(action, { tenant, input, principal });
      proposals.push(result.proposal);
    }
    const pending = await guard.run(refund, {
      tenant,
      input: refundArgs({ orderId: `ord_${tenant}_big`, amount: '500.00' }),
      principal,
    });
    expect(pending.outcome).toBe('authority_pending');
    proposals.push(pending.proposal);
  }
  return proposals;
}

/** A file in the schema-3 layout holding exactly the rows of `source`. */
function copyToSchema3(source: string, target: string): void {
  const db = new Database(target);
  try {
    db.pragma('journal_mode = WAL');
    db.exec(`CREATE TABLE sideguard_schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL)`);
    for (const migration of SQLITE_MIGRATIONS.slice(0, 3)) {
      db.exec(migration.sql);
      db.prepare('INSERT INTO sideguard_schema_migrations VALUES (?, ?, 0)').run(
        migration.version,
        migration.name,
      );
    }
    db.prepare('ATTACH DATABASE ? AS source').run(source);
    for (const table of TABLES) {
      const columns = (db.pragma(`main.table_info(${table})`) as { name: string }[])
        .map((column) => column.name)
        .join(', ');
      db.exec(`INSERT INTO main.${table} (${columns}) SELECT ${columns} FROM source.${table}`);
    }
    db.exec('DETACH DATABASE source');
  } finally {
    db.close();
  }
}

/** How each table is declared: `WITHOUT ROWID` or not. */
function layout(path: string): Record<string, boolean> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN ('proposals', 'ledger_events')`,
      )
      .all() as { name: string; sql: string }[];
    return Object.fromEntries(rows.map((row) => [row.name, /WITHOUT ROWID/i.test(row.sql)]));
  } finally {
    db.close();
  }
}

/** Everything the guard reads of a tenant, to compare before and after the migration. */
async function contents(store: GuardStore, tenant: string, proposals: readonly string[]) {
  const own: (ProposalRecord | undefined)[] = [];
  const histories = [];
  for (const proposal of proposals) {
    const record = await store.getProposal(tenant, proposal);
    if (record === undefined) continue;
    own.push(record);
    histories.push(await store.readLedger({ tenant, proposal }));
  }
  const claims = await Promise.all(
    own.map((record) => store.getEffectClaim(tenant, (record as ProposalRecord).effectScope)),
  );
  return {
    proposals: own,
    histories,
    claims,
    ledger: await store.readLedger({ tenant }),
    head: await store.ledgerHead(tenant),
    byEffect: await store.listProposalsByEffect(tenant, (own[0] as ProposalRecord).effectScope),
    due: await store.listDue({
      tenant,
      dueAtOrBeforeMs: Number.MAX_SAFE_INTEGER,
      statuses: ['verification_pending', 'executing', 'awaiting_authority'],
    }),
    listed: await store.listProposals({ statuses: ['awaiting_authority', 'verified'], tenant }),
  };
}

describe('SQLite schema 4: proposals and ledger events as rowid tables', () => {
  it('opens a schema-3 file the guard wrote: everything reads back, the chain verifies and continues, and a done effect is replayed', async () => {
    const written = join(directory, 'written.db');
    const old = join(directory, 'schema3.db');
    const store = createSqliteStore({ path: written });
    const proposals = await writeHistory(store);
    const before = await Promise.all(TENANTS.map((tenant) => contents(store, tenant, proposals)));
    await store.close();
    copyToSchema3(written, old);
    expect(layout(old)).toEqual({ proposals: true, ledger_events: true });

    const migrated = createSqliteStore({ path: old });
    try {
      expect(layout(old)).toEqual({ proposals: false, ledger_events: false });
      const after = await Promise.all(
        TENANTS.map((tenant) => contents(migrated, tenant, proposals)),
      );
      expect(after).toEqual(before);
      for (const state of after) {
        expect(state.ledger.length).toBeGreaterThan(20);
        expect(state.due.map((record) => record.status)).toContain('awaiting_authority');
        expect(state.listed.length).toBe(7);
      }

      const guard = createGuard({ store: migrated, keyRing });
      const executions = provider.calls.execute;
      for (const [index, tenant] of TENANTS.entries()) {
        expect(await guard.verifyLedger({ tenant })).toMatchObject({ kind: 'valid' });
        const again = await guard.run(direct, {
          tenant,
          input: refundArgs({ orderId: `ord_${tenant}_0`, requestId: 'r-after' }),
          principal,
        });
        expect(again.outcome).toBe('replayed');
        const fresh = await guard.run(direct, {
          tenant,
          input: refundArgs({ orderId: `ord_${tenant}_new` }),
          principal,
        });
        expect(fresh.outcome).toBe('verified');
        const head = await migrated.ledgerHead(tenant);
        expect(head?.sequence).toBeGreaterThan(before[index]?.head?.sequence ?? 0);
        expect(await guard.verifyLedger({ tenant })).toMatchObject({
          kind: 'valid',
          head: { sequence: head?.sequence, hash: head?.hash },
        });
      }
      expect(provider.calls.execute).toBe(executions + TENANTS.length);
    } finally {
      await migrated.close();
    }
  });
});
