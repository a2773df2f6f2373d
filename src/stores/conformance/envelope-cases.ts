/**
 * Sealed parts (decision 025): an update keeps a proposal's snapshot exactly or sets it to null
 * (erasure), never changes it or adds one; it may add the private output where there is none,
 * keep it or set it to null, never change it; every read returns both with the record.
 */
import { strict as assert } from 'node:assert';
import type { SealedEnvelope } from '../../core/envelope.js';
import type { ProposalRecord } from '../../core/store.js';
import { assertInvariantError } from './conformance-assert.js';
import {
  BASE_MS,
  type ConformanceTest,
  claimFor,
  freshTenant,
  mustCommit,
  record,
  seed,
  snapshotTenant,
  updateCommit,
} from './conformance-fixtures.js';

/** An envelope whose ciphertext is `ciphertext` (the rest fixed). */
function randomLookingEnvelope(ciphertext: string): SealedEnvelope {
  return {
    v: 1,
    alg: 'A256GCM',
    kek: { handle: 'test', version: 1 },
    wrappedKey: 'b3V0cHV0LWtleQ',
    iv: 'aXY',
    ciphertext,
    tag: 'dGFn',
  };
}

/** The snapshot of `value` with its keys in another order (same envelope, other key order). */
function reordered(envelope: SealedEnvelope): SealedEnvelope {
  const { tag, ciphertext, iv, wrappedKey, kek, alg, v } = envelope;
  return {
    tag,
    ciphertext,
    iv,
    wrappedKey,
    kek: { version: kek.version, handle: kek.handle },
    alg,
    v,
  };
}

