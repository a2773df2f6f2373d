import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  APPROVAL_AMOUNT,
  decide,
  evidenceFor,
  type Harness,
  ledgerOf,
  ofType,
  PRINCIPAL,
  prepareForApproval,
  present,
} from '../../test/support/evidence-helpers.js';
import { createHarness, refundAction, refundArgs } from '../../test/support/guard-harness.js';
import {
  type ActionDefinition,
  type AuthorityEvidence,
  AuthorityEvidenceError,
  approvals,
  type EvidenceRejection,
  ProposalNotFoundError,
} from '../index.js';
import { createMemoryStore } from '../stores/memory/memory-store.js';
import type { Breakage } from './breakages.js';
import type { GuardStore } from './store.js';

const MINUTE = 60_000;

/** Evidence valid for `validForMs` from now, built from the bindings but NOT capped at expiry. */
async function uncappedEvidence(
  harness: Harness,
  proposal: string,
  authority: string,
  validForMs: number,
): Promise<AuthorityEvidence> {
  const evidence = await evidenceFor(harness, proposal, authority);
  const now = harness.clock.now();
  return {
    ...evidence,
    issuedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + validForMs).toISOString(),
  };
}

async function expectNothingCounted(harness: Harness, proposal: string): Promise<void> {
  expect(await harness.store.listEvidence(harness.tenant, proposal)).toHaveLength(0);
  const view = await harness.guard.read(harness.refund, {
    tenant: harness.tenant,
    proposal,
    reader: PRINCIPAL,
  });
  expect(view.authority.approvers).toEqual([]);
  expect(view.authority.rejectedBy).toBeNull();
}

describe('authority evidence built from read', () => {
  it('authorizes a 2-of-3 proposal with two distinct approvals and executes it once', async () => {
    const h = createHarness();
    const prepared = await prepareForApproval(h);
    expect(prepared).toMatchObject({ outcome: 'authority_pending', status: 'awaiting_authority' });

    const first = await decide(h, prepared.proposal, 'finance-a');
    expect(first).toMatchObject({ outcome: 'authority_pending', status: 'awaiting_authority' });
    const second = await decide(h, prepared.proposal, 'finance-c', { channelAssurance: 'medium' });
    expect(second).toMatchObject({
      outcome: 'authorized',
      status: 'authorized',
      reasonCode: 'authority_satisfied',
    });

    const events = await ledgerOf(h, prepared.proposal);
    expect(ofType(events, 'authority_recorded').map((e) => e.data.authority)).toEqual([
      'finance-a',
      'finance-c',
    ]);
    const satisfied = ofType(events, 'authority_satisfied');
    expect(satisfied).toHaveLength(1);
    expect(satisfied[0]?.data.approvers).toEqual(['finance-a', 'finance-c']);
    expect(satisfied[0]?.status).toBe('authorized');

    const executed = await h.guard.execute(h.refund, {
      tenant: h.tenant,
      proposal: prepared.proposal,
    });
    expect(executed).toMatchObject({ outcome: 'verified', status: 'verified' });
    expect(h.provider.calls.execute).toBe(1);
  });

  it("keeps the approver's note only as a keyed digest and refuses an oversized one before writing", async () => {
    const h = createHarness();
    const prepared = await prepareForApproval(h);
    const evidence = await evidenceFor(h, prepared.proposal, 'finance-a');
    const note = 'Customer Ada sent photos of the damage';
    const before = (await ledgerOf(h)).length;
    const oversized = await h.guard
      .recordAuthority(h.refund, {
        tenant: h.tenant,
        evidence,
        authenticatedAuthority: 'finance-a',
        note: 'x'.repeat(1001),
      })
      .catch((e: unknown) => e);
    expect(oversized).toMatchObject({ code: 'invalid_argument' });
    expect((await ledgerOf(h)).length).toBe(before);
    await h.guard.recordAuthority(h.refund, {
      tenant: h.tenant,
      evidence,
      authenticatedAuthority: 'finance-a',
      note,
    });
    const [recorded] = ofType(await ledgerOf(h, prepared.proposal), 'authority_recorded');
    expect(recorded?.data.noteDigest).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(JSON.stringify(recorded)).not.toContain('Ada');
  });

  it('authorizes a single-approval rule with the one declared authority and nobody else', async () => {
    const h = createHarness();
    const single = refundAction(h.provider, { approval: approvals.single('manager') });
    const prepared = await prepareForApproval(h, {}, single);
    expect(prepared.status).toBe('awaiting_authority');

    const outsider = await decide(h, prepared.proposal, 'finance-a', {}, single);
    expect(outsider).toMatchObject({
      outcome: 'rejected',
      status: 'awaiting_authority',
      reasonCode: 'authority_not_declared',
    });
    const approved = await decide(h, prepared.proposal, 'manager', {}, single);
    expect(approved).toMatchObject({ outcome: 'authorized', status: 'authorized' });

    const executed = await h.guard.execute(single, {
      tenant: h.tenant,
      proposal: prepared.proposal,
    });
    expect(executed.outcome).toBe('verified');
    expect(h.provider.calls.execute).toBe(1);
  });

  it.each(['lead-1', 'lead-2'])(
    'authorizes an any-of rule with the approval of %s alone',
    async (authority) => {
      const h = createHarness();
      const anyOf = refundAction(h.provider, {
        approval: approvals.anyOf(['lead-1', { id: 'lead-2', requiredAssurance: 'low' }]),
      });
      const prepared = await prepareForApproval(h, {}, anyOf);
      const approved = await decide(
        h,
        prepared.proposal,
        authority,
        { channelAssurance: authority === 'lead-2' ? 'low' : 'medium' },
        anyOf,
      );
      expect(approved).toMatchObject({ outcome: 'authorized', status: 'authorized' });
      const executed = await h.guard.execute(anyOf, {
        tenant: h.tenant,
        proposal: prepared.proposal,
      });
      expect(executed.outcome).toBe('verified');
      expect(h.provider.calls.execute).toBe(1);
    },
  );
});

