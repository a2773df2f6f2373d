/** Effect claims (I1): one holder per semantic effect, passed over only from an owner that certainly had no effect. */
import { strict as assert } from 'node:assert';
import type { ProposalRecord } from '../../core/store.js';
import type { ProposalStatus } from '../../core/vocabulary.js';
import { assertMatches } from './conformance-assert.js';
import {
  BASE_MS,
  type ConformanceTest,
  claimFor,
  evidence,
  freshTenant,
  insertCommit,
  mustCommit,
  record,
  seed,
  snapshotTenant,
  updateCommit,
  walk,
} from './conformance-fixtures.js';

/** Registers the cases of this concern. */
export function registerEffectClaimCases(test: ConformanceTest): void {
  test('the first proposal to claim an effect holds it', async (store) => {
    const tenant = freshTenant('claim-first');
    const stored = await seed(store, record(tenant, 'p-1'));
    assert.strictEqual(await store.getEffectClaim(tenant, stored.effectScope), undefined);
    await mustCommit(
      store,
      updateCommit(stored, { status: 'executing' }, { claim: claimFor(stored, BASE_MS + 7) }),
    );
    assert.deepStrictEqual(await store.getEffectClaim(tenant, stored.effectScope), {
      tenant,
      effectScope: stored.effectScope,
      proposal: 'p-1',
      claimedAtMs: BASE_MS + 7,
    });
  });

  test('the owner may take its own claim again, which records the new time', async (store) => {
    const tenant = freshTenant('claim-again');
    const stored = await seed(store, record(tenant, 'p-1'));
    await mustCommit(
      store,
      updateCommit(stored, { status: 'executing' }, { claim: claimFor(stored, BASE_MS + 1) }),
    );
    // A resend: the unknown outcome was verified absent and the proposal authorized again.
    const executing = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    const resent = await walk(store, executing, ['failed_unknown', 'authorized']);
    await mustCommit(
      store,
      updateCommit(resent, { status: 'executing' }, { claim: claimFor(stored, BASE_MS + 2) }),
    );
    assertMatches(await store.getEffectClaim(tenant, stored.effectScope), {
      proposal: 'p-1',
      claimedAtMs: BASE_MS + 2,
    });
  });

  test('a second proposal for a claimed effect gets effect_claimed naming the owner, and nothing of its commit is stored', async (store) => {
    const tenant = freshTenant('claim-second');
    const shared = { semanticEffectKey: 'sek-shared' };
    const owner = await seed(store, record(tenant, 'p-1', shared));
    const rival = await seed(store, record(tenant, 'p-2', shared));
    await mustCommit(
      store,
      updateCommit(owner, { status: 'executing' }, { claim: claimFor(owner) }),
    );
    const before = await snapshotTenant(store, tenant, ['p-1', 'p-2']);
    const result = await store.commit(
      updateCommit(
        rival,
        { status: 'executing' },
        { claim: claimFor(rival), evidence: [evidence(tenant, 'p-2', 'd-2')] },
      ),
    );
    assert.deepStrictEqual(result, { kind: 'effect_claimed', owner: 'p-1' });
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1', 'p-2']), before);
    assertMatches(await store.getEffectClaim(tenant, owner.effectScope), {
      proposal: 'p-1',
    });
    const inserted = await store.commit(
      insertCommit(record(tenant, 'p-3', shared), {
        claim: claimFor(record(tenant, 'p-3', shared)),
      }),
    );
    assert.deepStrictEqual(inserted, { kind: 'effect_claimed', owner: 'p-1' });
    assert.strictEqual(await store.getProposal(tenant, 'p-3'), undefined);
  });

  test('the claim passes to another proposal once the owner is stored as failed_known', async (store) => {
    const tenant = freshTenant('claim-failed');
    const shared = { semanticEffectKey: 'sek-shared' };
    const owner = await seed(store, record(tenant, 'p-1', shared));
    await mustCommit(
      store,
      updateCommit(owner, { status: 'executing' }, { claim: claimFor(owner) }),
    );
    const executing = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    await walk(store, executing, ['failed_known']);
    const next = await seed(store, record(tenant, 'p-2', shared));
    await mustCommit(
      store,
      updateCommit(next, { status: 'executing' }, { claim: claimFor(next, BASE_MS + 99) }),
    );
    assert.deepStrictEqual(await store.getEffectClaim(tenant, owner.effectScope), {
      tenant,
      effectScope: owner.effectScope,
      proposal: 'p-2',
      claimedAtMs: BASE_MS + 99,
    });
  });

  test('the claim passes to another proposal once the owner is stored as stale', async (store) => {
    const tenant = freshTenant('claim-stale');
    const shared = { semanticEffectKey: 'sek-shared' };
    const owner = await seed(store, record(tenant, 'p-1', shared), {
      claim: claimFor(record(tenant, 'p-1', shared)),
    });
    await walk(store, owner, ['stale']);
    const next = record(tenant, 'p-2', shared);
    await mustCommit(store, insertCommit(next, { claim: claimFor(next) }));
    assertMatches(await store.getEffectClaim(tenant, owner.effectScope), {
      proposal: 'p-2',
    });
  });

  test('the claim stays with an owner in any status that may still have had an effect', async (store) => {
    const tenant = freshTenant('claim-held');
    const paths: Record<string, readonly ProposalStatus[]> = {
      executing: [],
      failed_unknown: ['failed_unknown'],
      verification_pending: ['verification_pending'],
      verification_unresolved: ['failed_unknown', 'verification_unresolved'],
      verified: ['verification_pending', 'verified'],
      compensation_required: ['compensation_required'],
      partially_succeeded: ['partially_succeeded'],
      erased: ['verification_pending', 'verified', 'erased'],
    };
    for (const [label, path] of Object.entries(paths)) {
      const shared = { semanticEffectKey: `sek-${label}` };
      const owner = await seed(store, record(tenant, `owner-${label}`, shared));
      await mustCommit(
        store,
        updateCommit(owner, { status: 'executing' }, { claim: claimFor(owner) }),
      );
      const executing = (await store.getProposal(tenant, owner.proposal)) as ProposalRecord;
      await walk(store, executing, path);
      const rival = await seed(store, record(tenant, `rival-${label}`, shared));
      const result = await store.commit(
        updateCommit(rival, { status: 'executing' }, { claim: claimFor(rival) }),
      );
      assert.deepStrictEqual(
        { label, result },
        {
          label,
          result: { kind: 'effect_claimed', owner: owner.proposal },
        },
      );
      assert.deepStrictEqual(await store.getProposal(tenant, rival.proposal), rival);
    }
  });
}
