/**
 * The store conformance suite: one set of behavioural tests (and fast-check properties against
 * the memory store as a model) that every `GuardStore` adapter must pass, third-party ones too.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ContractViolationError, StoreInvariantError } from '../../core/errors.js';
import {
  GENESIS_HASH,
  type LedgerEvent,
  type LedgerEventDraft,
  verifyLedgerChain,
} from '../../core/ledger.js';
import type {
  AuthorityEvidenceRecord,
  GuardStore,
  ProposalRecord,
  StoreCommit,
  StoreCommitResult,
} from '../../core/store.js';
import {
  INITIAL_STATUSES,
  type LedgerEventType,
  type ProposalStatus,
  TRANSITIONS,
} from '../../core/vocabulary.js';
import { createMemoryStore } from '../memory/memory-store.js';

/** Tests an adapter may skip, each group with the reason it cannot pass them. */
export interface StoreConformanceSkip {
  /** Why these tests do not apply to the adapter; must not be empty. */
  readonly reason: string;
  /** Exact test names as registered by the suite. */
  readonly tests: readonly string[];
}

/** Options of {@link runStoreConformance}. */
export interface StoreConformanceOptions {
  /** The adapter's name, used as the top-level `describe`. */
  readonly name: string;
  /**
   * Opens a store for one test. Stores may share data between calls (a database schema): every
   * test uses its own fresh tenant ids, so they never see each other.
   */
  readonly newStore: () => Promise<GuardStore>;
  /** Tests to skip, each with a reason. A skip without a reason, or naming no test, throws. */
  readonly skip?: readonly StoreConformanceSkip[];
  /**
   * fast-check runs per property. Each run opens no new store (it uses a fresh tenant).
   * @default 25
   */
  readonly propertyRuns?: number;
}

const BASE_MS = 1_700_000_000_000;
let tenantCounter = 0;

/** A tenant id no other test (or run) uses. */
function freshTenant(label: string): string {
  tenantCounter += 1;
  return `t-${label}-${process.pid}-${Date.now().toString(36)}-${tenantCounter}`;
}

function record(
  tenant: string,
  proposal: string,
  overrides: Partial<ProposalRecord> = {},
): ProposalRecord {
  const actionType = overrides.actionType ?? 'support.refund@1';
  const semanticEffectKey = overrides.semanticEffectKey ?? `sek-${proposal}`;
  return {
    tenant,
    proposal,
    revision: 1,
    status: 'authorized',
    actionType,
    semanticEffectKey,
    effectScope: `${actionType}#${semanticEffectKey}`,
    principal: 'user:alice',
    agent: null,
    createdAtMs: BASE_MS,
    updatedAtMs: BASE_MS,
    expiresAtMs: BASE_MS + 3_600_000,
    dueAtMs: null,
    commitment: { algorithm: 'hmac-sha256', keyHandle: 'test', keyVersion: 1, value: 'Y29tbWl0' },
    snapshot: {
      v: 1,
      alg: 'A256GCM',
      kek: { handle: 'test', version: 1 },
      wrappedKey: 'd3JhcHBlZA',
      iv: 'aXY',
      ciphertext: 'Y2lwaGVy',
      tag: 'dGFn',
    },
    policy: { decision: 'allow', reasonCode: 'policy.allowed' },
    reasonCode: null,
    lease: null,
    resendGeneration: 0,
    verificationAttempts: 0,
    receipts: [],
    compensationReceipts: [],
    supersededBy: null,
    supersedes: null,
    ...overrides,
  };
}

function draft(
  proposal: string | null,
  type: LedgerEventType,
  status: ProposalStatus | null,
  revision: number | null,
  data: LedgerEventDraft['data'] = {},
): LedgerEventDraft {
  return {
    proposal,
    type,
    at: new Date(BASE_MS).toISOString(),
    actionType: proposal === null ? null : 'support.refund@1',
    status,
    revision,
    data,
  };
}

function insertCommit(
  value: ProposalRecord,
  extra: Partial<Pick<StoreCommit, 'claim' | 'evidence'>> = {},
): StoreCommit {
  return {
    tenant: value.tenant,
    proposal: { kind: 'insert', record: value },
    events: [draft(value.proposal, 'policy_decided', value.status, 1, { reasonCode: 'x' })],
    ...extra,
  };
}

/**
 * A compare-and-set from `current` to `changes`, revision + 1. As the store rules require, a
 * move to `executing` takes the effect claim (unless `extra` names one) and a move to
 * `verified` carries a receipt.
 */
function updateCommit(
  current: ProposalRecord,
  changes: Partial<ProposalRecord>,
  extra: Partial<Pick<StoreCommit, 'claim' | 'evidence' | 'events'>> = {},
): StoreCommit {
  let next: ProposalRecord = { ...current, ...changes, revision: current.revision + 1 };
  if (next.status === 'verified' && next.receipts.length === 0) {
    next = { ...next, receipts: [{ id: `re-${next.proposal}`, provider: 'test' }] };
  }
  return {
    tenant: current.tenant,
    proposal: {
      kind: 'update',
      expectedRevision: current.revision,
      expectedStatus: current.status,
      record: next,
    },
    events: [draft(current.proposal, 'commit_started', next.status, next.revision)],
    ...(next.status === 'executing' ? { claim: claimFor(next) } : {}),
    ...extra,
  };
}

