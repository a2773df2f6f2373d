/**
 * `listProposals` (the approvals console's queues): ordered by expiry, then tenant, then
 * proposal by code point; filtered by statuses, tenant and action type; paged by keyset; the
 * limit bounded; bad input refused with `store_query_invalid`. Queries across tenants also
 * filter by an action type only the test uses, since stores may share data between tests.
 */
import { strict as assert } from 'node:assert';
import { ContractViolationError } from '../../core/errors.js';
import type { GuardStore, ProposalListQuery, ProposalRecord } from '../../core/store.js';
import type { ProposalStatus } from '../../core/vocabulary.js';
import {
  BASE_MS,
  type ConformanceTest,
  freshTenant,
  mustCommit,
  record,
  seed,
  updateCommit,
} from './conformance-fixtures.js';

/** An action type no other test (or run) uses. */
function freshActionType(label: string): string {
  return `conformance.${freshTenant(label).replaceAll('-', '_')}@1`;
}

const ids = (records: readonly ProposalRecord[]) =>
  records.map((value) => `${value.tenant.slice(-2)}/${value.proposal}`);

async function expectRefused(store: GuardStore, query: unknown, mentions: RegExp): Promise<void> {
  const error = await store.listProposals(query as ProposalListQuery).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof ContractViolationError, `expected a refusal, got ${String(error)}`);
  assert.strictEqual(error.code, 'store_query_invalid');
  assert.match(error.message, mentions);
}

