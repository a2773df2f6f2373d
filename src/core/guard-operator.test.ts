import { describe, expect, it } from 'vitest';
import {
  evidenceFor,
  ledgerOf,
  ofType,
  PRINCIPAL,
  prepareForApproval,
  present,
} from '../../test/support/evidence-helpers.js';
import { createHarness, refundAction, refundArgs } from '../../test/support/guard-harness.js';
import { ContractViolationError, ProposalNotFoundError } from './errors.js';
import type { OperatorFinding } from './guard.js';

const principal = PRINCIPAL;
const OPERATOR = 'ops-oncall';
const receipt = { id: 're_found', provider: 'payments' };

/** A proposal whose write was lost before it left: verification found it absent, resends not declared. */
async function unresolvedAbsence() {
  const h = createHarness();
  const refund = refundAction(h.provider, { operators: [OPERATOR] });
  h.provider.steps = ['lost_before_write'];
  const first = await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
  h.clock.advance(refund.executionLeaseMs);
  const unresolved = await h.guard.reconcile(refund, {
    tenant: h.tenant,
    proposal: first.proposal,
  });
  expect(unresolved.status).toBe('verification_unresolved');
  const resolve = (finding: OperatorFinding, operator = OPERATOR, note?: string) =>
    h.guard.resolveOutcome(refund, {
      tenant: h.tenant,
      proposal: first.proposal,
      operator,
      finding,
      ...(note === undefined ? {} : { note }),
    });
  return { h, refund, proposal: first.proposal, resolve };
}

