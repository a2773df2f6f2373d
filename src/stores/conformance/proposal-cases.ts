/** Proposals: insert, compare-and-set, transitions and malformed commits. */
import { strict as assert } from 'node:assert';
import { GENESIS_HASH } from '../../core/ledger.js';
import type { ProposalRecord, StoreCommit } from '../../core/store.js';
import { assertInvariantError, assertMatches, assertValidChain } from './conformance-assert.js';
import {
  BASE_MS,
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
  walk,
} from './conformance-fixtures.js';

/** Registers the cases of this concern. */
export function registerProposalCases(test: ConformanceTest): void {
  test('hostile strings (quotes, backslashes, SQL, unicode) round-trip exactly and harm nothing', async (store) => {
    const hostile = [
      "it's",
      "''",
      '\\',
      "\\'",
      "'); DROP TABLE proposals; --",
      "E'\\x27' OR '1'='1",
      '$1 $$ %s %% ?',
      'line\nbreak\ttab',
      '😀 e\u0301 \u00e9 \u202e',
    ];
    const tenant = `${freshTenant('hostile')}-'"\\`;
    for (const [index, text] of hostile.entries()) {
      const id = `p-${index}-${text}`;
      const value = record(tenant, id, {
        principal: text,
        agent: text,
        reasonCode: text,
        semanticEffectKey: `sek-${index}-${text}`,
        effectScope: `support.refund@1#sek-${index}-${text}`,
        receipts: [{ id: text, provider: 'payments', details: { note: text } }],
      });
      const events = await mustCommit(store, {
        ...insertCommit(value),
        events: [draft(id, 'policy_decided', value.status, 1, { reasonCode: text, note: text })],
      });
      assert.deepStrictEqual(await store.getProposal(tenant, id), value);
      const [stored] = await store.readLedger({ tenant, proposal: id });
      assert.deepStrictEqual(stored, events[0]);
      assert.deepStrictEqual(stored?.data, { reasonCode: text, note: text });
      assert.strictEqual((await store.listProposalsByEffect(tenant, value.effectScope)).length, 1);
    }
    assertValidChain(await store.readLedger({ tenant }));
    // The tables are still there and still work for an ordinary tenant.
    const other = freshTenant('after-hostile');
    await mustCommit(store, insertCommit(record(other, 'p-ok')));
    assert.strictEqual((await store.getProposal(other, 'p-ok'))?.proposal, 'p-ok');
  });

  test('an inserted proposal reads back deep-equal, nested receipts and nulls included', async (store) => {
    const tenant = freshTenant('roundtrip');
    const full = record(tenant, 'p-full', {
      status: 'awaiting_authority',
      agent: 'agent:planner',
      dueAtMs: BASE_MS + 1_000,
      reasonCode: 'approval.required',
      lease: { owner: 'worker-1', expiresAtMs: BASE_MS + 30_000 },
      resendGeneration: 2,
      verificationAttempts: 3,
      receipts: [
        { id: 're_1', provider: 'payments' },
        {
          id: 're_2',
          provider: 'payments',
          details: { amountMinor: 1250, status: 'succeeded', nested: { a: [1, null, 'x'] } },
        },
      ],
      compensationReceipts: [{ id: 'cr_1', provider: 'payments', details: {} }],
      supersededBy: 'p-other',
      supersedes: 'p-older',
      policy: { decision: 'require_approval', reasonCode: 'policy.amount_over_limit' },
    });
    const bare = record(tenant, 'p-bare', { snapshot: null, status: 'blocked' });
    const events = await mustCommit(store, insertCommit(full));
    await mustCommit(store, insertCommit(bare));
    assert.deepStrictEqual(await store.getProposal(tenant, 'p-full'), full);
    assert.deepStrictEqual(await store.getProposal(tenant, 'p-bare'), bare);
    assert.strictEqual(events.length, 1);
    assertMatches(events[0], {
      tenant,
      sequence: 1,
      previousHash: GENESIS_HASH,
      proposal: 'p-full',
      type: 'policy_decided',
      status: 'awaiting_authority',
      revision: 1,
      data: { reasonCode: 'x' },
    });
  });

  test('a proposal that was never stored, or belongs to another tenant, reads as undefined', async (store) => {
    const tenant = freshTenant('missing');
    await seed(store, record(tenant, 'p-1'));
    assert.strictEqual(await store.getProposal(tenant, 'p-2'), undefined);
    assert.strictEqual(await store.getProposal(freshTenant('other'), 'p-1'), undefined);
  });

  test('inserting an existing proposal id returns proposal_exists and stores nothing', async (store) => {
    const tenant = freshTenant('exists');
    const first = await seed(store, record(tenant, 'p-1'));
    const before = await snapshotTenant(store, tenant, ['p-1']);
    const again = record(tenant, 'p-1', { principal: 'user:mallory' });
    const result = await store.commit(
      insertCommit(again, { evidence: [evidence(tenant, 'p-1', 'd-1')] }),
    );
    assert.deepStrictEqual(result, { kind: 'proposal_exists' });
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
    assert.deepStrictEqual(await store.getProposal(tenant, 'p-1'), first);
  });

  test('a compare-and-set at the stored revision and status applies and bumps the revision', async (store) => {
    const tenant = freshTenant('cas');
    const stored = await seed(store, record(tenant, 'p-1'));
    const events = await mustCommit(
      store,
      updateCommit(stored, { status: 'executing', lease: { owner: 'w', expiresAtMs: 9 } }),
    );
    const after = await store.getProposal(tenant, 'p-1');
    assert.deepStrictEqual(after, {
      ...stored,
      status: 'executing',
      revision: 2,
      lease: { owner: 'w', expiresAtMs: 9 },
    });
    assert.deepStrictEqual(
      events.map((event) => [event.sequence, event.status, event.revision]),
      [[2, 'executing', 2]],
    );
  });

  test('a compare-and-set from a stale revision returns revision_conflict with the current record', async (store) => {
    const tenant = freshTenant('stale');
    const first = await seed(store, record(tenant, 'p-1'));
    const second = await walk(store, first, ['authorized']);
    const before = await snapshotTenant(store, tenant, ['p-1']);
    const result = await store.commit(updateCommit(first, { status: 'executing' }));
    assert.deepStrictEqual(result, { kind: 'revision_conflict', current: second });
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
  });

  test('a compare-and-set expecting the wrong status returns revision_conflict', async (store) => {
    const tenant = freshTenant('wrong-status');
    const stored = await seed(store, record(tenant, 'p-1'));
    const pretend: ProposalRecord = { ...stored, status: 'awaiting_authority' };
    const result = await store.commit(updateCommit(pretend, { status: 'authorized' }));
    assert.deepStrictEqual(result, { kind: 'revision_conflict', current: stored });
    assert.deepStrictEqual(await store.getProposal(tenant, 'p-1'), stored);
    assert.strictEqual((await store.readLedger({ tenant })).length, 1);
  });

  test('a compare-and-set on a missing proposal returns revision_conflict without a record', async (store) => {
    const tenant = freshTenant('cas-missing');
    const ghost = record(tenant, 'p-ghost');
    const result = await store.commit(updateCommit(ghost, { status: 'executing' }));
    assert.deepStrictEqual(result, { kind: 'revision_conflict', current: undefined });
    assert.strictEqual(await store.getProposal(tenant, 'p-ghost'), undefined);
    assert.deepStrictEqual(await store.readLedger({ tenant }), []);
    assert.strictEqual(await store.ledgerHead(tenant), undefined);
  });

  test('an illegal transition throws StoreInvariantError illegal_transition and stores nothing', async (store) => {
    const tenant = freshTenant('illegal');
    const stored = await seed(store, record(tenant, 'p-1'), {
      claim: claimFor(record(tenant, 'p-1')),
    });
    const before = await snapshotTenant(store, tenant, ['p-1']);
    await assertInvariantError(
      store.commit(updateCommit(stored, { status: 'verified' })),
      'illegal_transition',
    );
    await assertInvariantError(
      store.commit(insertCommit(record(tenant, 'p-2', { status: 'executing' }))),
      'illegal_transition',
    );
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
    assert.strictEqual(await store.getProposal(tenant, 'p-2'), undefined);
  });

  test('a move to executing without the effect claim, or an operator-only move without its attestation, throws illegal_transition and stores nothing', async (store) => {
    const tenant = freshTenant('rules');
    const stored = await seed(store, record(tenant, 'p-1'));
    const before = await snapshotTenant(store, tenant, ['p-1']);
    const { claim: _claim, ...unclaimed } = updateCommit(stored, { status: 'executing' });
    await assertInvariantError(store.commit(unclaimed), 'illegal_transition');
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
    const unknown = await walk(store, stored, ['executing', 'failed_unknown']);
    const settled = await snapshotTenant(store, tenant, ['p-1']);
    await assertInvariantError(
      store.commit(updateCommit(unknown, { status: 'failed_known' })),
      'illegal_transition',
    );
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), settled);
    await mustCommit(
      store,
      updateCommit(
        unknown,
        { status: 'failed_known' },
        { events: [draft('p-1', 'operator_resolved', 'failed_known', unknown.revision + 1)] },
      ),
    );
    assert.strictEqual((await store.getProposal(tenant, 'p-1'))?.status, 'failed_known');
  });

  test('a revision that does not advance by exactly one throws store_commit_malformed and stores nothing', async (store) => {
    const tenant = freshTenant('jump');
    const stored = await seed(store, record(tenant, 'p-1'));
    const before = await snapshotTenant(store, tenant, ['p-1']);
    const jump: StoreCommit = {
      tenant,
      proposal: {
        kind: 'update',
        expectedRevision: 1,
        expectedStatus: 'authorized',
        record: { ...stored, revision: 3 },
      },
      events: [draft('p-1', 'commit_started', 'authorized', 3)],
    };
    await assertInvariantError(store.commit(jump), 'store_commit_malformed');
    await assertInvariantError(
      store.commit(insertCommit(record(tenant, 'p-2', { revision: 2 }))),
      'store_commit_malformed',
    );
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
  });

  test('a malformed commit (tenant mismatch, no events, claim without its proposal) throws and stores nothing', async (store) => {
    const tenant = freshTenant('malformed');
    const stored = await seed(store, record(tenant, 'p-1'));
    const before = await snapshotTenant(store, tenant, ['p-1']);
    const other = record(freshTenant('elsewhere'), 'p-9');
    await assertInvariantError(
      store.commit({ ...insertCommit(other), tenant }),
      'store_commit_malformed',
    );
    await assertInvariantError(
      store.commit({ ...updateCommit(stored, { status: 'executing' }), events: [] }),
      'store_commit_malformed',
    );
    await assertInvariantError(
      store.commit({ tenant, claim: claimFor(stored), events: [] }),
      'store_commit_malformed',
    );
    await assertInvariantError(
      store.commit({
        tenant,
        evidence: [evidence(other.tenant, 'p-1', 'd-x')],
        events: [],
      }),
      'store_commit_malformed',
    );
    assert.deepStrictEqual(await snapshotTenant(store, tenant, ['p-1']), before);
    assert.strictEqual(await store.getEffectClaim(tenant, stored.effectScope), undefined);
  });
}