interface MismatchSetup {
  readonly h: Harness;
  /** The proposal evidence is presented for. */
  readonly target: string;
  /** Another live proposal of the same action in the same tenant. */
  readonly other: string;
}

interface MismatchCase {
  readonly name: string;
  readonly code: EvidenceRejection;
  readonly make: (setup: MismatchSetup) => Promise<{ evidence: unknown; authenticated: string }>;
}

const own = async ({ h, target }: MismatchSetup, authority = 'finance-b') =>
  evidenceFor(h, target, authority, { channelAssurance: 'medium' });

const mismatchCases: readonly MismatchCase[] = [
  {
    name: 'names another tenant',
    code: 'evidence_tenant_mismatch',
    make: async (s) => ({
      evidence: { ...(await own(s)), tenant: 'tenant-b' },
      authenticated: 'finance-b',
    }),
  },
  {
    name: 'names another action type',
    code: 'evidence_action_mismatch',
    make: async (s) => ({
      evidence: { ...(await own(s)), actionType: 'support.refund@2' },
      authenticated: 'finance-b',
    }),
  },
  {
    name: "carries another proposal's effect key",
    code: 'evidence_effect_key_mismatch',
    make: async (s) => {
      const other = await evidenceFor(s.h, s.other, 'finance-b', { channelAssurance: 'medium' });
      return {
        evidence: { ...(await own(s)), semanticEffectKey: other.semanticEffectKey },
        authenticated: 'finance-b',
      };
    },
  },
  {
    name: "is bound to another proposal's commitment (a tampered approval)",
    code: 'evidence_commitment_mismatch',
    make: async (s) => {
      const other = await evidenceFor(s.h, s.other, 'finance-b', { channelAssurance: 'medium' });
      return {
        evidence: { ...(await own(s)), proposalCommitment: other.proposalCommitment },
        authenticated: 'finance-b',
      };
    },
  },
  {
    name: 'carries an altered commitment value',
    code: 'evidence_commitment_mismatch',
    make: async (s) => {
      const evidence = await own(s);
      const value = evidence.proposalCommitment.value;
      const flipped = `${value[0] === '0' ? '1' : '0'}${value.slice(1)}`;
      return {
        evidence: {
          ...evidence,
          proposalCommitment: { ...evidence.proposalCommitment, value: flipped },
        },
        authenticated: 'finance-b',
      };
    },
  },
  {
    name: 'is addressed to another audience',
    code: 'evidence_audience_mismatch',
    make: async (s) => ({
      evidence: { ...(await own(s)), audience: 'another-guard' },
      authenticated: 'finance-b',
    }),
  },
  {
    name: 'names an authority other than the authenticated one',
    code: 'authority_not_authenticated',
    make: async (s) => ({ evidence: await own(s), authenticated: 'finance-c' }),
  },
  {
    name: 'comes from an authority the rule does not declare',
    code: 'authority_not_declared',
    make: async (s) => ({ evidence: await own(s, 'mallory'), authenticated: 'mallory' }),
  },
  {
    name: 'comes over a medium channel from an authority that requires high assurance',
    code: 'channel_assurance_insufficient',
    make: async (s) => ({
      evidence: await evidenceFor(s.h, s.target, 'finance-a', { channelAssurance: 'medium' }),
      authenticated: 'finance-a',
    }),
  },
  {
    name: 'comes over a low channel from an authority that requires the default medium assurance',
    code: 'channel_assurance_insufficient',
    make: async (s) => ({
      evidence: await evidenceFor(s.h, s.target, 'finance-b', { channelAssurance: 'low' }),
      authenticated: 'finance-b',
    }),
  },
  {
    name: 'is issued in the future',
    code: 'evidence_not_yet_valid',
    make: async (s) => ({
      evidence: await evidenceFor(s.h, s.target, 'finance-b', {
        channelAssurance: 'medium',
        issuedAt: s.h.clock.now() + MINUTE,
      }),
      authenticated: 'finance-b',
    }),
  },
  {
    name: 'has already expired',
    code: 'evidence_expired',
    make: async (s) => ({
      evidence: await evidenceFor(s.h, s.target, 'finance-b', {
        channelAssurance: 'medium',
        issuedAt: s.h.clock.now() - 2 * MINUTE,
        validForMs: MINUTE,
      }),
      authenticated: 'finance-b',
    }),
  },
  {
    name: 'expires before it is issued',
    code: 'evidence_window_invalid',
    make: async (s) => {
      const evidence = await own(s);
      return {
        evidence: { ...evidence, expiresAt: new Date(s.h.clock.now() - 1).toISOString() },
        authenticated: 'finance-b',
      };
    },
  },
  {
    name: 'carries an unknown extra field',
    code: 'evidence_malformed',
    make: async (s) => ({
      evidence: { ...(await own(s)), approvedAmount: '9999.00' },
      authenticated: 'finance-b',
    }),
  },
  {
    name: 'has a wrong version',
    code: 'evidence_malformed',
    make: async (s) => ({ evidence: { ...(await own(s)), v: 2 }, authenticated: 'finance-b' }),
  },
  {
    name: 'has a string key version in its commitment',
    code: 'evidence_malformed',
    make: async (s) => {
      const evidence = await own(s);
      return {
        evidence: {
          ...evidence,
          proposalCommitment: { ...evidence.proposalCommitment, keyVersion: '1' },
        },
        authenticated: 'finance-b',
      };
    },
  },
  {
    name: 'has an unknown channel assurance',
    code: 'evidence_malformed',
    make: async (s) => ({
      evidence: { ...(await own(s)), channelAssurance: 'ultra' },
      authenticated: 'finance-b',
    }),
  },
  {
    name: 'has an unknown decision',
    code: 'evidence_malformed',
    make: async (s) => ({
      evidence: { ...(await own(s)), decision: 'maybe' },
      authenticated: 'finance-b',
    }),
  },
  {
    name: 'has a time that is not ISO-8601',
    code: 'evidence_malformed',
    make: async (s) => ({
      evidence: { ...(await own(s)), issuedAt: 'yesterday' },
      authenticated: 'finance-b',
    }),
  },
  {
    name: 'has a numeric tenant',
    code: 'evidence_malformed',
    make: async (s) => ({
      evidence: { ...(await own(s)), tenant: 42 },
      authenticated: 'finance-b',
    }),
  },
  {
    name: 'is missing its expiry',
    code: 'evidence_malformed',
    make: async (s) => {
      const { expiresAt: _dropped, ...rest } = await own(s);
      return { evidence: rest, authenticated: 'finance-b' };
    },
  },
];

