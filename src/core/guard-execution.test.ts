import { describe, expect, it } from 'vitest';
import { createHarness, refundAction, refundArgs } from '../../test/support/guard-harness.js';
import { buildAuthorityEvidence, createGuard, type Guard } from '../index.js';

const principal = 'agent-svc';

async function approve(
  guard: Guard,
  refund: ReturnType<typeof createHarness>['refund'],
  tenant: string,
  proposal: string,
  authorities: readonly string[],
  nowMs: number,
) {
  const view = await guard.read(refund, { tenant, proposal, reader: principal });
  const results = [];
  for (const authority of authorities) {
    const evidence = buildAuthorityEvidence(view.evidenceBindings!, {
      authority,
      decision: 'approve',
      channelAssurance: 'high',
      issuedAt: nowMs,
    });
    results.push(
      await guard.recordAuthority(refund, { tenant, evidence, authenticatedAuthority: authority }),
    );
  }
  return results;
}

describe('execution', () => {
  it('runs an allowed refund once and replays repeated executes without calling the executor', async () => {
    const { guard, refund, tenant, provider } = createHarness();
    const first = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(first).toMatchObject({ outcome: 'verified', status: 'verified', revision: 3 });
    expect(first.result?.receipts).toHaveLength(1);
    for (let i = 0; i < 3; i++) {
      const again = await guard.execute(refund, { tenant, proposal: first.proposal });
      expect(again.outcome).toBe('replayed');
    }
    expect(provider.calls.execute).toBe(1);
    expect(provider.writes.size).toBe(1);
  });

  it('takes the effect claim atomically: two concurrent executes make one executor call', async () => {
    const { guard, refund, tenant, provider } = createHarness();
    const prepared = await guard.prepare(refund, { tenant, input: refundArgs(), principal });
    const results = await Promise.all(
      Array.from({ length: 16 }, () =>
        guard.execute(refund, { tenant, proposal: prepared.proposal }),
      ),
    );
    expect(provider.calls.execute).toBe(1);
    expect(results.filter((r) => r.outcome === 'verified')).toHaveLength(1);
    for (const result of results) {
      expect(['verified', 'in_progress', 'replayed']).toContain(result.outcome);
    }
  });

  it('lets only one of two raced proposals for the same effect write; the other is superseded', async () => {
    const { guard, refund, store, tenant, provider } = createHarness();
    const [a, b] = await Promise.all([
      guard.prepare(refund, { tenant, input: refundArgs({ requestId: 'r-a' }), principal }),
      guard.prepare(refund, { tenant, input: refundArgs({ requestId: 'r-b' }), principal }),
    ]);
    expect(a?.proposal).not.toBe(b?.proposal);
    const results = await Promise.all([
      guard.execute(refund, { tenant, proposal: a!.proposal }),
      guard.execute(refund, { tenant, proposal: b!.proposal }),
    ]);
    expect(provider.calls.execute).toBe(1);
    const outcomes = results.map((r) => r.outcome).sort();
    expect(outcomes).toEqual(['replayed', 'verified']);
    const statuses = [
      (await store.getProposal(tenant, a!.proposal))?.status,
      (await store.getProposal(tenant, b!.proposal))?.status,
    ].sort();
    expect(statuses).toEqual(['superseded', 'verified']);
  });

  it('hands the executor a provider idempotency key that is stable across retries and restarts', async () => {
    const harness = createHarness();
    const { guard, refund, tenant, provider, store, keyRing, clock } = harness;
    provider.steps = ['lost_before_write'];
    provider.absentAnswer = 'absent_not_final';
    const prepared = await guard.prepare(refund, { tenant, input: refundArgs(), principal });
    const first = await guard.execute(refund, { tenant, proposal: prepared.proposal });
    expect(first.outcome).toBe('verification_pending');
    // "Restart": a new guard over the same store and keys.
    const restarted = createGuard({ store, keyRing, clock });
    provider.absentAnswer = 'absent_final';
    const replanned = await restarted.prepare(refund, {
      tenant,
      input: refundArgs({ requestId: 'req-after-restart' }),
      principal,
    });
    expect(replanned.outcome).toBe('replayed');
    expect(replanned.proposal).toBe(prepared.proposal);
    const started = (await store.readLedger({ tenant, proposal: prepared.proposal })).find(
      (e) => e.type === 'commit_started',
    );
    expect(started?.data.providerIdempotencyKey).toBe(provider.keysSeen[0]);
    expect(provider.keysSeen[0]).toMatch(/^sg-[0-9a-f]{48}$/);
  });

  it('re-checks expiry at the execution boundary', async () => {
    const { guard, refund, tenant, provider, clock } = createHarness();
    const prepared = await guard.prepare(refund, { tenant, input: refundArgs(), principal });
    clock.advance(refund.proposalTtlMs);
    const result = await guard.execute(refund, { tenant, proposal: prepared.proposal });
    expect(result).toMatchObject({ outcome: 'expired', status: 'expired' });
    expect(provider.calls.execute).toBe(0);
  });

  it('goes stale on material drift and offers a fresh superseding proposal without writing', async () => {
    const { guard, refund, store, tenant, provider } = createHarness();
    const prepared = await guard.prepare(refund, { tenant, input: refundArgs(), principal });
    provider.drifted = true;
    const result = await guard.execute(refund, { tenant, proposal: prepared.proposal });
    expect(result).toMatchObject({ outcome: 'stale', status: 'stale' });
    expect(result.reasonCode).toBe('order_refunded_elsewhere');
    expect(result.freshProposal).toBeDefined();
    expect(provider.calls.execute).toBe(0);
    const fresh = await store.getProposal(tenant, result.freshProposal!);
    expect(fresh).toMatchObject({ supersedes: prepared.proposal, status: 'authorized' });
    const old = await store.getProposal(tenant, prepared.proposal);
    expect(old?.supersededBy).toBe(result.freshProposal);
    // Executing the stale one again points at the fresh one; the fresh one runs once.
    const again = await guard.execute(refund, { tenant, proposal: prepared.proposal });
    expect(again.freshProposal).toBe(result.freshProposal);
    provider.drifted = false;
    const executed = await guard.execute(refund, { tenant, proposal: result.freshProposal! });
    expect(executed.outcome).toBe('verified');
    expect(provider.calls.execute).toBe(1);
  });

  it('records failed_known and lets a later proposal for the same effect take the claim', async () => {
    const { guard, refund, store, tenant, provider } = createHarness();
    provider.steps = ['fail_known'];
    const first = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(first).toMatchObject({ outcome: 'failed_known', status: 'failed_known' });
    expect(provider.writes.size).toBe(0);
    const retry = await guard.run(refund, {
      tenant,
      input: refundArgs({ requestId: 'req-2' }),
      principal,
    });
    expect(retry.outcome).toBe('verified');
    expect(retry.proposal).not.toBe(first.proposal);
    expect(provider.writes.size).toBe(1);
    const claim = await store.getEffectClaim(tenant, `support.refund@1#${first.semanticEffectKey}`);
    expect(claim?.proposal).toBe(retry.proposal);
  });
});