function claimFor(
  value: ProposalRecord,
  atMs = BASE_MS + 10,
): { effectScope: string; proposal: string; atMs: number } {
  return { effectScope: value.effectScope, proposal: value.proposal, atMs };
}

function evidence(
  tenant: string,
  proposal: string,
  digest: string,
  authority = 'authority:a',
): AuthorityEvidenceRecord {
  return {
    tenant,
    proposal,
    evidenceDigest: digest,
    authority,
    decision: 'approve',
    channelAssurance: 'high',
    issuedAtMs: BASE_MS,
    expiresAtMs: BASE_MS + 60_000,
    recordedAtMs: BASE_MS + 5,
    evidence: { authority, proposal, nested: { list: [1, 'two', null, true] } },
  };
}

function expectCommitted(result: StoreCommitResult): readonly LedgerEvent[] {
  expect(result.kind).toBe('committed');
  return result.kind === 'committed' ? result.events : [];
}

async function mustCommit(store: GuardStore, write: StoreCommit): Promise<readonly LedgerEvent[]> {
  return expectCommitted(await store.commit(write));
}

/** Inserts a proposal and returns what the store now holds. */
async function seed(
  store: GuardStore,
  value: ProposalRecord,
  extra: Partial<Pick<StoreCommit, 'claim' | 'evidence'>> = {},
): Promise<ProposalRecord> {
  await mustCommit(store, insertCommit(value, extra));
  const stored = await store.getProposal(value.tenant, value.proposal);
  expect(stored).toStrictEqual(value);
  return stored as ProposalRecord;
}

/** Moves a stored proposal through `path` one compare-and-set at a time. */
async function walk(
  store: GuardStore,
  start: ProposalRecord,
  path: readonly ProposalStatus[],
): Promise<ProposalRecord> {
  let current = start;
  for (const status of path) {
    await mustCommit(store, updateCommit(current, { status }));
    const next = await store.getProposal(current.tenant, current.proposal);
    expect(next?.status).toBe(status);
    current = next as ProposalRecord;
  }
  return current;
}

async function snapshotTenant(store: GuardStore, tenant: string, proposals: readonly string[]) {
  return {
    proposals: await Promise.all(proposals.map((id) => store.getProposal(tenant, id))),
    evidence: await Promise.all(proposals.map((id) => store.listEvidence(tenant, id))),
    ledger: await store.readLedger({ tenant }),
    head: await store.ledgerHead(tenant),
  };
}

async function expectInvariantError(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(StoreInvariantError);
  expect((error as StoreInvariantError).code).toBe(code);
}

function expectValidChain(
  events: readonly LedgerEvent[],
  from?: { sequence: number; hash: string },
) {
  const verdict = verifyLedgerChain(events, from === undefined ? {} : { from });
  expect(verdict).toMatchObject({ kind: 'valid', count: events.length });
}

/**
 * Registers the conformance suite (vitest `describe`/`it`) for one adapter.
 * @throws Error when a skip has no reason or names a test the suite does not have.
 */
