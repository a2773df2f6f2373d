/**
 * Which `stripe` client settings are safe, measured: the sandbox ignores idempotency keys and
 * drops the first refund's response after the write (the write committed, zero response bytes),
 * and each client setup makes one `refunds.create` call. The sandbox counts the refunds. These
 * numbers are the table in docs/executor-kit.md.
 */
import { findTransportError } from 'sideguard/executor-kit';
import {
  createStripeHttpClient,
  runStripeCall,
  stripeClientSettings,
  stripeRefundPair,
} from 'sideguard/stripe';
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { keys } from '../../sandbox/sandbox-helpers.js';
import {
  createTestGuard,
  firstRequestFault,
  type IdempotencyMode,
  kitRefundAction,
  naiveStripe,
  type RefundInput,
  refundAction,
  refundsForEffect,
  runRefund,
  type TestSandbox,
  useStripeTestBed,
} from './stripe-harness.js';

const bed = useStripeTestBed();

async function droppingSandbox(idempotency: IdempotencyMode = 'ignore'): Promise<TestSandbox> {
  return bed.sandbox({
    idempotency,
    faults: firstRequestFault('create_refund', { kind: 'drop_after_write' }),
  });
}

const location = (sandbox: TestSandbox) => {
  const url = new URL(sandbox.dataUrl);
  return { host: url.hostname, port: Number(url.port), protocol: 'http' as const };
};

/** One refunds.create call; what it returned or threw, and what the sandbox committed. */
async function oneRefund(sandbox: TestSandbox, stripe: Stripe) {
  const outcome = await stripe.refunds
    .create(
      { charge: 'ch_sg_001', amount: 500, metadata: { sideguard_effect: 'measured' } },
      { idempotencyKey: 'effect-derived-key-1' },
    )
    .then(
      (refund) => ({ kind: 'returned' as const, refund }),
      (error: unknown) => ({ kind: 'threw' as const, error }),
    );
  const observations = await sandbox.control.observations();
  const creates = observations.requests.filter((entry) => entry.operation === 'create_refund');
  return { outcome, writes: observations.writes.total, requests: creates.length };
}

describe('stripe 23 against a dropped response with keys ignored: one create call, how many refunds?', () => {
  it('the client version measured', () => {
    expect(Stripe.PACKAGE_VERSION).toMatch(/^23\./);
  });

  it('its own Node HTTP client, maxNetworkRetries: 0 → 2 refunds (a closed connection is retried once anyway)', async () => {
    const sandbox = await droppingSandbox();
    const measured = await oneRefund(sandbox, naiveStripe(sandbox.dataUrl, 0));
    expect(measured).toMatchObject({ outcome: { kind: 'returned' }, writes: 2, requests: 2 });
  });

  it('its own Node HTTP client, default settings (maxNetworkRetries: 2) → 2 refunds', async () => {
    const sandbox = await droppingSandbox();
    const stripe = new Stripe(keys.paymentsWriter, location(sandbox));
    expect(stripe.getMaxNetworkRetries()).toBe(2);
    const measured = await oneRefund(sandbox, stripe);
    expect(measured).toMatchObject({ outcome: { kind: 'returned' }, writes: 2, requests: 2 });
  });

  it('createFetchHttpClient() on the global fetch, maxNetworkRetries: 0 → 1 refund, but the error cannot say whether it was sent', async () => {
    const sandbox = await droppingSandbox();
    const stripe = new Stripe(keys.paymentsWriter, {
      ...location(sandbox),
      httpClient: Stripe.createFetchHttpClient(),
      maxNetworkRetries: 0,
    });
    const measured = await oneRefund(sandbox, stripe);
    expect(measured).toMatchObject({ outcome: { kind: 'threw' }, writes: 1, requests: 1 });
    const error = (measured.outcome as { error: unknown }).error;
    expect(error).toMatchObject({ type: 'StripeConnectionError' });
    expect(findTransportError(error)).toBeUndefined();
  });

  it('createFetchHttpClient() on the global fetch, maxNetworkRetries: 2 → 2 refunds', async () => {
    const sandbox = await droppingSandbox();
    const stripe = new Stripe(keys.paymentsWriter, {
      ...location(sandbox),
      httpClient: Stripe.createFetchHttpClient(),
      maxNetworkRetries: 2,
    });
    expect(await oneRefund(sandbox, stripe)).toMatchObject({ writes: 2, requests: 2 });
  });

  it('createFetchHttpClient(kit.fetch), maxNetworkRetries: 0 → 1 refund, and the error says it may have been sent', async () => {
    const sandbox = await droppingSandbox();
    const stripe = new Stripe(keys.paymentsWriter, {
      ...location(sandbox),
      httpClient: Stripe.createFetchHttpClient(bed.transport().fetch),
      maxNetworkRetries: 0,
    });
    const measured = await oneRefund(sandbox, stripe);
    expect(measured).toMatchObject({ outcome: { kind: 'threw' }, writes: 1, requests: 1 });
    expect(findTransportError((measured.outcome as { error: unknown }).error)).toMatchObject({
      sent: true,
      failure: 'connection_closed',
    });
  });

  it('stripeClientSettings(kit) (the kit HTTP client, maxNetworkRetries: 0) → 1 refund', async () => {
    const sandbox = await droppingSandbox();
    const stripe = new Stripe(keys.paymentsWriter, {
      ...location(sandbox),
      ...stripeClientSettings(bed.transport()),
    });
    expect(await oneRefund(sandbox, stripe)).toMatchObject({
      outcome: { kind: 'threw' },
      writes: 1,
      requests: 1,
    });
  });

  it('the kit HTTP client with maxNetworkRetries: 2, inside runStripeCall → 1 refund: the retries are refused before they leave the process', async () => {
    const sandbox = await droppingSandbox();
    const stripe = new Stripe(keys.paymentsWriter, {
      ...location(sandbox),
      httpClient: createStripeHttpClient(bed.transport()),
      maxNetworkRetries: 2,
    });
    const outcome = await runStripeCall(() =>
      stripe.refunds.create({ charge: 'ch_sg_001', amount: 500 }, { idempotencyKey: 'k-1' }),
    );
    expect(outcome).toEqual({ kind: 'failed_unknown', reason: 'transport_connection_closed' });
    const observations = await sandbox.control.observations();
    expect(observations.writes.total).toBe(1);
    expect(
      observations.requests.filter((entry) => entry.operation === 'create_refund'),
    ).toHaveLength(1);
  });
});