/** Registers the cases of this concern. */
export function registerListingCases(test: ConformanceTest): void {
  test('listProposals orders by expiry, then tenant, then proposal by code point, across tenants', async (store) => {
    const actionType = freshActionType('list-order');
    const first = `${freshTenant('list-order')}-a`;
    const second = `${first.slice(0, -2)}-b`;
    const rows: Array<[string, string, number]> = [
      [second, 'p-z', BASE_MS + 20],
      [first, 'p-\u00e9', BASE_MS + 20],
      [first, 'p-z', BASE_MS + 20],
      [first, 'p-\u{1F600}', BASE_MS + 20],
      [second, 'p-a', BASE_MS + 10],
      [first, 'p-late', BASE_MS + 30],
      [first, 'p-\uFFFF', BASE_MS + 20],
    ];
    for (const [tenant, id, expiresAtMs] of rows) {
      await seed(store, record(tenant, id, { actionType, expiresAtMs }));
    }
    const listed = await store.listProposals({ statuses: ['authorized'], actionType });
    assert.deepStrictEqual(ids(listed), [
      '-b/p-a',
      '-a/p-z',
      '-a/p-\u00e9',
      '-a/p-\uFFFF',
      '-a/p-\u{1F600}',
      '-b/p-z',
      '-a/p-late',
    ]);
    assert.deepStrictEqual(listed[0], await store.getProposal(second, 'p-a'));
  });

  test('listProposals filters by statuses, tenant and action type; an empty status list matches nothing', async (store) => {
    const actionType = freshActionType('list-filter');
    const other = freshActionType('list-filter-other');
    const tenant = freshTenant('list-filter');
    const elsewhere = freshTenant('list-filter-elsewhere');
    const rows: Array<[string, string, ProposalStatus, string]> = [
      [tenant, 'p-1', 'awaiting_authority', actionType],
      [tenant, 'p-2', 'authorized', actionType],
      [tenant, 'p-3', 'blocked', actionType],
      [tenant, 'p-4', 'awaiting_authority', other],
      [elsewhere, 'p-5', 'awaiting_authority', actionType],
    ];
    for (const [owner, id, status, type] of rows) {
      await seed(store, record(owner, id, { status, actionType: type, expiresAtMs: BASE_MS + 1 }));
    }
    const list = async (query: Omit<ProposalListQuery, 'actionType'>, type = actionType) =>
      (await store.listProposals({ ...query, actionType: type })).map((value) => value.proposal);
    assert.deepStrictEqual(await list({ statuses: ['awaiting_authority'] }), ['p-1', 'p-5']);
    assert.deepStrictEqual(await list({ statuses: ['awaiting_authority'], tenant }), ['p-1']);
    assert.deepStrictEqual(await list({ statuses: ['authorized', 'blocked'], tenant }), [
      'p-2',
      'p-3',
    ]);
    assert.deepStrictEqual(await list({ statuses: ['awaiting_authority'], tenant }, other), [
      'p-4',
    ]);
    assert.deepStrictEqual(
      (await store.listProposals({ statuses: ['awaiting_authority'], tenant })).map(
        (value) => value.proposal,
      ),
      ['p-1', 'p-4'],
    );
    assert.deepStrictEqual(await list({ statuses: [] }), []);
    assert.deepStrictEqual(await list({ statuses: ['verified'] }), []);
    // A proposal that moved on leaves the queue.
    const moved = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    await mustCommit(store, updateCommit(moved, { status: 'denied' }));
    assert.deepStrictEqual(await list({ statuses: ['awaiting_authority'], tenant }), []);
  });

  test('listProposals pages by keyset: every proposal once, in order, ties across tenants included', async (store) => {
    const actionType = freshActionType('list-page');
    const tenants = [`${freshTenant('list-page')}-a`, `${freshTenant('list-page')}-b`];
    const expected: ProposalRecord[] = [];
    await Promise.all(
      Array.from({ length: 23 }, async (_, index) => {
        const value = record(tenants[index % 2] as string, `p-${String(index).padStart(2, '0')}`, {
          actionType,
          status: index % 3 === 0 ? 'awaiting_authority' : 'authorized',
          expiresAtMs: BASE_MS + Math.floor(index / 4),
        });
        expected.push(await seed(store, value));
      }),
    );
    expected.sort(
      (a, b) =>
        a.expiresAtMs - b.expiresAtMs ||
        (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0) ||
        (a.proposal < b.proposal ? -1 : 1),
    );
    const pages: ProposalRecord[][] = [];
    let after: ProposalListQuery['after'];
    for (let guard = 0; guard < 20; guard += 1) {
      const page = await store.listProposals({
        statuses: ['authorized', 'awaiting_authority'],
        actionType,
        limit: 5,
        ...(after === undefined ? {} : { after }),
      });
      if (page.length === 0) break;
      pages.push([...page]);
      const last = page.at(-1) as ProposalRecord;
      after = { expiresAtMs: last.expiresAtMs, tenant: last.tenant, proposal: last.proposal };
    }
    assert.deepStrictEqual(
      pages.map((page) => page.length),
      [5, 5, 5, 5, 3],
    );
    assert.deepStrictEqual(ids(pages.flat()), ids(expected));
    assert.deepStrictEqual(pages.flat(), expected);
  });

  test('listProposals returns 100 by default and at most the limit, which must be 1 to 1000', async (store) => {
    const actionType = freshActionType('list-limit');
    const tenant = freshTenant('list-limit');
    await Promise.all(
      Array.from({ length: 102 }, (_, index) =>
        seed(
          store,
          record(tenant, `p-${String(index).padStart(3, '0')}`, {
            actionType,
            expiresAtMs: BASE_MS + index,
          }),
        ),
      ),
    );
    const count = async (limit?: number) =>
      (
        await store.listProposals({
          statuses: ['authorized'],
          actionType,
          ...(limit === undefined ? {} : { limit }),
        })
      ).length;
    assert.strictEqual(await count(), 100);
    assert.strictEqual(await count(1), 1);
    assert.strictEqual(await count(1000), 102);
    for (const limit of [0, -1, 1001, 2.5, Number.NaN]) {
      await expectRefused(store, { statuses: ['authorized'], limit }, /limit/);
    }
  });

  test('listProposals refuses a malformed query with store_query_invalid and reads nothing', async (store) => {
    const bad: Array<[unknown, RegExp]> = [
      [{ statuses: ['pending'] }, /"pending" is not a proposal status/],
      [{ statuses: 'authorized' }, /statuses/],
      [{}, /statuses/],
      [null, /object/],
      [{ statuses: ['authorized'], tenant: '' }, /tenant/],
      [{ statuses: ['authorized'], actionType: 7 }, /actionType/],
      [{ statuses: ['authorized'], after: { tenant: 't', proposal: 'p' } }, /expiresAtMs/],
      [
        { statuses: ['authorized'], after: { expiresAtMs: 1.5, tenant: 't', proposal: 'p' } },
        /expiresAtMs/,
      ],
      [{ statuses: ['authorized'], after: { expiresAtMs: 1, tenant: 't' } }, /after\.proposal/],
      [{ statuses: ['authorized'], after: 'p-1' }, /after/],
    ];
    for (const [query, mentions] of bad) await expectRefused(store, query, mentions);
  });
}
