/**
 * The official `stripe` npm client against the sandbox, unchanged: normal calls work, errors
 * arrive as the client's own classes, and a response lost after the write shows why the guard
 * exists — the client's retry is deduplicated only by a provider that honours its key.
 */
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys, startTestSandbox } from './sandbox-helpers.js';

type Sandbox = Awaited<ReturnType<typeof startTestSandbox>>;

function stripeFor(
  sandbox: Sandbox,
  options: { maxNetworkRetries?: number; timeout?: number; key?: string } = {},
): Stripe {
  const url = new URL(sandbox.dataUrl);
  return new Stripe(options.key ?? keys.paymentsWriter, {
    host: url.hostname,
    port: Number(url.port),
    protocol: 'http',
    maxNetworkRetries: options.maxNetworkRetries ?? 2,
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  });
}

const dropFirstRefund = {
  version: 1,
  rules: [
    {
      provider: 'payments',
      operation: 'create_refund',
      requests: [0],
      fault: { kind: 'drop_after_write' },
    },
  ],
} as const;

describe('the official stripe client against the sandbox', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(async () => {
    await sandbox.stop();
  });

  it('creates, retrieves and lists refunds unchanged', async () => {
    const stripe = stripeFor(sandbox);
    const refund = await stripe.refunds.create({
      charge: 'ch_sg_001',
      amount: 250,
      reason: 'requested_by_customer',
      metadata: { sideguard_effect: 'client-1' },
    });
    expect(refund).toMatchObject({
      object: 'refund',
      amount: 250,
      charge: 'ch_sg_001',
      status: 'succeeded',
      metadata: { sideguard_effect: 'client-1' },
    });
    expect(refund.lastResponse.statusCode).toBe(200);
    expect(refund.lastResponse.requestId).toMatch(/^req_/);
    const fetched = await stripe.refunds.retrieve(refund.id);
    expect(fetched.id).toBe(refund.id);
    const list = await stripe.refunds.list({ charge: 'ch_sg_001', limit: 3 });
    expect(list.data.map((entry) => entry.id)).toEqual([refund.id]);
    const byIntent = await stripe.refunds.list({ payment_intent: 'pi_sg_005' });
    expect(byIntent.data).toHaveLength(1);
    const charge = await stripe.charges.retrieve('ch_sg_001');
    expect(charge.amount_refunded).toBe(250);
    expect((await stripe.customers.retrieve('cus_sg_001')).id).toBe('cus_sg_001');
    expect((await stripe.paymentIntents.retrieve('pi_sg_001')).latest_charge).toBe('ch_sg_001');
  });

  it('auto-pages every refund forward (starting_after) and backward (ending_before)', async () => {
    const stripe = stripeFor(sandbox);
    const created: string[] = [];
    for (let index = 0; index < 7; index++) {
      const refund = await stripe.refunds.create({ charge: 'ch_sg_004', amount: 1 });
      created.push(refund.id);
    }
    const newestFirst = [...created].reverse();
    const forward = await stripe.refunds.list({ charge: 'ch_sg_004', limit: 2 }).autoPagingToArray({
      limit: 100,
    });
    expect(forward.map((refund) => refund.id)).toEqual(newestFirst);

    // Backward from the oldest: every newer refund, oldest to newest, across four pages.
    const backward = await stripe.refunds
      .list({ charge: 'ch_sg_004', limit: 2, ending_before: created[0]! })
      .autoPagingToArray({ limit: 100 });
    expect(backward.map((refund) => refund.id)).toEqual(created.slice(1));

    const page = await stripe.refunds.list({
      charge: 'ch_sg_004',
      limit: 2,
      ending_before: created[2]!,
    });
    expect(page.data.map((refund) => refund.id)).toEqual([created[4], created[3]]);
    expect(page.has_more).toBe(true);
    const last = await stripe.refunds.list({
      charge: 'ch_sg_004',
      limit: 2,
      ending_before: created[4]!,
    });
    expect(last.data.map((refund) => refund.id)).toEqual([created[6], created[5]]);
    expect(last.has_more).toBe(false);
  });

  it('raises StripeInvalidRequestError with the right code for rule violations and missing objects', async () => {
    const stripe = stripeFor(sandbox);
    await expect(
      stripe.refunds.create({ charge: 'ch_sg_002', amount: 99_999_999 }),
    ).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'amount_too_large',
      statusCode: 400,
      param: 'amount',
    });
    await expect(stripe.refunds.create({ charge: 'ch_sg_006' })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'charge_already_refunded',
    });
    await expect(stripe.refunds.retrieve('re_missing')).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'resource_missing',
      statusCode: 404,
    });
    await expect(
      stripeFor(sandbox, { key: 'sk_test_unknown' }).charges.retrieve('ch_sg_001'),
    ).rejects.toMatchObject({
      type: 'StripeAuthenticationError',
      statusCode: 401,
    });
    await expect(
      stripeFor(sandbox, { key: keys.paymentsReader }).refunds.create({
        charge: 'ch_sg_002',
        amount: 1,
      }),
    ).rejects.toMatchObject({
      type: 'StripePermissionError',
      statusCode: 403,
    });
  });

  it('raises StripeIdempotencyError when the application reuses its key with other parameters', async () => {
    const stripe = stripeFor(sandbox);
    await stripe.refunds.create(
      { charge: 'ch_sg_002', amount: 10 },
      { idempotencyKey: 'app-key-1' },
    );
    const replay = await stripe.refunds.create(
      { charge: 'ch_sg_002', amount: 10 },
      { idempotencyKey: 'app-key-1' },
    );
    expect(replay.lastResponse.headers['idempotent-replayed']).toBe('true');
    await expect(
      stripe.refunds.create({ charge: 'ch_sg_002', amount: 11 }, { idempotencyKey: 'app-key-1' }),
    ).rejects.toMatchObject({
      type: 'StripeIdempotencyError',
    });
  });

  it('raises StripeRateLimitError on a rate_limit fault', async () => {
    await sandbox.control.setFaults({
      version: 1,
      rules: [
        {
          provider: 'payments',
          operation: 'retrieve_charge',
          requests: [0],
          fault: { kind: 'rate_limit', retryAfterSeconds: 3 },
        },
      ],
    });
    try {
      const error = await stripeFor(sandbox, { maxNetworkRetries: 0 })
        .charges.retrieve('ch_sg_001')
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({
        type: 'StripeRateLimitError',
        statusCode: 429,
        code: 'rate_limit',
      });
      expect((error as { headers: Record<string, string> }).headers['retry-after']).toBe('3');
    } finally {
      await sandbox.control.clearFaults();
    }
  });
});

