/**
 * `run`'s insert without listing the effect first (decision 126): a store that declares
 * `refusesListedEffects` applies an insert with `onlyIfEffectUnlisted` only while the tenant
 * holds no proposal of that effect scope, in any status, and otherwise refuses it whole with
 * `effect_listed`. The flag on anything but an insert is malformed for every store.
 */
import { strict as assert } from 'node:assert';
import type { GuardStore, ProposalRecord, StoreCommit } from '../../core/store.js';
import { assertInvariantError, assertValidChain } from './conformance-assert.js';
import {
  type ConformanceTest,
  claimedInsert,
  freshTenant,
  insertCommit,
  mustCommit,
  record,
  seed,
  snapshotTenant,
  updateCommit,
  walk,
} from './conformance-fixtures.js';

/** `value` inserted already executing with its claim (as `run` inserts it), only if unlisted. */
const unlistedClaimedInsert = (value: ProposalRecord): StoreCommit => ({
  ...claimedInsert(value),
  onlyIfEffectUnlisted: true,
});

/** A store that does not declare the refusal is not asked for it (the guard lists first). */
const declares = (store: GuardStore): boolean => store.refusesListedEffects === true;

/** Registers the cases of this concern. */
export function registerUnlistedInsertCases(test: ConformanceTest): void {
  test('an insert only if its effect is unlisted lands whole when the tenant holds no proposal of that effect', async (store) => {
    if (!declares(store)) return;
    const tenant = freshTenant('unlisted-insert');
    // The same effect scope in another tenant does not count.
    await seed(store, record(freshTenant('unlisted-other'), 'p-0', { semanticEffectKey: 'same' }));
    const value = record(tenant, 'p-1', { semanticEffectKey: 'same' });
    const events = await mustCommit(store, unlistedClaimedInsert(value));
    assert.strictEqual((await store.getProposal(tenant, 'p-1'))?.status, 'executing');
    assert.strictEqual((await store.getEffectClaim(tenant, value.effectScope))?.proposal, 'p-1');
    const ledger = await store.readLedger({ tenant });
    assert.deepStrictEqual(ledger, events);
    assertValidChain(ledger);
    // A plain insert only if unlisted lands too.
    await mustCommit(store, {
      ...insertCommit(record(tenant, 'p-2', { semanticEffectKey: 'other' })),
      onlyIfEffectUnlisted: true,
    });
  });

  test('an insert only if its effect is unlisted is refused whole (effect_listed) while the tenant holds a proposal of that effect, in any status', async (store) => {
    if (!declares(store)) return;
    const tenant = freshTenant('unlisted-listed');
    const held = await seed(store, record(tenant, 'p-1', { semanticEffectKey: 'same' }));
    const released = await walk(
      store,
      await seed(store, record(tenant, 'p-2', { semanticEffectKey: 'released' })),
      ['expired'],
    );
    for (const [existing, id] of [
      [held, 'p-3'],
      [released, 'p-4'],
    ] as const) {
      const before = await snapshotTenant(store, tenant, ['p-1', 'p-2', id]);
      const claimBefore = await store.getEffectClaim(tenant, existing.effectScope);
      const value = record(tenant, id, { semanticEffectKey: existing.semanticEffectKey });
      assert.deepStrictEqual(await store.commit(unlistedClaimedInsert(value)), {
        kind: 'effect_listed',
      });
      assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1', 'p-2', id]), before);
      assert.deepStrictEqual(await store.getEffectClaim(tenant, existing.effectScope), claimBefore);
    }
  });

  test('concurrent inserts of one effect only if unlisted: exactly one lands with its claim, every other is refused whole', async (store) => {
    if (!declares(store)) return;
    const tenant = freshTenant('unlisted-race');
    // Two commits first, so a store with a one-round-trip path (decision 119) takes it.
    await seed(store, record(tenant, 'p-warm-1'));
    await seed(store, record(tenant, 'p-warm-2'));
    const ids = Array.from({ length: 8 }, (_, index) => `p-${index}`);
    const results = await Promise.all(
      ids.map((id) =>
        store.commit(unlistedClaimedInsert(record(tenant, id, { semanticEffectKey: 'same' }))),
      ),
    );
    const landed = ids.filter((_, index) => results[index]?.kind === 'committed');
    assert.strictEqual(landed.length, 1, JSON.stringify(results));
    for (const result of results) {
      assert.ok(['committed', 'effect_listed', 'effect_claimed'].includes(result.kind));
    }
    const scope = record(tenant, 'x', { semanticEffectKey: 'same' }).effectScope;
    assert.deepStrictEqual(
      (await store.listProposalsByEffect(tenant, scope)).map((value) => value.proposal),
      landed,
    );
    assert.strictEqual((await store.getEffectClaim(tenant, scope))?.proposal, landed[0]);
    const ledger = await store.readLedger({ tenant });
    assertValidChain(ledger);
    assert.deepStrictEqual(
      [...new Set(ledger.map((event) => event.proposal))],
      ['p-warm-1', 'p-warm-2', landed[0]],
    );
  });

  test('onlyIfEffectUnlisted on a commit that is not an insert throws and stores nothing', async (store) => {
    const tenant = freshTenant('unlisted-malformed');
    const stored = await seed(store, record(tenant, 'p-1'));
    const before = await snapshotTenant(store, tenant, ['p-1']);
    await assertInvariantError(
      store.commit({ ...updateCommit(stored, { status: 'denied' }), onlyIfEffectUnlisted: true }),
      'store_commit_malformed',
    );
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
  });
}