export function runStoreConformance(options: StoreConformanceOptions): void {
  const skipped = new Map<string, string>();
  for (const group of options.skip ?? []) {
    if (typeof group.reason !== 'string' || group.reason.trim() === '') {
      throw new Error(
        `runStoreConformance(${options.name}): every skip needs a reason; got none for ${JSON.stringify(group.tests)}`,
      );
    }
    if (group.tests.length === 0) {
      throw new Error(
        `runStoreConformance(${options.name}): skip "${group.reason}" names no tests`,
      );
    }
    for (const test of group.tests) skipped.set(test, group.reason);
  }
  const registered = new Set<string>();
  const propertyRuns = options.propertyRuns ?? 25;

  /** Registers one test that gets a fresh store, closed afterwards. */
  const test = (
    name: string,
    body: (store: GuardStore) => Promise<void>,
    config: { closesStore?: boolean; timeoutMs?: number } = {},
  ): void => {
    registered.add(name);
    const reason = skipped.get(name);
    if (reason !== undefined) {
      it.skip(`${name} [skipped: ${reason}]`, () => {});
      return;
    }
    it(
      name,
      async () => {
        const store = await options.newStore();
        try {
          await body(store);
        } finally {
          if (config.closesStore !== true) await store.close();
        }
      },
      config.timeoutMs,
    );
  };

  describe(`${options.name} store conformance`, () => {
    describe('proposals', () => {
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
            events: [
              draft(id, 'policy_decided', value.status, 1, { reasonCode: text, note: text }),
            ],
          });
          expect(await store.getProposal(tenant, id)).toStrictEqual(value);
          const [stored] = await store.readLedger({ tenant, proposal: id });
          expect(stored).toStrictEqual(events[0]);
          expect(stored?.data).toStrictEqual({ reasonCode: text, note: text });
          expect(await store.listProposalsByEffect(tenant, value.effectScope)).toHaveLength(1);
        }
        expectValidChain(await store.readLedger({ tenant }));
        // The tables are still there and still work for an ordinary tenant.
        const other = freshTenant('after-hostile');
        await mustCommit(store, insertCommit(record(other, 'p-ok')));
        expect((await store.getProposal(other, 'p-ok'))?.proposal).toBe('p-ok');
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
        expect(await store.getProposal(tenant, 'p-full')).toStrictEqual(full);
        expect(await store.getProposal(tenant, 'p-bare')).toStrictEqual(bare);
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({
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
        expect(await store.getProposal(tenant, 'p-2')).toBeUndefined();
        expect(await store.getProposal(freshTenant('other'), 'p-1')).toBeUndefined();
      });

      test('inserting an existing proposal id returns proposal_exists and stores nothing', async (store) => {
        const tenant = freshTenant('exists');
        const first = await seed(store, record(tenant, 'p-1'));
        const before = await snapshotTenant(store, tenant, ['p-1']);
        const again = record(tenant, 'p-1', { principal: 'user:mallory' });
        const result = await store.commit(
          insertCommit(again, { evidence: [evidence(tenant, 'p-1', 'd-1')] }),
        );
        expect(result).toStrictEqual({ kind: 'proposal_exists' });
        expect(await snapshotTenant(store, tenant, ['p-1'])).toStrictEqual(before);
        expect(await store.getProposal(tenant, 'p-1')).toStrictEqual(first);
      });

      test('a compare-and-set at the stored revision and status applies and bumps the revision', async (store) => {
        const tenant = freshTenant('cas');
        const stored = await seed(store, record(tenant, 'p-1'));
        const events = await mustCommit(
          store,
          updateCommit(stored, { status: 'executing', lease: { owner: 'w', expiresAtMs: 9 } }),
        );
        const after = await store.getProposal(tenant, 'p-1');
        expect(after).toStrictEqual({
          ...stored,
          status: 'executing',
          revision: 2,
          lease: { owner: 'w', expiresAtMs: 9 },
        });
        expect(events.map((event) => [event.sequence, event.status, event.revision])).toEqual([
          [2, 'executing', 2],
        ]);
      });

      test('a compare-and-set from a stale revision returns revision_conflict with the current record', async (store) => {
        const tenant = freshTenant('stale');
        const first = await seed(store, record(tenant, 'p-1'));
        const second = await walk(store, first, ['authorized']);
        const before = await snapshotTenant(store, tenant, ['p-1']);
        const result = await store.commit(updateCommit(first, { status: 'executing' }));
        expect(result).toStrictEqual({ kind: 'revision_conflict', current: second });
        expect(await snapshotTenant(store, tenant, ['p-1'])).toStrictEqual(before);
      });

      test('a compare-and-set expecting the wrong status returns revision_conflict', async (store) => {
        const tenant = freshTenant('wrong-status');
        const stored = await seed(store, record(tenant, 'p-1'));
        const pretend: ProposalRecord = { ...stored, status: 'awaiting_authority' };
        const result = await store.commit(updateCommit(pretend, { status: 'authorized' }));
        expect(result).toStrictEqual({ kind: 'revision_conflict', current: stored });
        expect(await store.getProposal(tenant, 'p-1')).toStrictEqual(stored);
        expect(await store.readLedger({ tenant })).toHaveLength(1);
      });

      test('a compare-and-set on a missing proposal returns revision_conflict without a record', async (store) => {
        const tenant = freshTenant('cas-missing');
        const ghost = record(tenant, 'p-ghost');
        const result = await store.commit(updateCommit(ghost, { status: 'executing' }));
        expect(result).toStrictEqual({ kind: 'revision_conflict', current: undefined });
        expect(await store.getProposal(tenant, 'p-ghost')).toBeUndefined();
        expect(await store.readLedger({ tenant })).toStrictEqual([]);
        expect(await store.ledgerHead(tenant)).toBeUndefined();
      });

      test('an illegal transition throws StoreInvariantError illegal_transition and stores nothing', async (store) => {
        const tenant = freshTenant('illegal');
        const stored = await seed(store, record(tenant, 'p-1'), {
          claim: claimFor(record(tenant, 'p-1')),
        });
        const before = await snapshotTenant(store, tenant, ['p-1']);
        await expectInvariantError(
          store.commit(updateCommit(stored, { status: 'verified' })),
          'illegal_transition',
        );
        await expectInvariantError(
          store.commit(insertCommit(record(tenant, 'p-2', { status: 'executing' }))),
          'illegal_transition',
        );
        expect(await snapshotTenant(store, tenant, ['p-1'])).toStrictEqual(before);
        expect(await store.getProposal(tenant, 'p-2')).toBeUndefined();
      });

      test('a move to executing without the effect claim, or an operator-only move without its attestation, throws illegal_transition and stores nothing', async (store) => {
        const tenant = freshTenant('rules');
        const stored = await seed(store, record(tenant, 'p-1'));
        const before = await snapshotTenant(store, tenant, ['p-1']);
        const { claim: _claim, ...unclaimed } = updateCommit(stored, { status: 'executing' });
        await expectInvariantError(store.commit(unclaimed), 'illegal_transition');
        expect(await snapshotTenant(store, tenant, ['p-1'])).toStrictEqual(before);
        const unknown = await walk(store, stored, ['executing', 'failed_unknown']);
        const settled = await snapshotTenant(store, tenant, ['p-1']);
        await expectInvariantError(
          store.commit(updateCommit(unknown, { status: 'failed_known' })),
          'illegal_transition',
        );
        expect(await snapshotTenant(store, tenant, ['p-1'])).toStrictEqual(settled);
        await mustCommit(
          store,
          updateCommit(
            unknown,
            { status: 'failed_known' },
            { events: [draft('p-1', 'operator_resolved', 'failed_known', unknown.revision + 1)] },
          ),
        );
        expect((await store.getProposal(tenant, 'p-1'))?.status).toBe('failed_known');
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
        await expectInvariantError(store.commit(jump), 'store_commit_malformed');
        await expectInvariantError(
          store.commit(insertCommit(record(tenant, 'p-2', { revision: 2 }))),
          'store_commit_malformed',
        );
        expect(await snapshotTenant(store, tenant, ['p-1'])).toStrictEqual(before);
      });

      test('a malformed commit (tenant mismatch, no events, claim without its proposal) throws and stores nothing', async (store) => {
        const tenant = freshTenant('malformed');
        const stored = await seed(store, record(tenant, 'p-1'));
        const before = await snapshotTenant(store, tenant, ['p-1']);
        const other = record(freshTenant('elsewhere'), 'p-9');
        await expectInvariantError(
          store.commit({ ...insertCommit(other), tenant }),
          'store_commit_malformed',
        );
        await expectInvariantError(
          store.commit({ ...updateCommit(stored, { status: 'executing' }), events: [] }),
          'store_commit_malformed',
        );
        await expectInvariantError(
          store.commit({ tenant, claim: claimFor(stored), events: [] }),
          'store_commit_malformed',
        );
        await expectInvariantError(
          store.commit({
            tenant,
            evidence: [evidence(other.tenant, 'p-1', 'd-x')],
            events: [],
          }),
          'store_commit_malformed',
        );
        expect(await snapshotTenant(store, tenant, ['p-1'])).toStrictEqual(before);
        expect(await store.getEffectClaim(tenant, stored.effectScope)).toBeUndefined();
      });
    });

    describe('effect claims', () => {
      test('the first proposal to claim an effect holds it', async (store) => {
        const tenant = freshTenant('claim-first');
        const stored = await seed(store, record(tenant, 'p-1'));
        expect(await store.getEffectClaim(tenant, stored.effectScope)).toBeUndefined();
        await mustCommit(
          store,
          updateCommit(stored, { status: 'executing' }, { claim: claimFor(stored, BASE_MS + 7) }),
        );
        expect(await store.getEffectClaim(tenant, stored.effectScope)).toStrictEqual({
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
        expect(await store.getEffectClaim(tenant, stored.effectScope)).toMatchObject({
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
        expect(result).toStrictEqual({ kind: 'effect_claimed', owner: 'p-1' });
        expect(await snapshotTenant(store, tenant, ['p-1', 'p-2'])).toStrictEqual(before);
        expect(await store.getEffectClaim(tenant, owner.effectScope)).toMatchObject({
          proposal: 'p-1',
        });
        const inserted = await store.commit(
          insertCommit(record(tenant, 'p-3', shared), {
            claim: claimFor(record(tenant, 'p-3', shared)),
          }),
        );
        expect(inserted).toStrictEqual({ kind: 'effect_claimed', owner: 'p-1' });
        expect(await store.getProposal(tenant, 'p-3')).toBeUndefined();
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
        expect(await store.getEffectClaim(tenant, owner.effectScope)).toStrictEqual({
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
        expect(await store.getEffectClaim(tenant, owner.effectScope)).toMatchObject({
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
          expect({ label, result }).toStrictEqual({
            label,
            result: { kind: 'effect_claimed', owner: owner.proposal },
          });
          expect(await store.getProposal(tenant, rival.proposal)).toStrictEqual(rival);
        }
      });
    });

    describe('authority evidence', () => {
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
        expect(await store.listEvidence(tenant, 'p-1')).toStrictEqual([...first, third]);
        expect(await store.listEvidence(tenant, 'p-2')).toStrictEqual([]);
        expect(await store.listEvidence(freshTenant('other'), 'p-1')).toStrictEqual([]);
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
        expect(result).toStrictEqual({ kind: 'evidence_duplicate', evidenceDigest: 'd-1' });
        expect(await snapshotTenant(store, tenant, ['p-1'])).toStrictEqual(before);
        expect(await store.getEffectClaim(tenant, stored.effectScope)).toBeUndefined();
      });

      test('the same digest twice in one commit returns evidence_duplicate', async (store) => {
        const tenant = freshTenant('evidence-twice');
        const value = record(tenant, 'p-1');
        const result = await store.commit(
          insertCommit(value, {
            evidence: [evidence(tenant, 'p-1', 'd-1'), evidence(tenant, 'p-1', 'd-1')],
          }),
        );
        expect(result).toStrictEqual({ kind: 'evidence_duplicate', evidenceDigest: 'd-1' });
        expect(await store.getProposal(tenant, 'p-1')).toBeUndefined();
        expect(await store.readLedger({ tenant })).toStrictEqual([]);
      });

      test('the same digest may be stored for two different proposals', async (store) => {
        const tenant = freshTenant('evidence-two');
        await seed(store, record(tenant, 'p-1'), { evidence: [evidence(tenant, 'p-1', 'd-1')] });
        await seed(store, record(tenant, 'p-2'), { evidence: [evidence(tenant, 'p-2', 'd-1')] });
        expect(await store.listEvidence(tenant, 'p-2')).toHaveLength(1);
      });
    });

    describe('concurrency', () => {
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
        expect(winners).toHaveLength(1);
        const owner = winners[0];
        expect(results.filter((result) => result.kind === 'effect_claimed')).toHaveLength(31);
        for (const result of results) {
          if (result.kind !== 'committed')
            expect(result).toStrictEqual({ kind: 'effect_claimed', owner });
        }
        expect((await store.getEffectClaim(tenant, seeded[0]!.effectScope))?.proposal).toBe(owner);
        const executing = (
          await Promise.all(ids.map((id) => store.getProposal(tenant, id)))
        ).filter((value) => value?.status === 'executing');
        expect(executing.map((value) => value?.proposal)).toEqual([owner]);
        const ledger = await store.readLedger({ tenant });
        expect(ledger).toHaveLength(33);
        expectValidChain(ledger);
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
        expect(applied).toHaveLength(1);
        const after = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
        expect(after.revision).toBe(2);
        for (const result of results) {
          if (result.kind !== 'committed') {
            expect(result).toStrictEqual({ kind: 'revision_conflict', current: after });
          }
        }
        const ledger = await store.readLedger({ tenant });
        expect(ledger).toHaveLength(2);
        expectValidChain(ledger);
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
        expect(ledger).toHaveLength(committedEvents);
        expect(ledger.map((event) => event.sequence)).toEqual(
          Array.from({ length: committedEvents }, (_, index) => index + 1),
        );
        expectValidChain(ledger);
        expect(await store.ledgerHead(tenant)).toStrictEqual({
          sequence: committedEvents,
          hash: ledger.at(-1)?.hash,
        });
        for (const id of callers) {
          expect((await store.getProposal(tenant, id))?.revision).toBe(5);
        }
      });
    });

    describe('ledger', () => {
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
        expect(ledger.map((event) => event.sequence)).toEqual([1, 2, 3, 4]);
        expect(ledger.slice(1)).toStrictEqual([...second, ...tenantLevel]);
        expect(ledger[2]?.previousHash).toBe(ledger[1]?.hash);
        expectValidChain(ledger);
        expect(await store.ledgerHead(tenant)).toStrictEqual({
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
        expect(bad.status).toBe('rejected');
        const error =
          bad.status === 'rejected' ? (bad.reason as ContractViolationError) : undefined;
        expect(error).toBeInstanceOf(ContractViolationError);
        expect(error?.code).toBe('canonical_json_invalid');
        expect(good.status === 'fulfilled' ? good.value.kind : good.reason).toBe('committed');
        const after = await snapshotTenant(store, tenant, ['p-1']);
        expect(after.proposals).toStrictEqual(before.proposals);
        expect(await store.getEffectClaim(tenant, stored.effectScope)).toBeUndefined();
        expect(after.ledger.map((event) => event.proposal)).toEqual(['p-1', 'p-2']);
        expectValidChain(after.ledger);
      });

      test('a commit with no events and no proposal changes nothing in the ledger', async (store) => {
        const tenant = freshTenant('ledger-empty');
        expect(await store.commit({ tenant, events: [] })).toStrictEqual({
          kind: 'committed',
          events: [],
        });
        expect(await store.ledgerHead(tenant)).toBeUndefined();
        expect(await store.readLedger({ tenant })).toStrictEqual([]);
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
        expect(alphaLedger.map((event) => [event.tenant, event.sequence])).toEqual([
          [alpha, 1],
          [alpha, 2],
        ]);
        expect(betaLedger.map((event) => [event.tenant, event.sequence])).toEqual([
          [beta, 1],
          [beta, 2],
        ]);
        expectValidChain(alphaLedger);
        expectValidChain(betaLedger);
        expect(alphaLedger[0]?.hash).not.toBe(betaLedger[0]?.hash);
        expect((await store.getProposal(beta, 'p-1'))?.principal).toBe('user:bob');
        expect((await store.getEffectClaim(alpha, a.effectScope))?.tenant).toBe(alpha);
        expect((await store.getEffectClaim(beta, b.effectScope))?.tenant).toBe(beta);
        expect(await store.listProposalsByEffect(alpha, a.effectScope)).toHaveLength(1);
        expect(await store.readLedger({ tenant: freshTenant('gamma') })).toStrictEqual([]);
      });

      test('readLedger filters by afterSequence, proposal and limit', async (store) => {
        const tenant = freshTenant('ledger-filter');
        const one = await seed(store, record(tenant, 'p-1'));
        const two = await seed(store, record(tenant, 'p-2'));
        await walk(store, one, ['authorized', 'executing']);
        await walk(store, two, ['executing']);
        await mustCommit(store, { tenant, events: [draft(null, 'contract_rejected', null, null)] });
        const all = await store.readLedger({ tenant });
        expect(all.map((event) => [event.sequence, event.proposal])).toEqual([
          [1, 'p-1'],
          [2, 'p-2'],
          [3, 'p-1'],
          [4, 'p-1'],
          [5, 'p-2'],
          [6, null],
        ]);
        const seq = async (query: Omit<Parameters<GuardStore['readLedger']>[0], 'tenant'>) =>
          (await store.readLedger({ tenant, ...query })).map((event) => event.sequence);
        expect(await seq({ afterSequence: 3 })).toEqual([4, 5, 6]);
        expect(await seq({ proposal: 'p-1' })).toEqual([1, 3, 4]);
        expect(await seq({ proposal: 'p-2', afterSequence: 1 })).toEqual([2, 5]);
        expect(await seq({ limit: 2 })).toEqual([1, 2]);
        expect(await seq({ afterSequence: 2, limit: 2 })).toEqual([3, 4]);
        expect(await seq({ proposal: 'p-1', afterSequence: 1, limit: 1 })).toEqual([3]);
        expect(await seq({ limit: 0 })).toEqual([]);
        expect(await seq({ afterSequence: 6 })).toEqual([]);
        expect(await seq({ proposal: 'p-none' })).toEqual([]);
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
        expect(full).toHaveLength(10);
        expect(await store.ledgerCheckpoint(tenant)).toBeUndefined();
        await store.truncateLedger(tenant, 0);
        expect(await store.ledgerCheckpoint(tenant)).toBeUndefined();
        await store.truncateLedger(tenant, 4);
        const checkpoint = { sequence: 4, hash: full[3]?.hash as string };
        expect(await store.ledgerCheckpoint(tenant)).toStrictEqual(checkpoint);
        const rest = await store.readLedger({ tenant });
        expect(rest).toStrictEqual(full.slice(4));
        expectValidChain(rest, checkpoint);
        expect(verifyLedgerChain(rest).kind).toBe('invalid');
        expect(await store.ledgerHead(tenant)).toStrictEqual({ sequence: 10, hash: full[9]?.hash });
        await store.truncateLedger(tenant, 2);
        expect(await store.ledgerCheckpoint(tenant)).toStrictEqual(checkpoint);
        const current = (await store.getProposal(tenant, 'p-1')) as ProposalRecord;
        const more = await mustCommit(store, updateCommit(current, { status: 'executing' }));
        expect(more.map((event) => event.sequence)).toEqual([11]);
        expect(more[0]?.previousHash).toBe(full[9]?.hash);
        await store.truncateLedger(tenant, 11);
        expect(await store.readLedger({ tenant })).toStrictEqual([]);
        expect(await store.ledgerCheckpoint(tenant)).toStrictEqual({
          sequence: 11,
          hash: more[0]?.hash,
        });
        expect(await store.ledgerHead(tenant)).toStrictEqual({ sequence: 11, hash: more[0]?.hash });
        const after = await mustCommit(store, {
          tenant,
          events: [draft(null, 'contract_rejected', null, null)],
        });
        expect(after[0]?.sequence).toBe(12);
        expectValidChain(await store.readLedger({ tenant }), {
          sequence: 11,
          hash: more[0]?.hash as string,
        });
      });
    });

    describe('queries', () => {
      test('listProposalsByEffect returns newest first, ties broken by id descending, within the limit', async (store) => {
        const tenant = freshTenant('by-effect');
        const shared = { semanticEffectKey: 'sek-shared' };
        const created: Array<[string, number]> = [
          ['p-a', BASE_MS + 10],
          ['p-b', BASE_MS + 30],
          ['p-c', BASE_MS + 20],
          ['p-d', BASE_MS + 30],
        ];
        for (const [id, createdAtMs] of created) {
          await seed(store, record(tenant, id, { ...shared, createdAtMs }));
        }
        await seed(store, record(tenant, 'p-other', { semanticEffectKey: 'sek-other' }));
        const scope = record(tenant, 'x', shared).effectScope;
        const ids = async (limit?: number) =>
          (await store.listProposalsByEffect(tenant, scope, limit)).map((value) => value.proposal);
        expect(await ids()).toEqual(['p-d', 'p-b', 'p-c', 'p-a']);
        expect(await ids(2)).toEqual(['p-d', 'p-b']);
        expect(await store.listProposalsByEffect(tenant, 'none#x')).toStrictEqual([]);
        const listed = await store.listProposalsByEffect(tenant, scope, 1);
        expect(listed[0]).toStrictEqual(await store.getProposal(tenant, 'p-d'));
      });

      test('listDue returns proposals in the given statuses due by the time, oldest due first', async (store) => {
        const tenant = freshTenant('due');
        const rows: Array<[string, ProposalStatus, number | null]> = [
          ['p-1', 'awaiting_authority', BASE_MS + 300],
          ['p-2', 'awaiting_authority', BASE_MS + 100],
          ['p-3', 'authorized', BASE_MS + 50],
          ['p-4', 'awaiting_authority', BASE_MS + 900],
          ['p-5', 'awaiting_authority', null],
          ['p-6', 'blocked', BASE_MS + 10],
        ];
        for (const [id, status, dueAtMs] of rows) {
          await seed(store, record(tenant, id, { status, dueAtMs }));
        }
        const ids = async (statuses: readonly ProposalStatus[], at: number, limit?: number) =>
          (
            await store.listDue({
              tenant,
              statuses,
              dueAtOrBeforeMs: at,
              ...(limit === undefined ? {} : { limit }),
            })
          ).map((value) => value.proposal);
        expect(await ids(['awaiting_authority'], BASE_MS + 300)).toEqual(['p-2', 'p-1']);
        expect(await ids(['awaiting_authority', 'authorized'], BASE_MS + 300)).toEqual([
          'p-3',
          'p-2',
          'p-1',
        ]);
        expect(await ids(['awaiting_authority', 'authorized'], BASE_MS + 300, 2)).toEqual([
          'p-3',
          'p-2',
        ]);
        expect(await ids(['awaiting_authority'], BASE_MS + 99)).toEqual([]);
        expect(await ids([], BASE_MS + 10_000)).toEqual([]);
        expect(await ids(['verified'], BASE_MS + 10_000)).toEqual([]);
        const due = await store.listDue({
          tenant,
          statuses: ['blocked'],
          dueAtOrBeforeMs: BASE_MS + 10,
        });
        expect(due).toStrictEqual([await store.getProposal(tenant, 'p-6')]);
        const moved = await walk(
          store,
          (await store.getProposal(tenant, 'p-2')) as ProposalRecord,
          ['denied'],
        );
        expect(moved.status).toBe('denied');
        expect(await ids(['awaiting_authority'], BASE_MS + 300)).toEqual(['p-1']);
      });
    });

    describe('lifecycle', () => {
      test(
        'close() releases the store and later calls fail',
        async (store) => {
          const tenant = freshTenant('close');
          await seed(store, record(tenant, 'p-1'));
          await store.close();
          await expect(store.getProposal(tenant, 'p-1')).rejects.toThrow();
          await expect(store.commit(insertCommit(record(tenant, 'p-2')))).rejects.toThrow();
        },
        { closesStore: true },
      );

      test(
        'commits issued just before close() still settle',
        async (store) => {
          const tenant = freshTenant('close-drain');
          const pending = Array.from({ length: 8 }, (_, index) =>
            store.commit(insertCommit(record(tenant, `p-${index}`))),
          );
          const closing = store.close();
          const results = await Promise.allSettled(pending);
          await closing;
          for (const result of results) {
            expect(result.status === 'fulfilled' ? result.value.kind : 'rejected').toMatch(
              /^(committed|rejected)$/,
            );
          }
        },
        { closesStore: true },
      );
    });

    describe('properties (fast-check, memory store as the model)', () => {
      test(
        'a random sequence of commits decides exactly as the memory model, the chain verifies and revisions count applied writes',
        async (store) => {
          await fc.assert(
            fc.asyncProperty(commandsArbitrary, async (commands) => {
              const tenant = freshTenant('prop');
              const model = createMemoryStore();
              const applied = new Map<string, number>();
              for (const command of commands) {
                const write = await buildWrite(model, tenant, command);
                const [actual, expected] = await Promise.all([
                  settle(store.commit(write)),
                  settle(model.commit(write)),
                ]);
                expect(actual).toStrictEqual(expected);
                if (actual.kind === 'committed' && write.proposal !== undefined) {
                  const id = write.proposal.record.proposal;
                  applied.set(id, (applied.get(id) ?? 0) + 1);
                }
              }
              for (const slot of SLOTS) {
                const stored = await store.getProposal(tenant, slot);
                expect(stored).toStrictEqual(await model.getProposal(tenant, slot));
                expect(stored?.revision ?? 0).toBe(applied.get(slot) ?? 0);
                expect(await store.listEvidence(tenant, slot)).toStrictEqual(
                  await model.listEvidence(tenant, slot),
                );
              }
              for (const scope of SCOPES) {
                expect(await store.getEffectClaim(tenant, scope)).toStrictEqual(
                  await model.getEffectClaim(tenant, scope),
                );
              }
              const ledger = await store.readLedger({ tenant });
              expect(ledger).toStrictEqual(await model.readLedger({ tenant }));
              expectValidChain(ledger);
            }),
            { numRuns: propertyRuns },
          );
        },
        { timeoutMs: 120_000 },
      );

      test(
        'random commits issued concurrently keep the chain valid, revisions equal to applied writes and at most one claim holder',
        async (store) => {
          await fc.assert(
            fc.asyncProperty(
              fc.array(fc.array(commandArbitrary, { minLength: 1, maxLength: 8 }), {
                minLength: 1,
                maxLength: 5,
              }),
              async (rounds) => {
                const tenant = freshTenant('prop-concurrent');
                const applied = new Map<string, number>();
                let events = 0;
                for (const round of rounds) {
                  const writes = await Promise.all(
                    round.map((command) => buildWrite(store, tenant, command)),
                  );
                  const results = await Promise.all(
                    writes.map((write) => settle(store.commit(write))),
                  );
                  for (const [index, result] of results.entries()) {
                    const write = writes[index] as StoreCommit;
                    if (result.kind !== 'committed') continue;
                    events += result.events.length;
                    if (write.proposal !== undefined) {
                      const id = write.proposal.record.proposal;
                      applied.set(id, (applied.get(id) ?? 0) + 1);
                    }
                  }
                }
                for (const slot of SLOTS) {
                  expect((await store.getProposal(tenant, slot))?.revision ?? 0).toBe(
                    applied.get(slot) ?? 0,
                  );
                }
                const ledger = await store.readLedger({ tenant });
                expect(ledger).toHaveLength(events);
                expectValidChain(ledger);
                for (const scope of SCOPES) {
                  const claim = await store.getEffectClaim(tenant, scope);
                  if (claim !== undefined) {
                    expect((await store.getProposal(tenant, claim.proposal))?.effectScope).toBe(
                      scope,
                    );
                  }
                }
              },
            ),
            { numRuns: Math.max(1, Math.floor(propertyRuns / 2)) },
          );
        },
        { timeoutMs: 120_000 },
      );
    });
  });

  for (const name of skipped.keys()) {
    if (!registered.has(name)) {
      throw new Error(
        `runStoreConformance(${options.name}): skip names an unknown test ${JSON.stringify(name)}`,
      );
    }
  }
}

