import { describe, expect, it } from 'vitest';
import { ledgerOf, ofType, PRINCIPAL, waitUntil } from '../../test/support/evidence-helpers.js';
import {
  createHarness,
  type ProviderStep,
  refundAction,
  refundArgs,
} from '../../test/support/guard-harness.js';
import { timerScheduler } from '../runtime-defaults.js';
import type { CompensateContext, ExecuteContext, VerifyContext } from './action.js';
import { createManualClock } from './clock.js';
import { createGuardCore, type Scheduler } from './guard.js';

const LEASE_MS = 30_000;
const principal = PRINCIPAL;

/**
 * Window 2: the first call hangs before sending; a sweeper finds the lease over, verifies
 * "absent" and allows a resend, which writes; then the first call is released.
 */
async function hangSweepResendRelease(step: ProviderStep) {
  const h = createHarness();
  const refund = refundAction(h.provider, {
    allowResendAfterFinalAbsence: true,
    verificationDelayMs: LEASE_MS,
    executionLeaseMs: LEASE_MS,
  });
  h.provider.steps = [step];
  const address = {
    tenant: h.tenant,
    proposal: (await h.guard.prepare(refund, { tenant: h.tenant, input: refundArgs(), principal }))
      .proposal,
  };
  const first = h.guard.execute(refund, address);
  await waitUntil(() => h.provider.waiting.length === 1);
  for (let round = 0; round < 3; round++) {
    h.clock.advance(LEASE_MS);
    await h.guard.sweep(refund, { tenant: h.tenant });
    await h.guard.execute(refund, address);
  }
  h.provider.release();
  await first;
  const settled = await h.guard.resumeVerification(refund, address);
  return { h, settled, events: await ledgerOf(h, address.proposal) };
}

