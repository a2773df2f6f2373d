import { describe, expect, it } from 'vitest';
import {
  decide,
  evidenceFor,
  ledgerOf,
  ofType,
  PRINCIPAL,
  prepareForApproval,
  present,
  waitUntil,
} from '../../test/support/evidence-helpers.js';
import {
  createHarness,
  type HarnessOptions,
  refundAction,
  refundArgs,
} from '../../test/support/guard-harness.js';
import * as publicApi from '../index.js';
import { createGuard, createMemoryStore } from '../index.js';
import { Breakage } from './breakages.js';
import { sealEnvelope } from './envelope.js';
import { snapshotAad } from './guard/proposal-snapshot.js';
import type { ProposalRecord } from './store.js';

const MINUTE = 60_000;
const principal = PRINCIPAL;

/** A harness with one guarantee switched off, or none. */
const harnessWith = (breakage: Breakage | undefined, options: HarnessOptions = {}) =>
  createHarness({
    ...options,
    ...(breakage === undefined ? {} : { breakages: new Set([breakage]) }),
  });

/** Runs `scenario` on an intact guard and on one with `breakage`; returns both results. */
async function compare<T>(
  breakage: Breakage,
  scenario: (harness: ReturnType<typeof createHarness>) => Promise<T>,
): Promise<{ intact: T; broken: T }> {
  return {
    intact: await scenario(harnessWith(undefined)),
    broken: await scenario(harnessWith(breakage)),
  };
}