describe('under the guard', () => {
  /** The executor most code would write first: the client's own transport, the guard's key. */
  function naiveRefundAction(sandbox: TestSandbox) {
    const stripe = naiveStripe(sandbox.dataUrl, 0);
    const reader = bed.kit(sandbox.dataUrl);
    // Verification is the kit's (it reads the charge's refunds); only the write is naive.
    const kit = stripeRefundPair({
      stripe: reader.stripe,
      refund: (input: RefundInput) => ({ charge: input.chargeId }),
    });
    return refundAction({
      execute: async (input, context) => {
        const refund = await stripe.refunds.create(
          {
            charge: input.chargeId,
            amount: input.amountMinor,
            metadata: { sideguard_effect: context.semanticEffectKey },
          },
          { idempotencyKey: context.providerIdempotencyKey },
        );
        return { kind: 'accepted', receipt: { id: refund.id, provider: 'payments' } };
      },
      verify: kit.verify,
    });
  }

  it('the naive executor (its own client, maxNetworkRetries: 0) makes TWO refunds when keys are ignored, while it reports one — the failure the kit exists for', async () => {
    const sandbox = await droppingSandbox('ignore');
    const { guard } = createTestGuard();
    const result = await runRefund(guard, naiveRefundAction(sandbox));
    // The guard believes the effect happened once: the executor returned one refund...
    expect(result.status).toBe('verified');
    expect(await refundsForEffect(sandbox, result.semanticEffectKey ?? '')).toBe(2);
    // ...and the duplicate shows only because the kit's verifier counts the refunds carrying
    // the effect: it confirms the oldest, a different refund from the executor's receipt.
    const receipts = result.result?.receipts ?? [];
    expect(receipts).toHaveLength(2);
    expect(receipts[0]?.id).not.toBe(receipts[1]?.id);
    expect(receipts[1]?.details).toMatchObject({ matchingRefunds: 2 });
  });

  it('the naive executor is saved by the key when keys are honoured: one refund', async () => {
    const sandbox = await droppingSandbox('honour');
    const { guard } = createTestGuard();
    const result = await runRefund(guard, naiveRefundAction(sandbox));
    expect(result.status).toBe('verified');
    expect(await refundsForEffect(sandbox, result.semanticEffectKey ?? '')).toBe(1);
  });

  it('the kit pair refuses a client that could send a refund twice', () => {
    const retrying = new Stripe(keys.paymentsWriter, {
      httpClient: createStripeHttpClient(bed.transport()),
      maxNetworkRetries: 2,
    });
    const ownTransport = new Stripe(keys.paymentsWriter, { maxNetworkRetries: 0 });
    for (const stripe of [retrying, ownTransport]) {
      expect(() => kitRefundAction(stripe)).toThrow(
        expect.objectContaining({ name: 'ConfigurationError', code: 'stripe_client_unsafe' }),
      );
    }
  });
});
