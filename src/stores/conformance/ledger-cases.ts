/** The ledger: gapless per-tenant chains, filters, truncation to a checkpoint. */
import { strict as assert } from 'node:assert';
import { ContractViolationError } from '../../core/errors.js';
import { verifyLedgerChain } from '../../core/ledger.js';
import type { GuardStore, ProposalRecord } from '../../core/store.js';
import { assertValidChain } from './conformance-assert.js';
import {
  type ConformanceTest,
  claimFor,
  draft,
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
export function registerLedgerCases(test: ConformanceTest): void {
  test('sequences are gapless per tenant and the committed events are exactly what is read back', async (store) => {
    const tenant = freshTenant('ledger');
    const stored = await seed(store, record(tenant, 'p-1'));
    const second = await mustCommit(store, {
      ...updateCommit(stored, { status: 'executing' }),
      events: [
        draft('p-1', 'commit_started', 'executing', 2, { attempt: 1 }),
        draft('p-1', 'idempotency_decided', null, null, { key: 'k', list: ['a', 1] }),
      ],
    });
    const tenantLevel = await mustCommit(store, {
      tenant,
      events: [draft(null, 'contract_rejected', null, null, { issues: ['amount'] })],
    });
    const ledger = await store.readLedger({ tenant });
    assert.deepStrictEqual(
      ledger.map((event) => event.sequence),
      [1, 2, 3, 4],
    );
    assert.deepStrictEqual(ledger.slice(1), [...second, ...tenantLevel]);
    assert.strictEqual(ledger[2]?.previousHash, ledger[1]?.hash);
    assertValidChain(ledger);
    assert.deepStrictEqual(await store.ledgerHead(tenant), {
      sequence: 4,
      hash: ledger[3]?.hash,
    });
  });

  test('a commit whose events cannot be sealed (a float in data) throws and stores nothing, while commits beside it land', async (store) => {
    const tenant = freshTenant('ledger-float');
    const stored = await seed(store, record(tenant, 'p-1'));
    const before = await snapshotTenant(store, tenant, ['p-1']);
    const [bad, good] = await Promise.allSettled([
      store.commit({
        ...updateCommit(stored, { status: 'executing' }, { claim: claimFor(stored) }),
        events: [draft('p-1', 'commit_started', 'executing', 2, { amount: 1.5 })],
      }),
      store.commit(insertCommit(record(tenant, 'p-2'))),
    ]);
    assert.strictEqual(bad.status, 'rejected');
    const error = bad.status === 'rejected' ? (bad.reason as ContractViolationError) : undefined;
    assert.ok(error instanceof ContractViolationError);
    assert.strictEqual(error?.code, 'canonical_json_invalid');
    assert.strictEqual(good.status === 'fulfilled' ? good.value.kind : good.reason, 'committed');
    const after = await snapshotTenant(store, tenant, ['p-1']);
    assert.deepStrictEqual(after.proposals, before.proposals);
    assert.strictEqual(await store.getEffectClaim(tenant, stored.effectScope), undefined);
    assert.deepStrictEqual(
      after.ledger.map((event) => event.proposal),
      ['p-1', 'p-2'],
    );
    assertValidChain(after.ledger);
  });

  test('a commit with no events and no proposal changes nothing in the ledger', async (store) => {
    const tenant = freshTenant('ledger-empty');
    assert.deepStrictEqual(await store.commit({ tenant, events: [] }), {
      kind: 'committed',
      events: [],
    });
    assert.strictEqual(await store.ledgerHead(tenant), undefined);
    assert.deepStrictEqual(await store.readLedger({ tenant }), []);
  });

  test('tenants have separate chains, claims and proposals, and reads never cross tenants', async (store) => {
    const alpha = freshTenant('alpha');
    const beta = freshTenant('beta');
    const a = await seed(store, record(alpha, 'p-1'));
    const b = await seed(store, record(beta, 'p-1', { principal: 'user:bob' }));
    await mustCommit(store, updateCommit(a, { status: 'executing' }, { claim: claimFor(a) }));
    await mustCommit(store, updateCommit(b, { status: 'executing' }, { claim: claimFor(b) }));
    const alphaLedger = await store.readLedger({ tenant: alpha });
    const betaLedger = await store.readLedger({ tenant: beta });
    assert.deepStrictEqual(
      alphaLedger.map((event) => [event.tenant, event.sequence]),
      [
        [alpha, 1],
        [alpha, 2],
      ],
    );
    assert.deepStrictEqual(
      betaLedger.map((event) => [event.tenant, event.sequence]),
      [
        [beta, 1],
        [beta, 2],
      ],
    );
    assertValidChain(alphaLedger);
    assertValidChain(betaLedger);
    assert.notStrictEqual(alphaLedger[0]?.hash, betaLedger[0]?.hash);
    assert.strictEqual((await store.getProposal(beta, 'p-1'))?.principal, 'user:bob');
    assert.strictEqual((await store.getEffectClaim(alpha, a.effectScope))?.tenant, alpha);
    assert.strictEqual((await store.getEffectClaim(beta, b.effectScope))?.tenant, beta);
    assert.strictEqual((await store.listProposalsByEffect(alpha, a.effectScope)).length, 1);
    assert.deepStrictEqual(await store.readLedger({ tenant: freshTenant('gamma') }), []);
  });

  test('readLedger filters by afterSequence, proposal and limit', async (store) => {
    const tenant = freshTenant('ledger-filter');
    const one = await seed(store, record(tenant, 'p-1'));
    const two = await seed(store, record(tenant, 'p-2'));
    await walk(store, one, ['authorized', 'executing']);
    await walk(store, two, ['executing']);
    await mustCommit(store, { tenant, events: [draft(null, 'contract_rejected', null, null)] });
    const all = await store.readLedger({ tenant });
    assert.deepStrictEqual(
      all.map((event) => [event.sequence, event.proposal]),
      [
        [1, 'p-1'],
        [2, 'p-2'],
        [3, 'p-1'],
        [4, 'p-1'],
        [5, 'p-2'],
        [6, null],
      ],
    );
    const seq = async (query: Omit<Parameters<GuardStore['readLedger']>[0], 'tenant'>) =>
      (await store.readLedger({ tenant, ...query })).map((event) => event.sequence);
    assert.deepStrictEqual(await seq({ afterSequence: 3 }), [4, 5, 6]);
    assert.deepStrictEqual(await seq({ proposal: 'p-1' }), [1, 3, 4]);
    assert.deepStrictEqual(await seq({ proposal: 'p-2', afterSequence: 1 }), [2, 5]);
    assert.deepStrictEqual(await seq({ limit: 2 }), [1, 2]);
    assert.deepStrictEqual(await seq({ afterSequence: 2, limit: 2 }), [3, 4]);
    assert.deepStrictEqual(await seq({ proposal: 'p-1', afterSequence: 1, limit: 1 }), [3]);
    assert.deepStrictEqual(await seq({ limit: 0 }), []);
    assert.deepStrictEqual(await seq({ afterSequence: 6 }), []);
    assert.deepStrictEqual(await seq({ proposal: 'p-none' }), []);
  });

  test('truncateLedger removes events through a sequence and the rest verifies from the checkpoint', async (store) => {
    const tenant = freshTenant('truncate');
    const stored = await seed(store, record(tenant, 'p-1'));
    await walk(
      store,
      stored,
      Array.from({ length: 9 }, () => 'authorized' as const),
    );
    const full = await store.readLedger({ tenant });
    assert.strictEqual(full.length, 10);
    assert.strictEqual(await store.ledgerCheckpoint(tenant), undefined);
    await store.truncateLedger(tenant, 0);
    assert.strictEqual(await store.ledgerCheckpoint(tenant), undefined);
    await store.truncateLedger(tenant, 4);
    const checkpoint = { sequence: 4, hash: full[3]?.hash as string };
    assert.deepStrictEqual(await store.ledgerCheckpoint(tenant), checkpoint);
    const rest = await store.readLedger({ tenant });
    assert.deepStrictEqual(rest, full.slice(4));
    assertValidChain(rest, checkpoint);
    assert.strictEqual(verifyLedgerChain(rest).kind, 'invalid');
    assert.deepStrictEqual(await store.ledgerHead(tenant), { sequence: 10, hash: full[9]?.hash });
    await store.truncateLedger(tenant, 2);
    assert.deepStrictEqual(await store.ledgerCheckpoint(tenant), checkpoint);
    const current = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
    const more = await mustCommit(store, updateCommit(current, { status: 'executing' }));
    assert.deepStrictEqual(
      more.map((event) => event.sequence),
      [11],
    );
    assert.strictEqual(more[0]?.previousHash, full[9]?.hash);
    await store.truncateLedger(tenant, 11);
    assert.deepStrictEqual(await store.readLedger({ tenant }), []);
    assert.deepStrictEqual(await store.ledgerCheckpoint(tenant), {
      sequence: 11,
      hash: more[0]?.hash,
    });
    assert.deepStrictEqual(await store.ledgerHead(tenant), { sequence: 11, hash: more[0]?.hash });
    const after = await mustCommit(store, {
      tenant,
      events: [draft(null, 'contract_rejected', null, null)],
    });
    assert.strictEqual(after[0]?.sequence, 12);
    assertValidChain(await store.readLedger({ tenant }), {
      sequence: 11,
      hash: more[0]?.hash as string,
    });
  });
}