describe('operator resolution', () => {
  it('ends an attested absence failed_known, records who and what, and releases the effect', async () => {
    const { h, refund, proposal, resolve } = await unresolvedAbsence();
    const note = 'Checked the Stripe dashboard for Ada Lovelace: no refund';
    const result = await resolve({ kind: 'absent' }, OPERATOR, note);
    expect(result).toMatchObject({
      status: 'failed_known',
      reasonCode: 'operator_attested_absent',
    });
    const [attested] = ofType(await ledgerOf(h, proposal), 'operator_resolved');
    expect(attested).toMatchObject({
      status: 'failed_known',
      at: new Date(h.clock.now()).toISOString(),
    });
    expect(attested?.data).toMatchObject({
      operator: OPERATOR,
      finding: 'absent',
      previousStatus: 'verification_unresolved',
    });
    expect(attested?.data.noteDigest).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await h.guard.exportLedger({ tenant: h.tenant })).not.toContain('Lovelace');
    // The effect is free again: a new proposal for it executes once.
    const again = await h.guard.run(refund, {
      tenant: h.tenant,
      input: refundArgs({ requestId: 'after-ops' }),
      principal,
    });
    expect(again).toMatchObject({ status: 'verified' });
    expect(again.proposal).not.toBe(proposal);
    expect(h.provider.writes.size).toBe(1);
  });

  it('ends an attested presence verified with the receipt', async () => {
    const { h, proposal, resolve } = await unresolvedAbsence();
    const result = await resolve({ kind: 'present', receipt });
    expect(result).toMatchObject({ status: 'verified', reasonCode: 'operator_attested_present' });
    expect(result.result?.receipts).toEqual([receipt]);
    const [attested] = ofType(await ledgerOf(h, proposal), 'operator_resolved');
    expect(attested?.data).toMatchObject({ finding: 'present', receipt });
  });

  it('treats anyone the action does not declare as an operator exactly like a missing proposal', async () => {
    const { h, refund, resolve } = await unresolvedAbsence();
    const notOperator = await resolve({ kind: 'absent' }, principal).catch(
      (error: unknown) => error,
    );
    const missing = await h.guard
      .resolveOutcome(refund, {
        tenant: h.tenant,
        proposal: 'prop_nope',
        operator: OPERATOR,
        finding: { kind: 'absent' },
      })
      .catch((error: unknown) => error);
    expect(notOperator).toBeInstanceOf(ProposalNotFoundError);
    expect(missing).toBeInstanceOf(ProposalNotFoundError);
    expect((notOperator as Error).message.replace(/"[^"]+"/, '"…"')).toBe(
      (missing as Error).message.replace(/"[^"]+"/, '"…"'),
    );
  });

  it('refuses a proposal that is not awaiting an operator', async () => {
    const h = createHarness();
    const refund = refundAction(h.provider, { operators: [OPERATOR] });
    const verified = await h.guard.run(refund, {
      tenant: h.tenant,
      input: refundArgs(),
      principal,
    });
    const result = await h.guard.resolveOutcome(refund, {
      tenant: h.tenant,
      proposal: verified.proposal,
      operator: OPERATOR,
      finding: { kind: 'absent' },
    });
    expect(result).toMatchObject({
      outcome: 'conflict',
      reasonCode: 'not_awaiting_operator',
      status: 'verified',
    });
  });

  it('refuses an absence while the last attempt may still land, and accepts it once its lease has ended', async () => {
    const h = createHarness();
    const refund = refundAction(h.provider, { operators: [OPERATOR], verificationDelayMs: 60_000 });
    h.provider.steps = ['lost_before_write'];
    const first = await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
    expect(first.status).toBe('failed_unknown');
    const address = { tenant: h.tenant, proposal: first.proposal, operator: OPERATOR };
    const early = await h.guard.resolveOutcome(refund, { ...address, finding: { kind: 'absent' } });
    expect(early).toMatchObject({ outcome: 'conflict', reasonCode: 'attempt_may_still_land' });
    h.clock.advance(60_000);
    const later = await h.guard.resolveOutcome(refund, { ...address, finding: { kind: 'absent' } });
    expect(later.status).toBe('failed_known');
  });

  it('answers in_progress while a verification holds the proposal', async () => {
    const h = createHarness();
    let release: () => void = () => {};
    const refund = refundAction(h.provider, {
      operators: [OPERATOR],
      verificationDelayMs: 1_000,
      verify: () =>
        new Promise((resolve) => {
          release = () => resolve({ kind: 'unknown', reason: 'slow' });
        }),
    });
    h.provider.steps = ['lost_before_write'];
    const first = await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
    h.clock.advance(1_000);
    const verifying = h.guard.reconcile(refund, { tenant: h.tenant, proposal: first.proposal });
    await new Promise((resolve) => setImmediate(resolve));
    const result = await h.guard.resolveOutcome(refund, {
      tenant: h.tenant,
      proposal: first.proposal,
      operator: OPERATOR,
      finding: { kind: 'present', receipt },
    });
    expect(result).toMatchObject({
      outcome: 'in_progress',
      reasonCode: 'verification_in_progress',
    });
    release();
    await verifying;
  });

  it.each([
    ['a finding of another kind', { kind: 'maybe' }, undefined],
    ['a presence without a receipt', { kind: 'present' }, undefined],
    [
      'a presence with a receipt id that is not text',
      { kind: 'present', receipt: { id: 'x\uD800', provider: 'p' } },
      undefined,
    ],
    ['a note with a lone surrogate', { kind: 'absent' }, 'see \uD800'],
    ['a note too long to keep', { kind: 'absent' }, 'x'.repeat(5_000)],
  ])('throws invalid_argument for %s and changes nothing', async (_label, finding, note) => {
    const { h, proposal, resolve } = await unresolvedAbsence();
    const error = await resolve(finding as OperatorFinding, OPERATOR, note).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ContractViolationError);
    expect((error as ContractViolationError).code).toBe('invalid_argument');
    expect((await h.store.getProposal(h.tenant, proposal))?.status).toBe('verification_unresolved');
  });

  it('refuses operators declared twice or empty at defineAction', () => {
    const h = createHarness();
    expect(() => refundAction(h.provider, { operators: ['a', 'a'] })).toThrowError(
      expect.objectContaining({ code: 'action_config_invalid' }),
    );
    expect(() => refundAction(h.provider, { operators: [''] })).toThrowError(
      expect.objectContaining({ code: 'action_config_invalid' }),
    );
  });
});

describe('authority arriving after the time to live (window 9)', () => {
  it('ends the proposal expired, even for evidence capped at the proposal expiry', async () => {
    const h = createHarness();
    const { proposal } = await prepareForApproval(h);
    const capped = await evidenceFor(h, proposal, 'finance-a');
    h.clock.advance(h.refund.proposalTtlMs);
    const result = await present(h, capped);
    expect(result).toMatchObject({ outcome: 'expired', status: 'expired' });
    expect(ofType(await ledgerOf(h, proposal), 'expired')).toHaveLength(1);
    expect(await h.store.listEvidence(h.tenant, proposal)).toHaveLength(0);
  });
});