/** Registers the cases of this concern. */
export function registerEnvelopeCases(test: ConformanceTest): void {
  test('an update keeps the snapshot exactly, whatever its key order, and every read returns it', async (store) => {
    const tenant = freshTenant('snapshot-kept');
    const stored = await seed(
      store,
      record(tenant, 'p-1', { status: 'awaiting_authority', dueAtMs: BASE_MS + 5 }),
    );
    const snapshot = stored.snapshot as SealedEnvelope;
    await mustCommit(
      store,
      updateCommit(stored, { status: 'awaiting_authority', snapshot: reordered(snapshot) }),
    );
    const after = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    assert.deepStrictEqual(after.snapshot, snapshot);
    assert.strictEqual(after.revision, 2);
    const [byEffect] = await store.listProposalsByEffect(tenant, stored.effectScope);
    assert.deepStrictEqual(byEffect?.snapshot, snapshot);
    const [due] = await store.listDue({
      tenant,
      statuses: ['awaiting_authority'],
      dueAtOrBeforeMs: BASE_MS + 5,
    });
    assert.deepStrictEqual(due?.snapshot, snapshot);
  });

  test('an update that sets the snapshot to null removes it for good; it cannot be put back', async (store) => {
    const tenant = freshTenant('snapshot-erased');
    const stored = await seed(store, record(tenant, 'p-1', { status: 'awaiting_authority' }));
    const old = stored.snapshot as SealedEnvelope;
    await mustCommit(store, updateCommit(stored, { status: 'awaiting_authority', snapshot: null }));
    const erased = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    assert.strictEqual(erased.snapshot, null);
    await mustCommit(store, updateCommit(erased, { status: 'awaiting_authority' }));
    const later = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    assert.strictEqual(later.snapshot, null);
    const before = await snapshotTenant(store, tenant, ['p-1']);
    await assertInvariantError(
      store.commit(updateCommit(later, { status: 'awaiting_authority', snapshot: old })),
      'store_commit_malformed',
    );
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
  });

  test('an update that changes the snapshot throws store_commit_malformed and stores nothing, claim included', async (store) => {
    const tenant = freshTenant('snapshot-changed');
    const stored = await seed(store, record(tenant, 'p-1'));
    const snapshot = stored.snapshot as SealedEnvelope;
    const before = await snapshotTenant(store, tenant, ['p-1']);
    for (const changed of [
      { ...snapshot, ciphertext: `${snapshot.ciphertext}AA` },
      { ...snapshot, wrappedKey: 'cmV3cmFwcGVk' },
      { ...snapshot, kek: { handle: snapshot.kek.handle, version: snapshot.kek.version + 1 } },
    ]) {
      await assertInvariantError(
        store.commit(
          updateCommit(
            stored,
            { status: 'executing', snapshot: changed },
            { claim: claimFor(stored) },
          ),
        ),
        'store_commit_malformed',
      );
    }
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
    assert.strictEqual(await store.getEffectClaim(tenant, stored.effectScope), undefined);
  });

  test('an update that adds a snapshot to a proposal stored without one throws store_commit_malformed', async (store) => {
    const tenant = freshTenant('snapshot-added');
    const bare = await seed(store, record(tenant, 'p-1', { snapshot: null }));
    const before = await snapshotTenant(store, tenant, ['p-1']);
    await assertInvariantError(
      store.commit(
        updateCommit(bare, { status: 'authorized', snapshot: record(tenant, 'x').snapshot }),
      ),
      'store_commit_malformed',
    );
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
  });

  test('a stale compare-and-set that would also change the snapshot is a revision_conflict', async (store) => {
    const tenant = freshTenant('snapshot-stale');
    const first = await seed(store, record(tenant, 'p-1'));
    await mustCommit(store, updateCommit(first, { status: 'authorized' }));
    const current = await store.getProposal(tenant, 'p-1');
    const changed = { ...(first.snapshot as SealedEnvelope), ciphertext: 'Y2hhbmdlZA' };
    const result = await store.commit(
      updateCommit(first, { status: 'authorized', snapshot: changed }),
    );
    assert.deepStrictEqual(result, { kind: 'revision_conflict', current });
    assert.deepStrictEqual((await store.getProposal(tenant, 'p-1'))?.snapshot, first.snapshot);
  });

  test('an update may add the output once, keep it, or set it to null; changing it throws and stores nothing', async (store) => {
    const tenant = freshTenant('output');
    const stored = await seed(store, record(tenant, 'p-1'));
    assert.strictEqual('output' in stored, false);
    const output = randomLookingEnvelope('b3V0cHV0');
    await mustCommit(
      store,
      updateCommit(stored, { status: 'executing', output }, { claim: claimFor(stored) }),
    );
    const withOutput = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    assert.deepStrictEqual(withOutput.output, output);
    assert.deepStrictEqual(withOutput.snapshot, stored.snapshot);
    await mustCommit(
      store,
      updateCommit(withOutput, { status: 'verification_pending', output: reordered(output) }),
    );
    const kept = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    assert.deepStrictEqual(kept.output, output);
    const before = await snapshotTenant(store, tenant, ['p-1']);
    await assertInvariantError(
      store.commit(
        updateCommit(kept, { status: 'verified', output: randomLookingEnvelope('b3RoZXI') }),
      ),
      'store_commit_malformed',
    );
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
    await mustCommit(store, updateCommit(kept, { status: 'verified' }));
    const verified = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    await mustCommit(
      store,
      updateCommit(verified, { status: 'erased', snapshot: null, output: null }),
    );
    const erased = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    assert.strictEqual(erased.snapshot, null);
    assert.strictEqual(erased.output, null);
  });

  test('a record stored without an output key reads back without one; one stored with output null keeps it', async (store) => {
    const tenant = freshTenant('output-key');
    const absent = await seed(store, record(tenant, 'p-1'));
    const nulled = await seed(store, record(tenant, 'p-2', { output: null }));
    assert.strictEqual('output' in absent, false);
    assert.strictEqual(nulled.output, null);
    await mustCommit(store, updateCommit(absent, { status: 'authorized' }));
    assert.strictEqual('output' in ((await store.getProposal(tenant, 'p-1')) as object), false);
  });
}