describe('binding mismatches', () => {
  it.each(mismatchCases)(
    'rejects evidence that $name with $code and changes nothing',
    async ({ code, make }) => {
      const h = createHarness();
      const target = (await prepareForApproval(h)).proposal;
      const other = (await prepareForApproval(h, { orderId: 'ord_2002' })).proposal;
      const before = await h.store.getProposal(h.tenant, target);
      const { evidence, authenticated } = await make({ h, target, other });

      const result = await present(h, evidence, authenticated);
      expect(result).toMatchObject({
        proposal: target,
        outcome: 'rejected',
        status: 'awaiting_authority',
        revision: before?.revision,
        reasonCode: code,
      });
      expect(result.issues?.[0]?.code).toBe(code);

      const after = await h.store.getProposal(h.tenant, target);
      expect(after).toEqual(before);
      const rejected = ofType(await ledgerOf(h, target), 'authority_rejected');
      expect(rejected).toHaveLength(1);
      expect(rejected[0]?.data).toMatchObject({ reasonCode: code, authority: authenticated });
      expect(ofType(await ledgerOf(h), 'authority_recorded')).toHaveLength(0);
      await expectNothingCounted(h, target);

      const executed = await h.guard.execute(h.refund, { tenant: h.tenant, proposal: target });
      expect(executed).toMatchObject({
        outcome: 'authority_pending',
        status: 'awaiting_authority',
      });
      expect(h.provider.calls.execute).toBe(0);
    },
  );

  it('rejects evidence for another proposal replayed onto this one by swapping the proposal id', async () => {
    const h = createHarness();
    const target = (await prepareForApproval(h)).proposal;
    const other = (await prepareForApproval(h, { orderId: 'ord_2002' })).proposal;
    const forOther = await evidenceFor(h, other, 'finance-b', { channelAssurance: 'medium' });

    const result = await present(h, { ...forOther, proposal: target }, 'finance-b');
    expect(result).toMatchObject({
      proposal: target,
      outcome: 'rejected',
      status: 'awaiting_authority',
      reasonCode: 'evidence_effect_key_mismatch',
    });
    await expectNothingCounted(h, target);
    expect(await h.store.listEvidence(h.tenant, other)).toHaveLength(0);
  });

  it('rejects evidence of an expired proposal moved onto its same-effect successor by its commitment', async () => {
    const h = createHarness();
    const first = (await prepareForApproval(h)).proposal;
    const forFirst = await evidenceFor(h, first, 'finance-b', { channelAssurance: 'medium' });
    h.clock.advance(15 * MINUTE);
    expect((await h.guard.expireDue(h.refund, { tenant: h.tenant, proposal: first })).status).toBe(
      'expired',
    );
    // Same protected fields, different reason: a new proposal for the same semantic effect.
    const second = await prepareForApproval(h, { reason: 'wrong_size' });
    expect(second.outcome).toBe('authority_pending');
    expect(second.semanticEffectKey).toBe(forFirst.semanticEffectKey);

    const result = await present(
      h,
      { ...forFirst, proposal: second.proposal, issuedAt: new Date(h.clock.now()).toISOString() },
      'finance-b',
    );
    expect(result).toMatchObject({
      proposal: second.proposal,
      outcome: 'rejected',
      reasonCode: 'evidence_commitment_mismatch',
    });
    await expectNothingCounted(h, second.proposal);
  });

  it('throws ProposalNotFoundError for evidence naming a proposal that does not exist', async () => {
    const h = createHarness();
    const target = (await prepareForApproval(h)).proposal;
    const evidence = await evidenceFor(h, target, 'finance-b');
    const error = await present(h, { ...evidence, proposal: 'prop_9999' }).catch((e) => e);
    expect(error).toBeInstanceOf(ProposalNotFoundError);
    expect(error.code).toBe('proposal_not_found');
    expect(ofType(await ledgerOf(h), 'authority_rejected')).toHaveLength(0);
  });

  it('throws ProposalNotFoundError for evidence presented in a tenant that does not own the proposal', async () => {
    const h = createHarness();
    const target = (await prepareForApproval(h)).proposal;
    const evidence = await evidenceFor(h, target, 'finance-b', { channelAssurance: 'medium' });
    const error = await h.guard
      .recordAuthority(h.refund, {
        tenant: 'tenant-b',
        evidence: { ...evidence, tenant: 'tenant-b' },
        authenticatedAuthority: 'finance-b',
      })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ProposalNotFoundError);
    await expectNothingCounted(h, target);
  });

  it.each([
    ['null', null],
    ['a string', 'approve prop_0001'],
    ['a number', 42],
    ['an array', ['prop_0001']],
    ['an object without a proposal', { authority: 'finance-b' }],
    ['an object with a numeric proposal', { proposal: 1 }],
  ])('throws AuthorityEvidenceError evidence_malformed for %s', async (_label, evidence) => {
    const h = createHarness();
    await prepareForApproval(h);
    const error = await present(h, evidence, 'finance-b').catch((e) => e);
    expect(error).toBeInstanceOf(AuthorityEvidenceError);
    expect(error.code).toBe('evidence_malformed');
    expect(await h.store.listEvidence(h.tenant, 'prop_0001')).toHaveLength(0);
  });
});

