/**
 * The Stripe refund pair under the guard, against the sandbox over real HTTP with the official
 * `stripe` client: a response dropped after the write, in both idempotency modes; a hang past
 * the timeout; a refused connection; a refusal by the provider. The sandbox's own write counts
 * are the evidence, never the guard's result alone.
 */

import type { ExecuteContext } from 'sideguard';
import { stripeRefundPair } from 'sideguard/stripe';
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { closedPort } from '../../kit/socket-servers.js';
import {
  createTestGuard,
  firstRequestFault,
  type IdempotencyMode,
  kitRefundAction,
  type RefundInput,
  refundArgs,
  refundsForEffect,
  runRefund,
  SETTLING_MS,
  TENANT,
  untilCommitted,
  useStripeTestBed,
} from './stripe-harness.js';

const bed = useStripeTestBed();

describe.each<IdempotencyMode>(['honour', 'ignore'])(
  'a refund whose response is dropped after the write (keys %s)',
  (idempotency) => {
    it('is one refund: failed_unknown, then verified with the real refund id as receipt', async () => {
      const sandbox = await bed.sandbox({
        idempotency,
        faults: firstRequestFault('create_refund', { kind: 'drop_after_write' }),
      });
      const { stripe } = bed.kit(sandbox.dataUrl);
      const action = kitRefundAction(stripe);
      const { guard, clock } = createTestGuard();

      const first = await runRefund(guard, action);
      expect(first).toMatchObject({
        status: 'failed_unknown',
        outcome: 'failed_unknown',
        reasonCode: 'transport_connection_closed',
      });

      clock.advance(SETTLING_MS);
      const settled = await guard.reconcile(action, { tenant: TENANT, proposal: first.proposal });
      expect(settled).toMatchObject({ status: 'verified', outcome: 'verified' });

      const effect = first.semanticEffectKey ?? '';
      expect(await refundsForEffect(sandbox, effect)).toBe(1);
      const observations = await sandbox.control.observations();
      const [receipt] = observations.receipts;
      expect(settled.result?.receipts).toEqual([
        expect.objectContaining({ id: receipt?.objectId, provider: 'payments' }),
      ]);
      // The refund went out once: one create_refund request, with the guard's key.
      const creates = observations.requests.filter((entry) => entry.operation === 'create_refund');
      expect(creates).toHaveLength(1);
      if (idempotency === 'honour') {
        expect(creates[0]?.idempotencyKey).toEqual(expect.any(String));
        expect(creates[0]?.idempotencyKey).not.toMatch(/^stripe-node-retry-/);
      }
      // The verifier's private output is the refund itself, returned to a duplicate call.
      expect(settled.output).toMatchObject({
        id: receipt?.objectId,
        object: 'refund',
        amount: 500,
      });
      const again = await runRefund(guard, action, { requestId: 'req-2' });
      expect(again).toMatchObject({ outcome: 'replayed', proposal: first.proposal });
      expect(again.output).toMatchObject({ id: receipt?.objectId });
      expect(await refundsForEffect(sandbox, effect)).toBe(1);
    });
  },
);

