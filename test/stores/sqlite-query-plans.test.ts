/**
 * Cost must not grow with history (issue 14): every statement the SQLite store prepares is served
 * by an index, on a file that holds other proposals' and other tenants' history. SQLite's planner
 * has no statistics here, so a bad plan shows on any file; a real one showed it first: reading one
 * proposal's ledger events walked the tenant's whole chain by primary key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareStatements } from '../../src/stores/sqlite/sqlite-statements.js';
import { createSqliteStore } from '../../src/stores/sqlite/sqlite-store.js';
import { sampleProposal } from '../support/store-records.js';

const directory = mkdtempSync(join(tmpdir(), 'sideguard-sqlite-plans-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** Every `?` or `@name` parameter bound to null: the plan does not depend on the values. */
function nullParameters(source: string): unknown[] {
  const named = [...source.matchAll(/@(\w+)/g)].map((match) => match[1] as string);
  if (named.length > 0) return [Object.fromEntries(named.map((name) => [name, null]))];
  return Array.from({ length: source.split('?').length - 1 }, () => null);
}

async function fileWithHistory(path: string): Promise<void> {
  const store = createSqliteStore({ path });
  for (const tenant of ['tenant-a', 'tenant-b']) {
    for (let index = 0; index < 30; index += 1) {
      const proposal = `prop-${index}`;
      const written = await store.commit({
        tenant,
        proposal: { kind: 'insert', record: sampleProposal(tenant, proposal) },
        events: [0, 1, 2].map((step) => ({
          proposal,
          type: 'policy_decided' as const,
          at: new Date(1_700_000_000_000 + step).toISOString(),
          actionType: 'support.refund@1',
          status: null,
          revision: null,
          data: { step },
        })),
      });
      expect(written.kind).toBe('committed');
    }
  }
  await store.close();
}

describe('SQLite query plans', () => {
  it('serves every read, update and delete from an index, and one proposal’s events from the by-proposal index', async () => {
    const path = join(directory, 'plans.db');
    await fileWithHistory(path);
    const db = new Database(path, { readonly: true });
    try {
      const plans = new Map<string, string>();
      for (const [name, statement] of Object.entries(prepareStatements(db))) {
        const source = statement.source.trim();
        if (!/^(SELECT|UPDATE|DELETE)\b/i.test(source)) continue;
        const rows = db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(...nullParameters(source)) as {
          detail: string;
        }[];
        plans.set(name, rows.map((row) => row.detail).join(' | '));
      }
      expect(plans.size).toBeGreaterThan(10);
      for (const [name, plan] of plans) {
        // json_each is the status list, not a table.
        expect({ name, plan: plan.replace(/SCAN json_each[^|]*/g, '') }).not.toMatchObject({
          plan: expect.stringMatching(/\bSCAN\b/),
        });
      }
      expect(plans.get('readLedgerOfProposal')).toContain('ledger_events_by_proposal');
    } finally {
      db.close();
    }
  });
});