describe('counting distinct authorities', () => {
  it('counts the same authority approving twice with different evidence once', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    const first = await decide(h, proposal, 'finance-b', { channelAssurance: 'medium' });
    h.clock.advance(1_000);
    const second = await decide(h, proposal, 'finance-b', { channelAssurance: 'high' });
    expect(first).toMatchObject({ outcome: 'authority_pending', status: 'awaiting_authority' });
    expect(second).toMatchObject({ outcome: 'authority_pending', status: 'awaiting_authority' });
    expect(await h.store.listEvidence(h.tenant, proposal)).toHaveLength(2);
    const recorded = ofType(await ledgerOf(h, proposal), 'authority_recorded');
    expect(recorded.map((e) => e.data.approvals)).toEqual([1, 1]);

    const view = await h.guard.read(h.refund, { tenant: h.tenant, proposal, reader: PRINCIPAL });
    expect(view.authority).toEqual({ required: 2, approvers: ['finance-b'], rejectedBy: null });
    const executed = await h.guard.execute(h.refund, { tenant: h.tenant, proposal });
    expect(executed.outcome).toBe('authority_pending');
    expect(h.provider.calls.execute).toBe(0);
  });

  it('lets one rejection veto: denied, later approvals cannot revive it and execute is denied', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    const vetoed = await decide(h, proposal, 'finance-b', {
      decision: 'reject',
      channelAssurance: 'medium',
    });
    expect(vetoed).toMatchObject({
      outcome: 'denied',
      status: 'denied',
      reasonCode: 'rejected_by_authority',
    });
    const denied = ofType(await ledgerOf(h, proposal), 'denied');
    expect(denied).toHaveLength(1);
    expect(denied[0]?.data).toMatchObject({ authority: 'finance-b' });

    const late = [await decide(h, proposal, 'finance-a'), await decide(h, proposal, 'finance-c')];
    for (const result of late)
      expect(result).toMatchObject({ outcome: 'denied', status: 'denied' });

    const executed = await h.guard.execute(h.refund, { tenant: h.tenant, proposal });
    expect(executed).toMatchObject({ outcome: 'denied', status: 'denied' });
    expect(h.provider.calls.execute).toBe(0);
    const view = await h.guard.read(h.refund, { tenant: h.tenant, proposal, reader: PRINCIPAL });
    expect(view.authority.rejectedBy).toBe('finance-b');
  });

  it('lets a rejection after authorization deny the proposal before it executes', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    await decide(h, proposal, 'finance-a');
    expect((await decide(h, proposal, 'finance-c')).status).toBe('authorized');
    const vetoed = await decide(h, proposal, 'finance-b', {
      decision: 'reject',
      channelAssurance: 'medium',
    });
    expect(vetoed).toMatchObject({ outcome: 'denied', status: 'denied' });
    const executed = await h.guard.execute(h.refund, { tenant: h.tenant, proposal });
    expect(executed.outcome).toBe('denied');
    expect(h.provider.calls.execute).toBe(0);
  });

  it('reports the identical evidence presented twice as replayed and stores it once', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    const evidence = await evidenceFor(h, proposal, 'finance-a');
    const first = await present(h, evidence);
    const second = await present(h, structuredClone(evidence));
    expect(first).toMatchObject({ outcome: 'authority_pending', revision: 2 });
    expect(second).toMatchObject({
      outcome: 'replayed',
      status: 'awaiting_authority',
      revision: 2,
      reasonCode: 'evidence_already_recorded',
    });
    // The same evidence with its keys in another order is still the identical evidence.
    const reordered = Object.fromEntries(Object.entries(evidence).reverse());
    expect(await present(h, reordered, 'finance-a')).toMatchObject({
      outcome: 'replayed',
      reasonCode: 'evidence_already_recorded',
    });
    expect(await h.store.listEvidence(h.tenant, proposal)).toHaveLength(1);
    expect(ofType(await ledgerOf(h, proposal), 'authority_recorded')).toHaveLength(1);
  });

  it('authorizes exactly once when the same evidence arrives 8 times concurrently', async () => {
    const h = createHarness();
    const single = refundAction(h.provider, { approval: approvals.single('manager') });
    const { proposal } = await prepareForApproval(h, {}, single);
    const evidence = await evidenceFor(h, proposal, 'manager', {}, single);

    const results = await Promise.all(
      Array.from({ length: 8 }, () => present(h, structuredClone(evidence), 'manager', single)),
    );
    expect(results.filter((r) => r.outcome === 'authorized')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'replayed')).toHaveLength(7);
    for (const result of results.filter((r) => r.outcome === 'replayed')) {
      expect(result.reasonCode).toBe('evidence_already_recorded');
    }
    expect(await h.store.listEvidence(h.tenant, proposal)).toHaveLength(1);
    expect(ofType(await ledgerOf(h, proposal), 'authority_recorded')).toHaveLength(1);
    expect(ofType(await ledgerOf(h, proposal), 'authority_satisfied')).toHaveLength(1);

    await h.guard.execute(single, { tenant: h.tenant, proposal });
    expect(h.provider.calls.execute).toBe(1);
  });

  it('records two distinct approvals that arrive concurrently and authorizes', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    const evidences = [
      await evidenceFor(h, proposal, 'finance-b', { channelAssurance: 'medium' }),
      await evidenceFor(h, proposal, 'finance-c', { channelAssurance: 'medium' }),
    ];
    const results = await Promise.all(evidences.map((evidence) => present(h, evidence)));
    expect(results.map((r) => r.outcome).sort()).toEqual(['authority_pending', 'authorized']);
    expect((await h.store.getProposal(h.tenant, proposal))?.status).toBe('authorized');
    expect(await h.store.listEvidence(h.tenant, proposal)).toHaveLength(2);
  });
});

