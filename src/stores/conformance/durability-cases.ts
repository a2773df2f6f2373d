/**
 * The durability hint (decision 124): a `deferred` commit decides and lands exactly as a synced
 * one — visible at once to reads and to later commits, alone or in a batch beside synced ones —
 * and `ledgerHead` still names the chain's last event. What it may skip (the sync) no test can
 * see without a power cut; the SQLite and PostgreSQL tests check how each store skips it.
 */
import { strict as assert } from 'node:assert';
import type { CommitDurability, StoreCommit } from '../../core/store.js';
import { assertInvariantError, assertValidChain } from './conformance-assert.js';
import {
  type ConformanceTest,
  claimFor,
  freshTenant,
  insertCommit,
  mustCommit,
  record,
  seed,
  snapshotTenant,
  updateCommit,
} from './conformance-fixtures.js';

const deferred = (write: StoreCommit): StoreCommit => ({ ...write, durability: 'deferred' });

/** Registers the cases of this concern. */
export function registerDurabilityCases(test: ConformanceTest): void {
  test('a deferred commit lands as a synced one: read back at once, built on by the next commit, in the head', async (store) => {
    const tenant = freshTenant('deferred');
    const stored = await seed(store, record(tenant, 'p-1'));
    const claim = updateCommit(stored, { status: 'executing' }, { claim: claimFor(stored) });
    await mustCommit(store, claim);
    const executing = await store.getProposal(tenant, 'p-1');
    assert.ok(executing !== undefined);
    const outcome = updateCommit(executing, { status: 'verified', lease: null });
    await mustCommit(store, deferred(outcome));
    const verified = await store.getProposal(tenant, 'p-1');
    assert.strictEqual(verified?.status, 'verified');
    assert.strictEqual(verified?.revision, 3);
    // A later synced commit sees it (here: a stale compare-and-set from before it is refused).
    const stale = await store.commit(updateCommit(executing, { status: 'failed_unknown' }));
    assert.strictEqual(stale.kind, 'revision_conflict');
    const ledger = await store.readLedger({ tenant });
    assert.strictEqual(ledger.length, 3);
    assertValidChain(ledger);
    assert.deepStrictEqual(await store.ledgerHead(tenant), {
      sequence: 3,
      hash: ledger[2]?.hash,
    });
  });

  test('deferred and synced commits issued together each decide as alone (one refused, the others land)', async (store) => {
    const tenant = freshTenant('deferred-mixed');
    const first = await seed(store, record(tenant, 'p-1'));
    const second = await seed(store, record(tenant, 'p-2'));
    const results = await Promise.all([
      store.commit(deferred(updateCommit(first, { status: 'denied' }))),
      store.commit(updateCommit(second, { status: 'expired' })),
      // The same compare-and-set again, deferred: exactly one of the two lands.
      store.commit(deferred(updateCommit(first, { status: 'expired' }))),
      store.commit(deferred(insertCommit(record(tenant, 'p-3')))),
    ]);
    assert.deepStrictEqual(
      results.map((result) => result.kind),
      ['committed', 'committed', 'revision_conflict', 'committed'],
    );
    assert.strictEqual((await store.getProposal(tenant, 'p-1'))?.status, 'denied');
    assert.strictEqual((await store.getProposal(tenant, 'p-2'))?.status, 'expired');
    assert.strictEqual((await store.getProposal(tenant, 'p-3'))?.revision, 1);
    const ledger = await store.readLedger({ tenant });
    assertValidChain(ledger);
    assert.deepStrictEqual(await store.ledgerHead(tenant), {
      sequence: ledger.length,
      hash: ledger.at(-1)?.hash,
    });
  });

  test('a durability other than synced or deferred throws store_commit_malformed and stores nothing', async (store) => {
    const tenant = freshTenant('durability-malformed');
    const stored = await seed(store, record(tenant, 'p-1'));
    const before = await snapshotTenant(store, tenant, ['p-1']);
    await assertInvariantError(
      store.commit({
        ...updateCommit(stored, { status: 'denied' }),
        durability: 'later' as CommitDurability,
      }),
      'store_commit_malformed',
    );
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
  });
}
