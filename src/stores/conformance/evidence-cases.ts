/** Authority evidence: stored with its commit, in order, each digest once per proposal. */
import { strict as assert } from 'node:assert';
import {
  type ConformanceTest,
  claimFor,
  draft,
  evidence,
  freshTenant,
  insertCommit,
  mustCommit,
  record,
  seed,
  snapshotTenant,
  updateCommit,
} from './conformance-fixtures.js';

/** Registers the cases of this concern. */
export function registerEvidenceCases(test: ConformanceTest): void {
  test('evidence is stored with its commit and listed in the order it was recorded', async (store) => {
    const tenant = freshTenant('evidence');
    const stored = await seed(store, record(tenant, 'p-1', { status: 'awaiting_authority' }));
    const first = [evidence(tenant, 'p-1', 'd-b', 'a'), evidence(tenant, 'p-1', 'd-a', 'b')];
    await mustCommit(
      store,
      updateCommit(stored, { status: 'awaiting_authority' }, { evidence: first }),
    );
    const third = evidence(tenant, 'p-1', 'd-0', 'c');
    await mustCommit(store, {
      tenant,
      evidence: [third],
      events: [draft('p-1', 'authority_recorded', null, null)],
    });
    assert.deepStrictEqual(await store.listEvidence(tenant, 'p-1'), [...first, third]);
    assert.deepStrictEqual(await store.listEvidence(tenant, 'p-2'), []);
    assert.deepStrictEqual(await store.listEvidence(freshTenant('other'), 'p-1'), []);
  });

  test('a digest already stored for the proposal returns evidence_duplicate and nothing of the commit is stored', async (store) => {
    const tenant = freshTenant('evidence-dup');
    const stored = await seed(store, record(tenant, 'p-1'), {
      evidence: [evidence(tenant, 'p-1', 'd-1')],
    });
    const before = await snapshotTenant(store, tenant, ['p-1']);
    const result = await store.commit(
      updateCommit(
        stored,
        { status: 'executing' },
        {
          claim: claimFor(stored),
          evidence: [evidence(tenant, 'p-1', 'd-new'), evidence(tenant, 'p-1', 'd-1')],
        },
      ),
    );
    assert.deepStrictEqual(result, { kind: 'evidence_duplicate', evidenceDigest: 'd-1' });
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
    assert.strictEqual(await store.getEffectClaim(tenant, stored.effectScope), undefined);
  });

  test('the same digest twice in one commit returns evidence_duplicate', async (store) => {
    const tenant = freshTenant('evidence-twice');
    const value = record(tenant, 'p-1');
    const result = await store.commit(
      insertCommit(value, {
        evidence: [evidence(tenant, 'p-1', 'd-1'), evidence(tenant, 'p-1', 'd-1')],
      }),
    );
    assert.deepStrictEqual(result, { kind: 'evidence_duplicate', evidenceDigest: 'd-1' });
    assert.strictEqual(await store.getProposal(tenant, 'p-1'), undefined);
    assert.deepStrictEqual(await store.readLedger({ tenant }), []);
  });

  test('the same digest may be stored for two different proposals', async (store) => {
    const tenant = freshTenant('evidence-two');
    await seed(store, record(tenant, 'p-1'), { evidence: [evidence(tenant, 'p-1', 'd-1')] });
    await seed(store, record(tenant, 'p-2'), { evidence: [evidence(tenant, 'p-2', 'd-1')] });
    assert.strictEqual((await store.listEvidence(tenant, 'p-2')).length, 1);
  });
}