describe('validity windows', () => {
  it('keeps expired approvals stored but never counts them; fresh approvals authorize', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    await decide(h, proposal, 'finance-a', { validForMs: MINUTE });
    const authorized = await decide(h, proposal, 'finance-b', { validForMs: MINUTE });
    expect(authorized.status).toBe('authorized');

    h.clock.advance(MINUTE + 1);
    const lapsed = await h.guard.execute(h.refund, { tenant: h.tenant, proposal });
    expect(lapsed).toMatchObject({
      outcome: 'authority_pending',
      status: 'awaiting_authority',
      reasonCode: 'authority_lapsed',
    });
    expect(h.provider.calls.execute).toBe(0);
    expect(await h.store.listEvidence(h.tenant, proposal)).toHaveLength(2);
    expect(ofType(await ledgerOf(h, proposal), 'authority_lapsed')).toHaveLength(1);
    const view = await h.guard.read(h.refund, { tenant: h.tenant, proposal, reader: PRINCIPAL });
    expect(view.authority.approvers).toEqual([]);

    expect((await decide(h, proposal, 'finance-a')).outcome).toBe('authority_pending');
    expect((await decide(h, proposal, 'finance-c')).outcome).toBe('authorized');
    expect(await h.store.listEvidence(h.tenant, proposal)).toHaveLength(4);
    const executed = await h.guard.execute(h.refund, { tenant: h.tenant, proposal });
    expect(executed).toMatchObject({ outcome: 'verified', status: 'verified' });
    expect(await h.guard.execute(h.refund, { tenant: h.tenant, proposal })).toMatchObject({
      outcome: 'replayed',
    });
    expect(h.provider.calls.execute).toBe(1);
  });

  it('leaves a proposal alone in expireDue before its TTL and expires it after', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    h.clock.advance(15 * MINUTE - 1);
    expect(await h.guard.expireDue(h.refund, { tenant: h.tenant, proposal })).toMatchObject({
      outcome: 'authority_pending',
      status: 'awaiting_authority',
      revision: 1,
    });
    h.clock.advance(1);
    const expired = await h.guard.expireDue(h.refund, { tenant: h.tenant, proposal });
    expect(expired).toMatchObject({
      outcome: 'expired',
      status: 'expired',
      reasonCode: 'proposal_expired',
      revision: 2,
    });
    const events = ofType(await ledgerOf(h, proposal), 'expired');
    expect(events).toHaveLength(1);
    expect(events[0]?.status).toBe('expired');
  });

  it('does not authorize an expired proposal with evidence recorded after expiry', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    const early = await evidenceFor(h, proposal, 'finance-a');
    await present(h, await evidenceFor(h, proposal, 'finance-b', { channelAssurance: 'medium' }));
    h.clock.advance(15 * MINUTE);
    expect((await h.guard.expireDue(h.refund, { tenant: h.tenant, proposal })).status).toBe(
      'expired',
    );

    const stale = await present(h, early);
    expect(stale).toMatchObject({ outcome: 'rejected', reasonCode: 'evidence_expired' });
    const fresh = await present(h, await uncappedEvidence(h, proposal, 'finance-c', MINUTE));
    expect(fresh).toMatchObject({ outcome: 'expired', status: 'expired' });
    expect(await h.store.listEvidence(h.tenant, proposal)).toHaveLength(1);

    const executed = await h.guard.execute(h.refund, { tenant: h.tenant, proposal });
    expect(executed).toMatchObject({ outcome: 'expired', status: 'expired' });
    expect(h.provider.calls.execute).toBe(0);
  });

  it('expires a proposal past its TTL when authority arrives before any sweep', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    await present(h, await evidenceFor(h, proposal, 'finance-b', { channelAssurance: 'medium' }));
    h.clock.advance(15 * MINUTE);
    const result = await present(h, await uncappedEvidence(h, proposal, 'finance-a', MINUTE));
    expect(result).toMatchObject({ outcome: 'expired', status: 'expired' });
    expect(await h.store.listEvidence(h.tenant, proposal)).toHaveLength(1);
    expect(ofType(await ledgerOf(h, proposal), 'expired')).toHaveLength(1);
  });

  it('expires an authorized proposal that was never executed and then refuses to execute it', async () => {
    const h = createHarness();
    const prepared = await h.guard.prepare(h.refund, {
      tenant: h.tenant,
      input: refundArgs(),
      principal: PRINCIPAL,
    });
    expect(prepared.status).toBe('authorized');
    h.clock.advance(15 * MINUTE);
    expect(
      await h.guard.expireDue(h.refund, { tenant: h.tenant, proposal: prepared.proposal }),
    ).toMatchObject({ outcome: 'expired', status: 'expired' });
    const executed = await h.guard.execute(h.refund, {
      tenant: h.tenant,
      proposal: prepared.proposal,
    });
    expect(executed).toMatchObject({ outcome: 'expired', status: 'expired' });
    expect(h.provider.calls.execute).toBe(0);
  });

  it('caps evidence built from read at the proposal expiry', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    const evidence = await evidenceFor(h, proposal, 'finance-a', { validForMs: 60 * MINUTE });
    const record = await h.store.getProposal(h.tenant, proposal);
    expect(Date.parse(evidence.expiresAt)).toBe(record?.expiresAtMs);
  });
});