describe('an executor outliving its lease (window 2)', () => {
  it('aborts the first call when its lease ends, so the resend is the only write', async () => {
    const { h, settled, events } = await hangSweepResendRelease('hang_then_write');
    expect(h.provider.writes.size).toBe(1);
    expect(h.provider.calls.execute).toBe(2);
    expect(settled.status).toBe('verified');
    expect(ofType(events, 'resend_allowed')).toHaveLength(1);
    const unknown = [
      ...ofType(events, 'commit_outcome_unknown'),
      ...ofType(events, 'late_result_observed'),
    ];
    expect(unknown.map((event) => event.data.reasonCode)).toContain('executor_threw:lease_ended');
  });

  it('never resends while a call that ignored its signal still runs in this process', async () => {
    const { h, settled, events } = await hangSweepResendRelease('hang_then_write_ignoring_signal');
    expect(h.provider.writes.size).toBe(1);
    expect(h.provider.calls.execute).toBe(1);
    expect(ofType(events, 'resend_allowed')).toHaveLength(0);
    expect(settled.status).toBe('verified');
  });

  it('trusts an absence only after the latest attempt lease has ended, even with a longer window elsewhere', async () => {
    const h = createHarness();
    const refund = refundAction(h.provider, {
      allowResendAfterFinalAbsence: true,
      verificationDelayMs: LEASE_MS,
      executionLeaseMs: LEASE_MS,
    });
    h.provider.steps = ['lost_before_write'];
    const result = await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
    expect(result.status).toBe('failed_unknown');
    h.clock.advance(LEASE_MS - 1);
    const early = await h.guard.resumeVerification(refund, {
      tenant: h.tenant,
      proposal: result.proposal,
    });
    expect(early.status).toBe('verification_pending');
    h.clock.advance(1);
    const due = await h.guard.resumeVerification(refund, {
      tenant: h.tenant,
      proposal: result.proposal,
    });
    expect(due.outcome).toBe('resend_allowed');
  });

  it('gives execute, verify and compensate the lease end as deadline and a signal that aborts exactly then', async () => {
    const h = createHarness();
    const seen: { name: string; deadlineMs: number; abortedEarly: boolean; signal: AbortSignal }[] =
      [];
    const watch = (name: string, context: ExecuteContext, advanceMs: number) => {
      h.clock.advance(advanceMs - 1);
      seen.push({
        name,
        deadlineMs: context.deadlineMs,
        abortedEarly: context.signal.aborted,
        signal: context.signal,
      });
      h.clock.advance(1);
    };
    const refund = refundAction(h.provider, {
      effectKind: 'all_or_nothing',
      execute: async (_input, context: ExecuteContext) => {
        watch('execute', context, 10);
        return {
          kind: 'partial',
          items: [
            { step: 'refund', outcome: 'committed', receipt: { id: 're_1', provider: 'payments' } },
            { step: 'close', outcome: 'failed', reason: 'crm_down' },
          ],
        };
      },
      compensate: async (_input, context: CompensateContext) => {
        watch('compensate', context, LEASE_MS);
        return { kind: 'compensated', receipt: { id: 'rev_1', provider: 'payments' } };
      },
    });
    const startedAt = h.clock.now();
    const result = await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
    expect(result.status).toBe('compensation_required');
    const compensatedAt = h.clock.now();
    await h.guard.compensate(refund, { tenant: h.tenant, proposal: result.proposal });
    expect(
      seen.map(({ name, deadlineMs, abortedEarly }) => ({ name, deadlineMs, abortedEarly })),
    ).toEqual([
      { name: 'execute', deadlineMs: startedAt + LEASE_MS, abortedEarly: false },
      { name: 'compensate', deadlineMs: compensatedAt + LEASE_MS, abortedEarly: false },
    ]);
    expect(seen[0]?.signal.aborted).toBe(false);
    expect(seen[1]?.signal.aborted).toBe(true);
    expect(seen[1]?.signal.reason).toMatchObject({ code: 'lease_ended' });
  });

  it('gives a host that reads its signal only after the lease ended one already aborted, and keeps listeners of an early reader', async () => {
    const h = createHarness();
    const late: AbortSignal[] = [];
    const heard: unknown[] = [];
    let first = true;
    const refund = refundAction(h.provider, {
      execute: async (_input, context: ExecuteContext) => {
        if (first) {
          // Reads the signal before the end and listens; the lease then ends mid-call.
          first = false;
          context.signal.addEventListener('abort', () => heard.push(context.signal.reason));
          h.clock.advance(LEASE_MS);
          expect(context.signal.aborted).toBe(true);
        } else {
          // Never looks until the lease is over: the signal it then reads is already aborted.
          h.clock.advance(LEASE_MS);
          late.push(context.signal);
          expect(Object.keys(context)).toContain('signal');
        }
        return { kind: 'accepted', receipt: { id: `re_${heard.length}`, provider: 'payments' } };
      },
    });
    await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
    await h.guard.run(refund, {
      tenant: h.tenant,
      input: refundArgs({ orderId: 'ord_1002' }),
      principal,
    });
    expect(heard).toHaveLength(1);
    expect(heard[0]).toMatchObject({ code: 'lease_ended' });
    expect(late).toHaveLength(1);
    expect(late[0]?.aborted).toBe(true);
    expect(late[0]?.reason).toMatchObject({ code: 'lease_ended' });
  });

  it('gives verify the deadline of the lease it runs under', async () => {
    const h = createHarness();
    const deadlines: number[] = [];
    const refund = refundAction(h.provider, {
      verify: async (_input, context: VerifyContext) => {
        deadlines.push(context.deadlineMs);
        return { kind: 'present', receipt: { id: 're_v', provider: 'payments' } };
      },
    });
    h.provider.steps = ['lost_after_write'];
    const now = h.clock.now();
    const result = await h.guard.run(refund, { tenant: h.tenant, input: refundArgs(), principal });
    expect(result.status).toBe('verified');
    // The lease of the execution and the one the verification took at the same instant.
    expect(deadlines).toEqual([now + LEASE_MS]);
  });

  it('cancels the lease timer once the call settles', async () => {
    const clock = createManualClock();
    let pending = 0;
    const scheduler: Scheduler = {
      at: (atMs, callback) => {
        pending += 1;
        const cancel = clock.at(atMs, callback);
        return () => {
          pending -= 1;
          cancel();
        };
      },
    };
    const h = createHarness();
    const guard = createGuardCore({
      store: h.store,
      keyRing: h.keyRing,
      clock,
      scheduler,
      ids: { proposal: () => 'prop_timer', lease: () => 'lease_timer' },
      randomBytes: (size) => new Uint8Array(size).fill(1),
    });
    const result = await guard.run(h.refund, { tenant: h.tenant, input: refundArgs(), principal });
    expect(result.status).toBe('verified');
    expect(pending).toBe(0);
  });

  it('needs a scheduler when the clock does not schedule', () => {
    const h = createHarness();
    expect(() =>
      createGuardCore({
        store: h.store,
        keyRing: h.keyRing,
        clock: { now: () => 0 },
        ids: { proposal: () => 'p', lease: () => 'l' },
        randomBytes: (size) => new Uint8Array(size),
      }),
    ).toThrowError(expect.objectContaining({ code: 'scheduler_missing' }));
  });

  it('refuses to declare resends safe with a settling window shorter than the lease, saying what to set', () => {
    const h = createHarness();
    expect(() =>
      refundAction(h.provider, {
        allowResendAfterFinalAbsence: true,
        verificationDelayMs: 2_000,
        executionLeaseMs: 10_000,
      }),
    ).toThrowError(
      expect.objectContaining({
        code: 'action_config_invalid',
        message: expect.stringMatching(/verificationDelayMs to at least 10000/),
      }),
    );
    expect(
      refundAction(h.provider, {
        allowResendAfterFinalAbsence: true,
        verificationDelayMs: 10_000,
        executionLeaseMs: 10_000,
      }).allowResendAfterFinalAbsence,
    ).toBe(true);
  });
});

describe('the timer scheduler', () => {
  it('fires once its clock has reached the time, and never once cancelled', async () => {
    const scheduler = timerScheduler({ now: () => 1_000 });
    const fired: string[] = [];
    scheduler.at(500, () => fired.push('past'));
    const cancel = scheduler.at(900, () => fired.push('cancelled'));
    cancel();
    scheduler.at(5_000, () => fired.push('future'));
    await new Promise((resolve) => setTimeout(resolve, 1));
    expect(fired).toEqual(['past']);
  });
});
