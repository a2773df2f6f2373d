/** Concurrency: racing claims and compare-and-sets have exactly one winner; the chain stays gapless. */
import { strict as assert } from 'node:assert';
import type { ProposalRecord } from '../../core/store.js';
import { assertValidChain } from './conformance-assert.js';
import {
  BASE_MS,
  type ConformanceTest,
  claimFor,
  draft,
  freshTenant,
  insertCommit,
  mustCommit,
  record,
  seed,
  updateCommit,
} from './conformance-fixtures.js';

/** Registers the cases of this concern. */
export function registerConcurrencyCases(test: ConformanceTest): void {
  test('32 concurrent commits taking the same claim: exactly one is committed', async (store) => {
    const tenant = freshTenant('race-claim');
    const shared = { semanticEffectKey: 'sek-race' };
    const ids = Array.from({ length: 32 }, (_, index) => `p-${index}`);
    const seeded = await Promise.all(ids.map((id) => seed(store, record(tenant, id, shared))));
    const results = await Promise.all(
      seeded.map((value) =>
        store.commit(updateCommit(value, { status: 'executing' }, { claim: claimFor(value) })),
      ),
    );
    const winners = results.flatMap((result, index) =>
      result.kind === 'committed' ? [ids[index]] : [],
    );
    assert.strictEqual(winners.length, 1);
    const owner = winners[0];
    assert.strictEqual(results.filter((result) => result.kind === 'effect_claimed').length, 31);
    for (const result of results) {
      if (result.kind !== 'committed')
        assert.deepStrictEqual(result, { kind: 'effect_claimed', owner });
    }
    assert.strictEqual(
      (await store.getEffectClaim(tenant, seeded[0]!.effectScope))?.proposal,
      owner,
    );
    const executing = (await Promise.all(ids.map((id) => store.getProposal(tenant, id)))).filter(
      (value) => value?.status === 'executing',
    );
    assert.deepStrictEqual(
      executing.map((value) => value?.proposal),
      [owner],
    );
    const ledger = await store.readLedger({ tenant });
    assert.strictEqual(ledger.length, 33);
    assertValidChain(ledger);
  });

  test('32 concurrent compare-and-sets from the same revision: exactly one is applied', async (store) => {
    const tenant = freshTenant('race-cas');
    const stored = await seed(store, record(tenant, 'p-1'));
    const results = await Promise.all(
      Array.from({ length: 32 }, (_, index) =>
        store.commit(updateCommit(stored, { status: 'authorized', reasonCode: `r-${index}` })),
      ),
    );
    const applied = results.filter((result) => result.kind === 'committed');
    assert.strictEqual(applied.length, 1);
    const after = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    assert.strictEqual(after.revision, 2);
    for (const result of results) {
      if (result.kind !== 'committed') {
        assert.deepStrictEqual(result, { kind: 'revision_conflict', current: after });
      }
    }
    const ledger = await store.readLedger({ tenant });
    assert.strictEqual(ledger.length, 2);
    assertValidChain(ledger);
  });

  test('200 concurrent commits from 40 callers leave a gapless chain that verifies', async (store) => {
    const tenant = freshTenant('race-chain');
    const callers = Array.from({ length: 40 }, (_, index) => `p-${index}`);
    let committedEvents = 0;
    await Promise.all(
      callers.map(async (id) => {
        let current = record(tenant, id);
        const inserted = await mustCommit(store, insertCommit(current));
        committedEvents += inserted.length;
        for (let step = 0; step < 4; step += 1) {
          const write = updateCommit(
            current,
            { status: 'authorized', updatedAtMs: BASE_MS + step },
            {
              events: [
                draft(id, 'authority_recorded', 'authorized', current.revision + 1),
                draft(null, 'idempotency_decided', null, null, { step }),
              ],
            },
          );
          const sealed = await mustCommit(store, write);
          committedEvents += sealed.length;
          current = write.proposal?.record as ProposalRecord;
        }
      }),
    );
    const ledger = await store.readLedger({ tenant });
    assert.strictEqual(ledger.length, committedEvents);
    assert.deepStrictEqual(
      ledger.map((event) => event.sequence),
      Array.from({ length: committedEvents }, (_, index) => index + 1),
    );
    assertValidChain(ledger);
    assert.deepStrictEqual(await store.ledgerHead(tenant), {
      sequence: committedEvents,
      hash: ledger.at(-1)?.hash,
    });
    for (const id of callers) {
      assert.strictEqual((await store.getProposal(tenant, id))?.revision, 5);
    }
  });
}
