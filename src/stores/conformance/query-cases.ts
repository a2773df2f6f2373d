/** Queries: proposals by effect and proposals due. */
import { strict as assert } from 'node:assert';
import type { ProposalRecord } from '../../core/store.js';
import type { ProposalStatus } from '../../core/vocabulary.js';
import {
  BASE_MS,
  type ConformanceTest,
  freshTenant,
  record,
  seed,
  walk,
} from './conformance-fixtures.js';

/** Registers the cases of this concern. */
export function registerQueryCases(test: ConformanceTest): void {
  test('listProposalsByEffect returns newest first, ties broken by id descending, within the limit', async (store) => {
    const tenant = freshTenant('by-effect');
    const shared = { semanticEffectKey: 'sek-shared' };
    const created: Array<[string, number]> = [
      ['p-a', BASE_MS + 10],
      ['p-b', BASE_MS + 30],
      ['p-c', BASE_MS + 20],
      ['p-d', BASE_MS + 30],
    ];
    for (const [id, createdAtMs] of created) {
      await seed(store, record(tenant, id, { ...shared, createdAtMs }));
    }
    await seed(store, record(tenant, 'p-other', { semanticEffectKey: 'sek-other' }));
    const scope = record(tenant, 'x', shared).effectScope;
    const ids = async (limit?: number) =>
      (await store.listProposalsByEffect(tenant, scope, limit)).map((value) => value.proposal);
    assert.deepStrictEqual(await ids(), ['p-d', 'p-b', 'p-c', 'p-a']);
    assert.deepStrictEqual(await ids(2), ['p-d', 'p-b']);
    assert.deepStrictEqual(await store.listProposalsByEffect(tenant, 'none#x'), []);
    const listed = await store.listProposalsByEffect(tenant, scope, 1);
    assert.deepStrictEqual(listed[0], await store.getProposal(tenant, 'p-d'));
  });

  test('listDue returns proposals in the given statuses due by the time, oldest due first', async (store) => {
    const tenant = freshTenant('due');
    const rows: Array<[string, ProposalStatus, number | null]> = [
      ['p-1', 'awaiting_authority', BASE_MS + 300],
      ['p-2', 'awaiting_authority', BASE_MS + 100],
      ['p-3', 'authorized', BASE_MS + 50],
      ['p-4', 'awaiting_authority', BASE_MS + 900],
      ['p-5', 'awaiting_authority', null],
      ['p-6', 'blocked', BASE_MS + 10],
    ];
    for (const [id, status, dueAtMs] of rows) {
      await seed(store, record(tenant, id, { status, dueAtMs }));
    }
    const ids = async (statuses: readonly ProposalStatus[], at: number, limit?: number) =>
      (
        await store.listDue({
          tenant,
          statuses,
          dueAtOrBeforeMs: at,
          ...(limit === undefined ? {} : { limit }),
        })
      ).map((value) => value.proposal);
    assert.deepStrictEqual(await ids(['awaiting_authority'], BASE_MS + 300), ['p-2', 'p-1']);
    assert.deepStrictEqual(await ids(['awaiting_authority', 'authorized'], BASE_MS + 300), [
      'p-3',
      'p-2',
      'p-1',
    ]);
    assert.deepStrictEqual(await ids(['awaiting_authority', 'authorized'], BASE_MS + 300, 2), [
      'p-3',
      'p-2',
    ]);
    assert.deepStrictEqual(await ids(['awaiting_authority'], BASE_MS + 99), []);
    assert.deepStrictEqual(await ids([], BASE_MS + 10_000), []);
    assert.deepStrictEqual(await ids(['verified'], BASE_MS + 10_000), []);
    const due = await store.listDue({
      tenant,
      statuses: ['blocked'],
      dueAtOrBeforeMs: BASE_MS + 10,
    });
    assert.deepStrictEqual(due, [await store.getProposal(tenant, 'p-6')]);
    const moved = await walk(store, (await store.getProposal(tenant, 'p-2')) as ProposalRecord, [
      'denied',
    ]);
    assert.strictEqual(moved.status, 'denied');
    assert.deepStrictEqual(await ids(['awaiting_authority'], BASE_MS + 300), ['p-1']);
  });
}