describe('unknown outcomes and verification', () => {
  it('verifies instead of resending when the response was lost after the write', async () => {
    const { guard, refund, store, tenant, provider } = createHarness();
    provider.steps = ['lost_after_write'];
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result).toMatchObject({ outcome: 'verified', status: 'verified' });
    expect(provider.calls.execute).toBe(1);
    expect(provider.calls.verify).toBe(1);
    expect(provider.writes.size).toBe(1);
    const path = (await store.readLedger({ tenant, proposal: result.proposal })).map((e) => e.type);
    expect(path).toEqual([
      'contract_validated',
      'policy_decided',
      'idempotency_decided',
      'commit_started',
      'commit_outcome_unknown',
      'verification_started',
      'verification_observed',
    ]);
  });

  it('treats an executor that throws as an unknown outcome, never as a failure to retry', async () => {
    const { guard, refund, tenant, provider } = createHarness();
    provider.steps = ['throw_after_write'];
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result.outcome).toBe('verified');
    expect(provider.calls.execute).toBe(1);
    expect(provider.writes.size).toBe(1);
  });

  it('waits for the settling window before verifying, then verifies on reconcile', async () => {
    const { guard, provider, tenant, clock } = createHarness();
    const refund = refundAction(provider, { verificationDelayMs: 5_000 });
    provider.steps = ['lost_after_write'];
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result).toMatchObject({ outcome: 'failed_unknown', status: 'failed_unknown' });
    const early = await guard.reconcile(refund, { tenant, proposal: result.proposal });
    expect(early.outcome).toBe('failed_unknown');
    expect(provider.calls.verify).toBe(0);
    clock.advance(5_000);
    const later = await guard.reconcile(refund, { tenant, proposal: result.proposal });
    expect(later.outcome).toBe('verified');
    expect(provider.calls.verify).toBe(1);
    expect(provider.calls.execute).toBe(1);
  });

  it('bounds verification attempts and ends verification_unresolved, never resending', async () => {
    const { guard, provider, tenant, clock } = createHarness();
    const refund = refundAction(provider, {
      maxVerificationAttempts: 3,
      verificationDelayMs: 1_000,
    });
    provider.steps = ['lost_before_write'];
    provider.absentAnswer = 'unknown';
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result.outcome).toBe('failed_unknown');
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(1_000);
      outcomes.push((await guard.reconcile(refund, { tenant, proposal: result.proposal })).outcome);
    }
    expect(outcomes).toEqual([
      'verification_pending',
      'verification_pending',
      'verification_unresolved',
      'verification_unresolved',
      'verification_unresolved',
    ]);
    expect(provider.calls.verify).toBe(3);
    expect(provider.calls.execute).toBe(1);
    // A human can resume it; the provider now answers.
    provider.absentAnswer = 'absent_not_final';
    provider.writes.set(provider.keysSeen[0]!, { id: 're_late', provider: 'payments' });
    const resumed = await guard.resumeVerification(refund, { tenant, proposal: result.proposal });
    expect(resumed.outcome).toBe('verified');
  });

  it('allows a resend only after a final absence, a passed window and a declared resend (I5)', async () => {
    const { guard, provider, tenant, clock, store } = createHarness();
    const refund = refundAction(provider, {
      allowResendAfterFinalAbsence: true,
      verificationDelayMs: 2_000,
      executionLeaseMs: 2_000,
    });
    provider.steps = ['lost_before_write'];
    provider.absentAnswer = 'absent_final';
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result.outcome).toBe('failed_unknown');
    clock.advance(2_000);
    const resolved = await guard.reconcile(refund, { tenant, proposal: result.proposal });
    expect(resolved).toMatchObject({ outcome: 'resend_allowed', status: 'authorized' });
    const resent = await guard.execute(refund, { tenant, proposal: result.proposal });
    expect(resent.outcome).toBe('verified');
    expect(provider.calls.execute).toBe(2);
    expect(provider.keysSeen[0]).not.toBe(provider.keysSeen[1]);
    expect(provider.writes.size).toBe(1);
    const types = (await store.readLedger({ tenant, proposal: result.proposal })).map(
      (e) => e.type,
    );
    expect(types).toContain('resend_allowed');
  });

  it('confirms an accepted write at once even with a settling window (the window only delays trusting absence)', async () => {
    const { guard, provider, tenant } = createHarness();
    const refund = refundAction(provider, { verificationDelayMs: 60_000 });
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result).toMatchObject({ outcome: 'verified', status: 'verified', revision: 3 });
    expect(provider.calls.verify).toBe(1);
  });

  it('does not resend after a final absence when the action did not declare resends safe', async () => {
    const { guard, refund, tenant, provider, clock } = createHarness();
    provider.steps = ['lost_before_write'];
    provider.absentAnswer = 'absent_final';
    const first = await guard.run(refund, { tenant, input: refundArgs(), principal });
    // "Absent" is trusted only once the attempt's lease has ended (window 2).
    expect(first).toMatchObject({
      outcome: 'verification_pending',
      reasonCode: 'absence_not_yet_trusted',
    });
    clock.advance(refund.executionLeaseMs);
    const result = await guard.reconcile(refund, { tenant, proposal: first.proposal });
    expect(result).toMatchObject({ outcome: 'verification_unresolved' });
    expect(result.reasonCode).toBe('absent_but_resend_not_declared');
    expect((await guard.execute(refund, { tenant, proposal: result.proposal })).outcome).toBe(
      'verification_unresolved',
    );
    expect(provider.calls.execute).toBe(1);
  });

  it('recovers an execution whose lease expired (a dead executor) by verifying, and keeps its late result', async () => {
    const { guard, refund, tenant, provider, clock, store } = createHarness();
    provider.steps = ['hang_after_write'];
    const prepared = await guard.prepare(refund, { tenant, input: refundArgs(), principal });
    const hanging = guard.execute(refund, { tenant, proposal: prepared.proposal });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await guard.reconcile(refund, { tenant, proposal: prepared.proposal })).outcome).toBe(
      'in_progress',
    );
    clock.advance(refund.executionLeaseMs);
    const reconciled = await guard.reconcile(refund, { tenant, proposal: prepared.proposal });
    expect(reconciled.outcome).toBe('verified');
    provider.release();
    const late = await hanging;
    expect(late.status).toBe('verified');
    expect(provider.calls.execute).toBe(1);
    const types = (await store.readLedger({ tenant, proposal: prepared.proposal })).map(
      (e) => e.type,
    );
    expect(types).toContain('lease_expired');
    expect(types).toContain('late_result_observed');
  });

  it('lets two concurrent reconcilers call the verifier once', async () => {
    const { guard, provider, tenant, clock } = createHarness();
    const refund = refundAction(provider, { verificationDelayMs: 1_000 });
    provider.steps = ['lost_after_write'];
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    clock.advance(1_000);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () =>
        guard.reconcile(refund, { tenant, proposal: result.proposal }),
      ),
    );
    expect(provider.calls.verify).toBe(1);
    expect(outcomes.filter((r) => r.outcome === 'verified').length).toBeGreaterThanOrEqual(1);
    for (const r of outcomes) expect(['verified', 'in_progress']).toContain(r.outcome);
  });

  it('sweeps due proposals: expiring stale approvals and reconciling unknown outcomes', async () => {
    const { guard, provider, tenant, clock } = createHarness();
    const refund = refundAction(provider, { verificationDelayMs: 1_000 });
    const waiting = await guard.prepare(refund, {
      tenant,
      input: refundArgs({ amount: '500.00' }),
      principal,
    });
    provider.steps = ['lost_after_write'];
    const unknown = await guard.run(refund, {
      tenant,
      input: refundArgs({ orderId: 'ord_2' }),
      principal,
    });
    clock.advance(refund.proposalTtlMs);
    const swept = await guard.sweep(refund, { tenant });
    const byProposal = new Map(swept.map((r) => [r.proposal, r.outcome]));
    expect(byProposal.get(waiting.proposal)).toBe('expired');
    expect(byProposal.get(unknown.proposal)).toBe('verified');
  });
});