describe('a refund whose response is dropped after the write, retried by the stripe client itself', () => {
  it('yields exactly one refund when the provider honours idempotency keys', async () => {
    const sandbox = await startTestSandbox({ faults: dropFirstRefund });
    try {
      const refund = await stripeFor(sandbox).refunds.create({
        charge: 'ch_sg_001',
        amount: 500,
        metadata: { sideguard_effect: 'lost-response' },
      });
      expect(refund.amount).toBe(500);
      expect(refund.lastResponse.headers['idempotent-replayed']).toBe('true');

      const observations = await sandbox.control.observations();
      expect(observations.writes.byEffect['lost-response']?.count).toBe(1);
      expect(observations.writes.byOperation['payments.create_refund']).toBe(1);
      const attempts = observations.trace.filter((entry) => entry.operation === 'create_refund');
      expect(
        attempts.map((entry) => [
          entry.requestIndex,
          entry.fault,
          entry.writeOutcome,
          entry.delivery,
          entry.status,
        ]),
      ).toEqual([
        [0, 'drop_after_write', 'committed', 'dropped', null],
        [1, null, 'not_dispatched', 'sent', 200],
      ]);
      const requests = observations.requests.filter((entry) => entry.operation === 'create_refund');
      expect(requests[0]?.idempotencyKey).toMatch(/^stripe-node-retry-/);
      expect(requests[1]?.idempotencyKey).toBe(requests[0]?.idempotencyKey);
      const list = await stripeFor(sandbox).refunds.list({ charge: 'ch_sg_001' });
      expect(list.data).toHaveLength(1);
    } finally {
      await sandbox.stop();
    }
  });

  it('yields two refunds when the provider is configured to ignore idempotency keys', async () => {
    const sandbox = await startTestSandbox({
      faults: dropFirstRefund,
      idempotency: { payments: 'ignore' },
    });
    try {
      const refund = await stripeFor(sandbox).refunds.create({
        charge: 'ch_sg_001',
        amount: 500,
        metadata: { sideguard_effect: 'lost-response' },
      });
      expect(refund.amount).toBe(500);
      const observations = await sandbox.control.observations();
      expect(observations.writes.byEffect['lost-response']?.count).toBe(2);
      expect(observations.trace.map((entry) => [entry.fault, entry.writeOutcome])).toEqual([
        ['drop_after_write', 'committed'],
        [null, 'committed'],
      ]);
      const charge = await stripeFor(sandbox).charges.retrieve('ch_sg_001');
      expect(charge.amount_refunded).toBe(1000);
    } finally {
      await sandbox.stop();
    }
  });

  it('with retries disabled, the client still retries a closed connection once (and the key saves it)', async () => {
    const sandbox = await startTestSandbox({ faults: dropFirstRefund });
    try {
      const refund = await stripeFor(sandbox, { maxNetworkRetries: 0 }).refunds.create({
        charge: 'ch_sg_002',
        amount: 100,
      });
      expect(refund.lastResponse.headers['idempotent-replayed']).toBe('true');
      expect((await sandbox.control.observations()).writes.total).toBe(1);
    } finally {
      await sandbox.stop();
    }
  });
});
