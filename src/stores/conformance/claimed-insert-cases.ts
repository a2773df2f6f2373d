/**
 * `run`'s insert and claim in one commit (decision 124): a proposal may be inserted already
 * `executing` — at revision 2 and only with its own effect claim — and is then decided as the
 * insert and the claim would be, in one transaction: all of it lands or none of it.
 */
import { strict as assert } from 'node:assert';
import type { ProposalRecord } from '../../core/store.js';
import { assertInvariantError, assertValidChain } from './conformance-assert.js';
import {
  type ConformanceTest,
  claimedInsert,
  freshTenant,
  mustCommit,
  record,
  seed,
  snapshotTenant,
  updateCommit,
} from './conformance-fixtures.js';

/** Registers the cases of this concern. */
export function registerClaimedInsertCases(test: ConformanceTest): void {
  test('an insert already executing with its claim stores the proposal, the claim and both events at once', async (store) => {
    const tenant = freshTenant('claimed-insert');
    const value = record(tenant, 'p-1');
    const events = await mustCommit(store, claimedInsert(value));
    const stored = await store.getProposal(tenant, 'p-1');
    assert.strictEqual(stored?.status, 'executing');
    assert.strictEqual(stored?.revision, 2);
    assert.strictEqual((await store.getEffectClaim(tenant, value.effectScope))?.proposal, 'p-1');
    const ledger = await store.readLedger({ tenant });
    assert.deepStrictEqual(ledger, events);
    assert.deepStrictEqual(
      ledger.map((event) => event.type),
      ['idempotency_decided', 'commit_started'],
    );
    assertValidChain(ledger);
    // It goes on from revision 2 as a claimed proposal does.
    await mustCommit(store, updateCommit(stored as ProposalRecord, { status: 'verified' }));
  });

  test('an insert already executing whose effect another live proposal holds is refused whole (effect_claimed)', async (store) => {
    const tenant = freshTenant('claimed-insert-held');
    const holder = await seed(store, record(tenant, 'p-1', { semanticEffectKey: 'same' }));
    await mustCommit(store, updateCommit(holder, { status: 'executing' }));
    const before = await snapshotTenant(store, tenant, ['p-1', 'p-2']);
    const result = await store.commit(
      claimedInsert(record(tenant, 'p-2', { semanticEffectKey: 'same' })),
    );
    assert.deepStrictEqual(result, { kind: 'effect_claimed', owner: 'p-1' });
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1', 'p-2']), before);
  });

  test('an insert already executing without its claim, or not at revision 2, throws and stores nothing', async (store) => {
    const tenant = freshTenant('claimed-insert-malformed');
    const value = record(tenant, 'p-1');
    const before = await snapshotTenant(store, tenant, ['p-1']);
    await assertInvariantError(store.commit(claimedInsert(value, {})), 'illegal_transition');
    const atOne = claimedInsert(value);
    await assertInvariantError(
      store.commit({
        ...atOne,
        proposal: {
          kind: 'insert',
          record: { ...(atOne.proposal?.record as ProposalRecord), revision: 1 },
        },
      }),
      'store_commit_malformed',
    );
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
  });
}