describe('partial results and compensation', () => {
  it('records partially_succeeded for an itemized effect', async () => {
    const { guard, provider, tenant } = createHarness();
    const refund = refundAction(provider, {
      effectKind: 'itemized',
      execute: async () => ({
        kind: 'partial',
        items: [
          { step: 'line-1', outcome: 'committed', receipt: { id: 're_a', provider: 'payments' } },
          { step: 'line-2', outcome: 'failed', reason: 'card_expired' },
        ],
      }),
    });
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result).toMatchObject({ outcome: 'partially_succeeded', status: 'partially_succeeded' });
    expect(result.result?.receipts.map((r) => r.id)).toEqual(['re_a']);
  });

  it('requires compensation, with the receipt, when a later step fails, and compensates exactly once', async () => {
    const { guard, provider, tenant, store } = createHarness();
    const refund = refundAction(provider, {
      effectKind: 'all_or_nothing',
      execute: async () => ({
        kind: 'partial',
        items: [
          { step: 'refund', outcome: 'committed', receipt: { id: 're_x', provider: 'payments' } },
          { step: 'close-ticket', outcome: 'failed', reason: 'crm_unavailable' },
        ],
      }),
    });
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result).toMatchObject({
      outcome: 'compensation_required',
      status: 'compensation_required',
      reasonCode: 'later_step_failed',
    });
    const event = (await store.readLedger({ tenant, proposal: result.proposal })).find(
      (e) => e.type === 'compensation_required',
    );
    expect(event?.data.receipts).toEqual([{ id: 're_x', provider: 'payments' }]);
    const compensations = await Promise.all([
      guard.compensate(refund, { tenant, proposal: result.proposal }),
      guard.compensate(refund, { tenant, proposal: result.proposal }),
    ]);
    expect(compensations.map((c) => c.outcome).sort()).toEqual(['compensated', 'in_progress']);
    const again = await guard.compensate(refund, { tenant, proposal: result.proposal });
    expect(again.outcome).toBe('replayed');
    expect(provider.calls.compensate).toBe(1);
    expect(again.result?.compensationReceipts).toHaveLength(1);
  });

  it('keeps compensation_required when compensation fails, so it can be retried', async () => {
    const { guard, provider, tenant } = createHarness();
    let attempts = 0;
    const refund = refundAction(provider, {
      execute: async () => ({
        kind: 'partial',
        items: [
          { step: 'refund', outcome: 'committed', receipt: { id: 're_y', provider: 'payments' } },
          { step: 'notify', outcome: 'failed' },
        ],
      }),
      compensate: async () => {
        attempts += 1;
        if (attempts === 1) throw new Error('provider down');
        return { kind: 'compensated', receipt: { id: 'rev_y', provider: 'payments' } };
      },
    });
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    const failed = await guard.compensate(refund, { tenant, proposal: result.proposal });
    expect(failed).toMatchObject({ outcome: 'compensation_required' });
    const retried = await guard.compensate(refund, { tenant, proposal: result.proposal });
    expect(retried.outcome).toBe('compensated');
    expect(attempts).toBe(2);
  });

  it('refuses to compensate an action that declares no compensation', async () => {
    const { guard, provider, tenant } = createHarness();
    const refund = refundAction(provider, { compensate: undefined as never });
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    await expect(
      guard.compensate(refund, { tenant, proposal: result.proposal }),
    ).rejects.toMatchObject({ code: 'compensation_not_declared' });
  });
});

