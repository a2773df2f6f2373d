/**
 * What the framework adapter tests share: a refund action that needs one finance approval above
 * 1.00, executed by `sideguard/stripe`'s refund pair on the official `stripe` client against the
 * sandbox's Stripe-shaped API over real HTTP, and a guard on a memory store. The sandbox's own
 * write counts are the evidence of how many refunds landed.
 */
import {
  approvals,
  createDevelopmentKeyRing,
  createGuard,
  createMemoryStore,
  defineAction,
  type Guard,
} from 'sideguard';
import { stripeRefundPair } from 'sideguard/stripe';
import type Stripe from 'stripe';
import { type RefundInput, refundInput, useStripeTestBed } from './stripe/stripe-harness.js';

export const TENANT = 'acme';
export const PRINCIPAL = 'support-agent';
export const APPROVER = 'finance-ana';

/**
 * A refund over 100 minor units needs `finance-ana`'s approval. `settlingMs` sets how long after
 * an unknown outcome the guard verifies (and the lease). @default the action defaults
 */
export function approvalRefundAction(stripe: Stripe, settlingMs?: number) {
  return defineAction({
    ...(settlingMs === undefined
      ? {}
      : { verificationDelayMs: settlingMs, executionLeaseMs: settlingMs }),
    type: { namespace: 'support', name: 'refund', version: 1 },
    input: refundInput,
    protectedFields: ['orderId', 'chargeId', 'amountMinor'],
    policy: (input) =>
      input.amountMinor <= 100
        ? { decision: 'allow', reason: 'within_auto_limit' }
        : { decision: 'require_approval', reason: 'over_auto_limit' },
    approval: approvals.single(APPROVER),
    preview: (input) => `Refund ${input.amountMinor} on ${input.chargeId} (${input.orderId})`,
    ...stripeRefundPair({
      stripe,
      provider: 'payments',
      refund: (input: RefundInput) => ({
        charge: input.chargeId,
        amount: input.amountMinor,
        reason: input.reason,
        metadata: { order_id: input.orderId },
      }),
    }),
  });
}

export type RefundAction = ReturnType<typeof approvalRefundAction>;

/** Refund arguments the model sends (over the auto limit, so approval is needed). */
export function refundCall(overrides: Partial<RefundInput> = {}): RefundInput {
  return {
    orderId: 'ord_1001',
    chargeId: 'ch_sg_001',
    amountMinor: 500,
    reason: 'requested_by_customer',
    ...overrides,
  };
}

/** A sandbox, the official client on the executor kit, a guard and the refund action. */
export function useAgentBed() {
  const bed = useStripeTestBed();
  return async () => {
    const sandbox = await bed.sandbox({ idempotency: 'ignore' });
    const { stripe } = bed.kit(sandbox.dataUrl);
    const guard: Guard = createGuard({
      store: createMemoryStore(),
      keyRing: createDevelopmentKeyRing('sideguard-adapter-tests'),
    });
    const action = approvalRefundAction(stripe);
    /** Refunds the sandbox committed (its own count). */
    const refunds = async (): Promise<number> =>
      (await sandbox.control.observations()).writes.byOperation['payments.create_refund'] ?? 0;
    return { sandbox, stripe, guard, action, refunds };
  };
}