// ---- model-based commands ---------------------------------------------------------------------

const SLOTS = ['p-0', 'p-1', 'p-2', 'p-3'] as const;
const SCOPE_KEYS = ['sek-even', 'sek-odd'] as const;
const SCOPES = SCOPE_KEYS.map((key) => `support.refund@1#${key}`);

type Command =
  | {
      readonly kind: 'insert';
      readonly slot: number;
      readonly initial: number;
      readonly claim: boolean;
      readonly digest: number | null;
    }
  | {
      readonly kind: 'update';
      readonly slot: number;
      readonly pick: number;
      readonly stale: boolean;
      readonly claim: boolean;
      readonly digest: number | null;
      readonly events: number;
    }
  | { readonly kind: 'evidence'; readonly slot: number; readonly digests: readonly number[] }
  | { readonly kind: 'tenant_event'; readonly count: number };

const digestArbitrary = fc.option(fc.integer({ min: 0, max: 3 }), { nil: null });
const commandArbitrary: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant('insert' as const),
    slot: fc.integer({ min: 0, max: SLOTS.length - 1 }),
    initial: fc.nat(),
    claim: fc.boolean(),
    digest: digestArbitrary,
  }),
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('update' as const),
      slot: fc.integer({ min: 0, max: SLOTS.length - 1 }),
      pick: fc.nat(),
      stale: fc.boolean(),
      claim: fc.boolean(),
      digest: digestArbitrary,
      events: fc.integer({ min: 1, max: 3 }),
    }),
  },
  fc.record({
    kind: fc.constant('evidence' as const),
    slot: fc.integer({ min: 0, max: SLOTS.length - 1 }),
    digests: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('tenant_event' as const), count: fc.integer({ min: 0, max: 2 }) }),
);
const commandsArbitrary = fc.array(commandArbitrary, { minLength: 1, maxLength: 30 });