describe('the breakage switch', () => {
  it('effect_claim_skipped: two raced proposals for one effect both reach the provider', async () => {
    const { intact, broken } = await compare('effect_claim_skipped', async (h) => {
      const [a, b] = await Promise.all([
        h.guard.prepare(h.refund, {
          tenant: h.tenant,
          input: refundArgs({ requestId: 'a' }),
          principal,
        }),
        h.guard.prepare(h.refund, {
          tenant: h.tenant,
          input: refundArgs({ requestId: 'b' }),
          principal,
        }),
      ]);
      expect(a.proposal).not.toBe(b.proposal);
      await Promise.all([
        h.guard.execute(h.refund, { tenant: h.tenant, proposal: a.proposal }),
        h.guard.execute(h.refund, { tenant: h.tenant, proposal: b.proposal }),
      ]);
      return h.provider.calls.execute;
    });
    expect(intact).toBe(1);
    expect(broken).toBe(2);
  });

  it('resend_without_verification: a lost response is resent with a new key, never verified', async () => {
    const { intact, broken } = await compare('resend_without_verification', async (h) => {
      h.provider.steps = ['lost_after_write'];
      const result = await h.guard.run(h.refund, {
        tenant: h.tenant,
        input: refundArgs(),
        principal,
      });
      await h.guard.execute(h.refund, { tenant: h.tenant, proposal: result.proposal });
      const types = (await ledgerOf(h, result.proposal)).map((event) => event.type);
      const beforeResend = types.slice(0, types.indexOf('resend_allowed') >>> 0);
      return {
        outcome: result.outcome,
        writes: h.provider.writes.size,
        verifiedBeforeResend: beforeResend.filter((type) => type === 'verification_observed')
          .length,
      };
    });
    expect(intact).toEqual({ outcome: 'verified', writes: 1, verifiedBeforeResend: 1 });
    expect(broken).toEqual({ outcome: 'resend_allowed', writes: 2, verifiedBeforeResend: 0 });
  });

  it('unknown_treated_as_absent: a verifier that cannot tell allows a resend', async () => {
    const { intact, broken } = await compare('unknown_treated_as_absent', async (h) => {
      const refund = refundAction(h.provider, {
        allowResendAfterFinalAbsence: true,
        verificationDelayMs: 1_000,
        executionLeaseMs: 1_000,
        verify: async () => ({ kind: 'unknown', reason: 'provider_down' }),
      });
      h.provider.steps = ['lost_after_write'];
      const first = await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
      h.clock.advance(1_000);
      const reconciled = await h.guard.reconcile(refund, {
        tenant: h.tenant,
        proposal: first.proposal,
      });
      await h.guard.execute(refund, { tenant: h.tenant, proposal: first.proposal });
      return { outcome: reconciled.outcome, writes: h.provider.writes.size };
    });
    expect(intact).toEqual({ outcome: 'verification_pending', writes: 1 });
    expect(broken).toEqual({ outcome: 'resend_allowed', writes: 2 });
  });

  it('lease_check_inverted: a reconciler takes over an execution whose lease is still live', async () => {
    const { intact, broken } = await compare('lease_check_inverted', async (h) => {
      h.provider.steps = ['hang_after_write'];
      const prepared = await h.guard.prepare(h.refund, {
        tenant: h.tenant,
        input: refundArgs(),
        principal,
      });
      const hanging = h.guard.execute(h.refund, { tenant: h.tenant, proposal: prepared.proposal });
      await waitUntil(() => h.provider.waiting.length === 1);
      const reconciled = await h.guard.reconcile(h.refund, {
        tenant: h.tenant,
        proposal: prepared.proposal,
      });
      h.provider.release();
      await hanging;
      const events = await ledgerOf(h, prepared.proposal);
      return { outcome: reconciled.outcome, takenOver: ofType(events, 'lease_expired').length };
    });
    expect(intact).toEqual({ outcome: 'in_progress', takenOver: 0 });
    expect(broken.takenOver).toBe(1);
    expect(broken.outcome).not.toBe('in_progress');
  });

  it('tally_counts_expired: approvals that have lapsed still authorize the write', async () => {
    const { intact, broken } = await compare('tally_counts_expired', async (h) => {
      const { proposal } = await prepareForApproval(h);
      await decide(h, proposal, 'finance-a', { validForMs: MINUTE });
      await decide(h, proposal, 'finance-b', { validForMs: MINUTE });
      h.clock.advance(2 * MINUTE);
      const result = await h.guard.execute(h.refund, { tenant: h.tenant, proposal });
      return { status: result.status, calls: h.provider.calls.execute };
    });
    expect(intact).toEqual({ status: 'awaiting_authority', calls: 0 });
    expect(broken).toEqual({ status: 'verified', calls: 1 });
  });

  it('expiry_not_checked: a proposal past its time to live still executes', async () => {
    const { intact, broken } = await compare('expiry_not_checked', async (h) => {
      const prepared = await h.guard.prepare(h.refund, {
        tenant: h.tenant,
        input: refundArgs(),
        principal,
      });
      h.clock.advance(h.refund.proposalTtlMs);
      const result = await h.guard.execute(h.refund, {
        tenant: h.tenant,
        proposal: prepared.proposal,
      });
      return { status: result.status, calls: h.provider.calls.execute };
    });
    expect(intact).toEqual({ status: 'expired', calls: 0 });
    expect(broken).toEqual({ status: 'verified', calls: 1 });
  });

  it('commitment_check_skipped: a snapshot swapped in the store is executed', async () => {
    const { intact, broken } = await compare('commitment_check_skipped', async (h) => {
      const amounts: string[] = [];
      const refund = refundAction(h.provider, {
        execute: async (input) => {
          amounts.push(input.amount);
          return { kind: 'accepted', receipt: { id: 're_swapped', provider: 'payments' } };
        },
      });
      const prepared = await h.guard.prepare(refund, {
        tenant: h.tenant,
        input: refundArgs(),
        principal,
      });
      const stored = (await h.store.getProposal(h.tenant, prepared.proposal)) as ProposalRecord;
      // Someone with write access to the store re-encrypts a bigger amount under the same keys.
      const snapshot = sealEnvelope(
        h.keyRing,
        { input: refundArgs({ amount: '99.00' }) },
        snapshotAad(h.tenant, prepared.proposal),
        (size) => new Uint8Array(size).fill(7),
      );
      await h.store.commit({
        tenant: h.tenant,
        proposal: {
          kind: 'update',
          expectedRevision: stored.revision,
          expectedStatus: stored.status,
          record: { ...stored, revision: stored.revision + 1, snapshot },
        },
        events: [
          {
            proposal: prepared.proposal,
            type: 'policy_decided',
            at: new Date(h.clock.now()).toISOString(),
            actionType: refund.typeName,
            status: stored.status,
            revision: stored.revision + 1,
            data: {},
          },
        ],
      });
      const error = await h.guard
        .execute(refund, { tenant: h.tenant, proposal: prepared.proposal })
        .then(() => undefined)
        .catch((caught: { code?: string }) => caught.code);
      return { error, amounts };
    });
    expect(intact).toEqual({ error: 'commitment_mismatch', amounts: [] });
    expect(broken).toEqual({ error: undefined, amounts: ['99.00'] });
  });

  it('approval_not_bound_to_input: approvals of one proposal authorize another', async () => {
    const { intact, broken } = await compare('approval_not_bound_to_input', async (h) => {
      const small = await prepareForApproval(h, { amount: '150.00' });
      const big = await prepareForApproval(h, { orderId: 'ord_big', amount: '950.00' });
      const outcomes: (string | undefined)[] = [];
      for (const authority of ['finance-a', 'finance-b']) {
        const evidence = await evidenceFor(h, small.proposal, authority);
        const moved = await present(h, { ...evidence, proposal: big.proposal });
        outcomes.push(moved.reasonCode);
      }
      await h.guard.execute(h.refund, { tenant: h.tenant, proposal: big.proposal });
      return { last: outcomes.at(-1), calls: h.provider.calls.execute };
    });
    expect(intact).toEqual({ last: 'evidence_effect_key_mismatch', calls: 0 });
    expect(broken).toEqual({ last: 'authority_satisfied', calls: 1 });
  });

  it('verification_counter_frozen: verification never ends unresolved', async () => {
    const { intact, broken } = await compare('verification_counter_frozen', async (h) => {
      const refund = refundAction(h.provider, {
        maxVerificationAttempts: 3,
        verificationDelayMs: 1_000,
      });
      h.provider.steps = ['lost_before_write'];
      h.provider.absentAnswer = 'unknown';
      const result = await h.guard.run(refund, {
        tenant: h.tenant,
        input: refundArgs(),
        principal,
      });
      let last = result;
      for (let i = 0; i < 5; i++) {
        h.clock.advance(1_000);
        last = await h.guard.reconcile(refund, { tenant: h.tenant, proposal: result.proposal });
      }
      return { status: last.status, verifies: h.provider.calls.verify };
    });
    expect(intact).toEqual({ status: 'verification_unresolved', verifies: 3 });
    expect(broken).toEqual({ status: 'verification_pending', verifies: 5 });
  });

  it('refuses a breakage it does not know, naming it', () => {
    expect(() => createHarness({ breakages: new Set(['claim_off' as Breakage]) })).toThrowError(
      expect.objectContaining({ code: 'breakage_unknown' }),
    );
  });

  it('cannot be set through the public createGuard, which sideguard exports without Breakage', async () => {
    expect(Object.keys(publicApi)).not.toContain('Breakage');
    const h = createHarness();
    const guard = createGuard({
      store: createMemoryStore(),
      keyRing: h.keyRing,
      clock: h.clock,
      breakages: new Set([Breakage.expiry_not_checked]),
    } as Parameters<typeof createGuard>[0]);
    const prepared = await guard.prepare(h.refund, {
      tenant: h.tenant,
      input: refundArgs(),
      principal,
    });
    h.clock.advance(h.refund.proposalTtlMs);
    const result = await guard.execute(h.refund, { tenant: h.tenant, proposal: prepared.proposal });
    expect(result.status).toBe('expired');
    expect(h.provider.calls.execute).toBe(0);
  });
});