describe('timeouts, refusals and rejections', () => {
  it('a hang past the timeout is failed_unknown, then verified: one refund', async () => {
    const sandbox = await bed.sandbox({
      idempotency: 'ignore',
      faults: firstRequestFault('create_refund', { kind: 'hang_after_write', hangMs: 60_000 }),
    });
    const { stripe } = bed.kit(sandbox.dataUrl, { timeoutMs: 300 });
    const action = kitRefundAction(stripe);
    const { guard, clock } = createTestGuard();

    const first = await runRefund(guard, action);
    expect(first).toMatchObject({ status: 'failed_unknown', reasonCode: 'transport_timeout' });
    clock.advance(SETTLING_MS);
    const settled = await guard.reconcile(action, { tenant: TENANT, proposal: first.proposal });
    expect(settled.status).toBe('verified');
    expect(await refundsForEffect(sandbox, first.semanticEffectKey ?? '')).toBe(1);
  });

  it('a refused connection is failed_known with nothing written, and a later retry sends it once', async () => {
    const sandbox = await bed.sandbox({ idempotency: 'ignore' });
    const down = bed.kit(`http://127.0.0.1:${await closedPort()}`);
    const { guard } = createTestGuard();

    const refused = await runRefund(guard, kitRefundAction(down.stripe));
    expect(refused).toMatchObject({
      status: 'failed_known',
      outcome: 'failed_known',
      reasonCode: 'transport_connection_refused',
    });
    expect((await sandbox.control.observations()).writes.total).toBe(0);

    // The network is back (the same action, deployed with a working client): the effect may
    // be sent, because the first attempt certainly had none.
    const up = bed.kit(sandbox.dataUrl);
    const retried = await runRefund(guard, kitRefundAction(up.stripe), { requestId: 'req-2' });
    expect(retried).toMatchObject({ status: 'verified', outcome: 'verified' });
    expect(retried.proposal).not.toBe(refused.proposal);
    expect(await refundsForEffect(sandbox, retried.semanticEffectKey ?? '')).toBe(1);
  });

  it('a provider refusal (400 charge_already_refunded) is failed_known with its code and nothing written', async () => {
    const sandbox = await bed.sandbox({});
    const { stripe } = bed.kit(sandbox.dataUrl);
    const { guard } = createTestGuard();
    const result = await runRefund(guard, kitRefundAction(stripe), {
      orderId: 'ord_1006',
      chargeId: 'ch_sg_006',
    });
    expect(result).toMatchObject({
      status: 'failed_known',
      reasonCode: 'http_400_charge_already_refunded',
    });
    expect((await sandbox.control.observations()).writes.total).toBe(0);
  });

  it('a rate limit is failed_known, and the retry refunds once', async () => {
    const sandbox = await bed.sandbox({
      faults: firstRequestFault('create_refund', { kind: 'rate_limit', retryAfterSeconds: 1 }),
    });
    const { stripe } = bed.kit(sandbox.dataUrl);
    const action = kitRefundAction(stripe);
    const { guard } = createTestGuard();
    const limited = await runRefund(guard, action);
    expect(limited).toMatchObject({ status: 'failed_known', reasonCode: 'http_429_rate_limit' });
    const retried = await runRefund(guard, action);
    expect(retried.status).toBe('verified');
    expect(await refundsForEffect(sandbox, retried.semanticEffectKey ?? '')).toBe(1);
  });

  it('a provider error after the write (500) is failed_unknown, then verified: one refund', async () => {
    const sandbox = await bed.sandbox({
      idempotency: 'ignore',
      faults: firstRequestFault('create_refund', { kind: 'error_after_write', status: 500 }),
    });
    const { stripe } = bed.kit(sandbox.dataUrl);
    const action = kitRefundAction(stripe);
    const { guard, clock } = createTestGuard();
    const first = await runRefund(guard, action);
    expect(first).toMatchObject({ status: 'failed_unknown' });
    expect(first.reasonCode).toMatch(/^http_500/);
    clock.advance(SETTLING_MS);
    expect(
      (await guard.reconcile(action, { tenant: TENANT, proposal: first.proposal })).status,
    ).toBe('verified');
    expect(await refundsForEffect(sandbox, first.semanticEffectKey ?? '')).toBe(1);
  });

  it('a connection dropped before dispatch is unknown to the client, and verification finds it absent', async () => {
    const sandbox = await bed.sandbox({
      faults: firstRequestFault('create_refund', { kind: 'drop_before_dispatch' }),
    });
    const { stripe } = bed.kit(sandbox.dataUrl);
    const action = kitRefundAction(stripe);
    const { guard, clock } = createTestGuard();
    const first = await runRefund(guard, action);
    // The request was written: from the client's side this is a lost response like any other.
    expect(first.status).toBe('failed_unknown');
    clock.advance(SETTLING_MS);
    const checked = await guard.reconcile(action, { tenant: TENANT, proposal: first.proposal });
    expect(checked.outcome).toBe('resend_allowed');
    expect(await refundsForEffect(sandbox, first.semanticEffectKey ?? '')).toBe(0);
  });
});

describe('the AbortSignal (the guard passes its own in the context; a config signal is the fallback)', () => {
  const pairFor = (stripe: Stripe, signal?: AbortSignal) =>
    stripeRefundPair({
      stripe,
      refund: (input: RefundInput) => ({ charge: input.chargeId, amount: input.amountMinor }),
      ...(signal === undefined ? {} : { signal }),
    });
  const context: ExecuteContext = {
    tenant: TENANT,
    proposal: 'prop_signal',
    semanticEffectKey: 'effect-signal',
    providerIdempotencyKey: 'key-signal',
    resendGeneration: 0,
    deadlineMs: Number.MAX_SAFE_INTEGER,
    signal: new AbortController().signal,
  };

  it("an aborted signal in the guard's context ends the call before anything is sent: failed_known", async () => {
    const sandbox = await bed.sandbox({});
    const { stripe } = bed.kit(sandbox.dataUrl);
    const withSignal: ExecuteContext & { signal: AbortSignal } = {
      ...context,
      signal: AbortSignal.abort(),
    };
    expect(await pairFor(stripe).execute(refundArgs(), withSignal)).toEqual({
      kind: 'failed_known',
      reason: 'transport_aborted_before_send',
    });
    expect((await sandbox.control.observations()).requests).toHaveLength(0);
  });

  it('an abort after the request was sent is failed_unknown — and the write can still land', async () => {
    const sandbox = await bed.sandbox({
      faults: firstRequestFault('create_refund', { kind: 'hold' }),
    });
    const { stripe } = bed.kit(sandbox.dataUrl);
    const controller = new AbortController();
    const pair = pairFor(stripe, controller.signal);
    const call = pair.execute(refundArgs(), context);
    await sandbox.control.waitForHeld(1);
    controller.abort();
    expect(await call).toEqual({ kind: 'failed_unknown', reason: 'transport_aborted_after_send' });
    await sandbox.control.releaseAll();
    await untilCommitted(sandbox, 'payments.create_refund');
    // The provider still carries out the request the client gave up on: only verify can tell.
    const found = await pairFor(stripe).verify(refundArgs(), {
      ...context,
      receipts: [],
      attempt: 1,
    });
    expect(found).toMatchObject({ kind: 'present', receipt: { provider: 'stripe' } });
    expect(await refundsForEffect(sandbox, 'effect-signal')).toBe(1);
  });
});