const INITIAL = [...INITIAL_STATUSES];

/** Turns a command into a write against what `reference` currently holds. */
async function buildWrite(
  reference: GuardStore,
  tenant: string,
  command: Command,
): Promise<StoreCommit> {
  if (command.kind === 'tenant_event') {
    return {
      tenant,
      events: Array.from({ length: command.count }, (_, index) =>
        draft(null, 'contract_rejected', null, null, { index }),
      ),
    };
  }
  const slot = SLOTS[command.slot] as string;
  const semanticEffectKey = SCOPE_KEYS[command.slot % 2] as string;
  if (command.kind === 'evidence') {
    return {
      tenant,
      evidence: command.digests.map((digest) => evidence(tenant, slot, `d-${digest}`)),
      events: [draft(slot, 'authority_recorded', null, null)],
    };
  }
  const evidenceOf = (digest: number | null) =>
    digest === null ? {} : { evidence: [evidence(tenant, slot, `d-${digest}`)] };
  if (command.kind === 'insert') {
    const status = INITIAL[command.initial % INITIAL.length] as ProposalStatus;
    const value = record(tenant, slot, { status, semanticEffectKey });
    return insertCommit(value, {
      ...(command.claim ? { claim: claimFor(value) } : {}),
      ...evidenceOf(command.digest),
    });
  }
  const current =
    (await reference.getProposal(tenant, slot)) ?? record(tenant, slot, { semanticEffectKey });
  const allowed = TRANSITIONS[current.status];
  const status =
    allowed.length === 0
      ? current.status
      : (allowed[command.pick % allowed.length] as ProposalStatus);
  const base: ProposalRecord =
    command.stale && current.revision > 1
      ? { ...current, revision: current.revision - 1 }
      : current;
  if (allowed.length === 0) {
    // Erased proposals accept nothing: use an allowed-looking but refused write (stale base).
    return {
      ...updateCommit({ ...base, status: 'verified' }, { status: 'erased' }),
    };
  }
  const write = updateCommit(
    base,
    { status, updatedAtMs: BASE_MS + command.pick },
    {
      ...(command.claim ? { claim: claimFor(current) } : {}),
      ...evidenceOf(command.digest),
      events: Array.from({ length: command.events }, (_, index) =>
        draft(
          slot,
          index === 0 ? 'commit_started' : 'idempotency_decided',
          status,
          base.revision + 1,
        ),
      ),
    },
  );
  return write;
}

/** A commit result, or the invariant error code it threw (so store and model compare). */
async function settle(
  promise: Promise<StoreCommitResult>,
): Promise<StoreCommitResult | { kind: 'threw'; code: string }> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof StoreInvariantError) return { kind: 'threw', code: error.code };
    throw error;
  }
}
