/**
 * The Stripe customer-update pair under the guard, against the sandbox's payments API (with a
 * customer update added through its provider API) over real HTTP: a response dropped after the
 * write settles to one update in both idempotency modes; a customer without the effect's marker
 * is never taken as a reason to resend.
 */
import { defineAction } from 'sideguard';
import { stripeCustomerUpdatePair } from 'sideguard/stripe';
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createTestGuard,
  firstRequestFault,
  type IdempotencyMode,
  SETTLING_MS,
  TENANT,
  type TestSandbox,
  useStripeTestBed,
} from './stripe-harness.js';

const bed = useStripeTestBed();

const noteInput = z.object({
  customerId: z.string(),
  description: z.string(),
  requestId: z.string().optional(),
});

function noteAction(stripe: Stripe) {
  return defineAction({
    type: { namespace: 'support', name: 'customer_note', version: 1 },
    input: noteInput,
    protectedFields: ['customerId', 'description'],
    policy: () => ({ decision: 'allow', reason: 'test_policy' }),
    ...stripeCustomerUpdatePair({
      stripe,
      provider: 'payments',
      update: (input: z.output<typeof noteInput>) => ({
        customer: input.customerId,
        params: { description: input.description, metadata: { note_source: 'agent' } },
      }),
    }),
    verificationDelayMs: SETTLING_MS,
    executionLeaseMs: SETTLING_MS,
    maxVerificationAttempts: 2,
  });
}

async function setup(options: Parameters<typeof bed.sandbox>[0]) {
  const sandbox = await bed.sandbox(options);
  const client = bed.kit(sandbox.dataUrl);
  return {
    sandbox,
    stripe: client.stripe,
    action: noteAction(client.stripe),
    ...createTestGuard(),
  };
}

const input = {
  customerId: 'cus_sg_002',
  description: 'VIP: call before refunds',
  requestId: 'r1',
};

async function updates(sandbox: TestSandbox): Promise<number> {
  return (await sandbox.control.observations()).writes.byOperation['payments.update_customer'] ?? 0;
}

describe.each<IdempotencyMode>(['honour', 'ignore'])(
  'a customer update whose response is dropped after the write (keys %s)',
  (idempotency) => {
    it('is one update, verified from the customer itself', async () => {
      const { sandbox, stripe, action, guard, clock } = await setup({
        idempotency,
        faults: firstRequestFault('update_customer', { kind: 'drop_after_write' }),
      });
      const first = await guard.run(action, { tenant: TENANT, principal: 'agent', input });
      expect(first).toMatchObject({
        status: 'failed_unknown',
        reasonCode: 'transport_connection_closed',
      });
      clock.advance(SETTLING_MS);
      const settled = await guard.reconcile(action, { tenant: TENANT, proposal: first.proposal });
      expect(settled).toMatchObject({ status: 'verified' });
      expect(settled.result?.receipts).toEqual([
        expect.objectContaining({ id: 'cus_sg_002', provider: 'payments' }),
      ]);
      expect(await updates(sandbox)).toBe(1);
      const customer = (await stripe.customers.retrieve('cus_sg_002')) as Stripe.Customer;
      expect(customer.description).toBe('VIP: call before refunds');
      expect(customer.metadata).toMatchObject({
        note_source: 'agent',
        sideguard_effect: first.semanticEffectKey,
        sideguard_proposal: first.proposal,
      });
      expect(settled.output).toMatchObject({ id: 'cus_sg_002', description: input.description });
    });
  },
);

describe('a customer update that did not happen', () => {
  it('is absent but not final: verification never allows a resend on its own', async () => {
    const { sandbox, action, guard, clock } = await setup({
      faults: firstRequestFault('update_customer', { kind: 'drop_before_dispatch' }),
    });
    const first = await guard.run(action, { tenant: TENANT, principal: 'agent', input });
    expect(first.status).toBe('failed_unknown');
    for (let attempt = 0; attempt < 3; attempt++) {
      clock.advance(SETTLING_MS);
      const checked = await guard.reconcile(action, { tenant: TENANT, proposal: first.proposal });
      expect(checked.outcome).not.toBe('resend_allowed');
      expect(checked.status).not.toBe('verified');
    }
    expect(await updates(sandbox)).toBe(0);
  });

  it('a missing customer is failed_known with resource_missing', async () => {
    const { sandbox, action, guard } = await setup({});
    const result = await guard.run(action, {
      tenant: TENANT,
      principal: 'agent',
      input: { ...input, customerId: 'cus_missing' },
    });
    expect(result).toMatchObject({
      status: 'failed_known',
      reasonCode: 'http_404_resource_missing',
    });
    expect(await updates(sandbox)).toBe(0);
  });
});