describe('approval flow end to end', () => {
  it('requires 2-of-3, executes once, and the ledger tells the whole story', async () => {
    const { guard, refund, tenant, provider, clock, store } = createHarness();
    const prepared = await guard.prepare(refund, {
      tenant,
      input: refundArgs({ amount: '250.00' }),
      principal,
    });
    const [first, second] = await approve(
      guard,
      refund,
      tenant,
      prepared.proposal,
      ['finance-a', 'finance-b'],
      clock.now(),
    );
    expect(first?.outcome).toBe('authority_pending');
    expect(second?.outcome).toBe('authorized');
    const results = await Promise.all([
      guard.execute(refund, { tenant, proposal: prepared.proposal }),
      guard.execute(refund, { tenant, proposal: prepared.proposal }),
    ]);
    expect(results.map((r) => r.outcome).sort()).toEqual(['in_progress', 'verified']);
    expect(provider.calls.execute).toBe(1);
    const replay = await guard.replay({ tenant, proposal: prepared.proposal });
    expect(replay?.decisionPath.join(' -> ')).toBe(
      'contract_validated -> policy_decided -> idempotency_decided -> authority_recorded -> authority_recorded -> authority_satisfied -> commit_started -> committed -> verification_observed',
    );
    expect((await guard.verifyLedger({ tenant })).kind).toBe('valid');
    expect((await store.readLedger({ tenant })).length).toBeGreaterThan(0);
  });
});

describe('a failing drift check', () => {
  it('throws resolve_failed, claims nothing, and lets a later execute proceed once', async () => {
    const { guard, provider, tenant, store } = createHarness();
    let failing = true;
    const refund = refundAction(provider, {
      resolve: async () => {
        if (failing) throw new Error('orders API unreachable');
        return { kind: 'current' };
      },
    });
    const prepared = await guard.prepare(refund, { tenant, input: refundArgs(), principal });
    await expect(
      guard.execute(refund, { tenant, proposal: prepared.proposal }),
    ).rejects.toMatchObject({ code: 'resolve_failed' });
    expect(provider.calls.execute).toBe(0);
    expect((await store.getProposal(tenant, prepared.proposal))?.status).toBe('authorized');
    failing = false;
    const executed = await guard.execute(refund, { tenant, proposal: prepared.proposal });
    expect(executed.outcome).toBe('verified');
    expect(provider.calls.execute).toBe(1);
  });
});