/**
 * A memory store whose evidence reads take `slowByMs` of the harness's clock once armed: time
 * passes while the store answers, as it does under a slow database or a GC pause.
 */
function slowEvidenceReads(breakages?: ReadonlySet<Breakage>) {
  const inner = createMemoryStore();
  const slow = { byMs: 0 };
  let clock: { advance(ms: number): void } | undefined;
  const store: GuardStore = Object.assign(Object.create(inner) as GuardStore, {
    listEvidence: async (tenant: string, proposal: string) => {
      const rows = await inner.listEvidence(tenant, proposal);
      clock?.advance(slow.byMs);
      slow.byMs = 0;
      return rows;
    },
  });
  const h = createHarness({ store, ...(breakages === undefined ? {} : { breakages }) });
  clock = h.clock;
  return { h, slow };
}

describe('time passing during the evidence read', () => {
  it('rejects evidence that expired while the store read the evidence already counted', async () => {
    const { h, slow } = slowEvidenceReads();
    const { proposal } = await prepareForApproval(h);
    const evidence = await uncappedEvidence(h, proposal, 'finance-a', MINUTE);
    slow.byMs = 2 * MINUTE;
    const result = await present(h, evidence);
    expect(result).toMatchObject({ outcome: 'rejected', reasonCode: 'evidence_expired' });
    await expectNothingCounted(h, proposal);
    const events = await ledgerOf(h, proposal);
    expect(ofType(events, 'authority_recorded')).toHaveLength(0);
    expect(ofType(events, 'authority_rejected').map((e) => e.data.reasonCode)).toEqual([
      'evidence_expired',
    ]);
  });

  it('expires the proposal when its time to live ends during that read', async () => {
    const { h, slow } = slowEvidenceReads();
    const { proposal } = await prepareForApproval(h);
    const evidence = await uncappedEvidence(h, proposal, 'finance-a', 60 * MINUTE);
    slow.byMs = 15 * MINUTE;
    const result = await present(h, evidence);
    expect(result).toMatchObject({ outcome: 'expired', status: 'expired' });
    expect(await h.store.listEvidence(h.tenant, proposal)).toHaveLength(0);
    expect(ofType(await ledgerOf(h, proposal), 'authority_recorded')).toHaveLength(0);
  });

  it('records evidence valid at the time of record, stamped with that time', async () => {
    const { h, slow } = slowEvidenceReads();
    const { proposal } = await prepareForApproval(h);
    const evidence = await uncappedEvidence(h, proposal, 'finance-a', 10 * MINUTE);
    slow.byMs = MINUTE;
    const before = h.clock.now();
    expect((await present(h, evidence)).outcome).toBe('authority_pending');
    const [row] = await h.store.listEvidence(h.tenant, proposal);
    expect(row?.recordedAtMs).toBe(before + MINUTE);
    const [recorded] = ofType(await ledgerOf(h, proposal), 'authority_recorded');
    expect(Date.parse(recorded?.at ?? '')).toBe(before + MINUTE);
  });

  it('records the lapsed evidence with record_time_before_store_read (the breakage the explorer catches)', async () => {
    const { h, slow } = slowEvidenceReads(new Set(['record_time_before_store_read']));
    const { proposal } = await prepareForApproval(h);
    const evidence = await uncappedEvidence(h, proposal, 'finance-a', MINUTE);
    slow.byMs = 2 * MINUTE;
    expect((await present(h, evidence)).outcome).toBe('authority_pending');
    expect(ofType(await ledgerOf(h, proposal), 'authority_recorded')).toHaveLength(1);
  });
});

describe('authority property', () => {
  const FINANCE = ['finance-a', 'finance-b', 'finance-c'] as const;
  const step = fc.record({
    authority: fc.constantFrom(...FINANCE),
    decision: fc.oneof(
      { arbitrary: fc.constant('approve' as const), weight: 4 },
      { arbitrary: fc.constant('reject' as const), weight: 1 },
    ),
  });

  it('authorizes iff at least two distinct authorities approved and none rejected', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 6 }), async (steps) => {
        const h = createHarness();
        const action: ActionDefinition = h.refund;
        const prepared = await h.guard.prepare(action, {
          tenant: h.tenant,
          input: refundArgs({ amount: APPROVAL_AMOUNT }),
          principal: PRINCIPAL,
        });
        for (const { authority, decision } of steps) {
          h.clock.advance(1);
          await decide(h, prepared.proposal, authority, { decision });
        }
        const approvers = new Set(
          steps.filter((s) => s.decision === 'approve').map((s) => s.authority),
        );
        const rejected = steps.some((s) => s.decision === 'reject');
        const expectAuthorized = approvers.size >= 2 && !rejected;
        const record = await h.store.getProposal(h.tenant, prepared.proposal);
        expect(record?.status).toBe(
          expectAuthorized ? 'authorized' : rejected ? 'denied' : 'awaiting_authority',
        );
        const executed = await h.guard.execute(action, {
          tenant: h.tenant,
          proposal: prepared.proposal,
        });
        expect(executed.outcome).toBe(
          expectAuthorized ? 'verified' : rejected ? 'denied' : 'authority_pending',
        );
        expect(h.provider.calls.execute).toBe(expectAuthorized ? 1 : 0);
      }),
      { numRuns: 60 },
    );
  });
});
