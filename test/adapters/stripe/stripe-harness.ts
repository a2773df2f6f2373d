/**
 * The real parts the Stripe pair is tested with: the sandbox's Stripe-shaped payments API over
 * real HTTP (with a customer update added), the official `stripe` client either on its own
 * transport (naive) or on the executor kit's, and a guard on a memory store with a manual
 * clock, so an unknown outcome can be settled by `reconcile` without waiting.
 */
import {
  type ActionDefinition,
  createDevelopmentKeyRing,
  createGuard,
  createManualClock,
  createMemoryStore,
  createSequentialIds,
  defineAction,
  type Guard,
  type ManualClock,
} from 'sideguard';
import { createExecutorTransport, type ExecutorTransport } from 'sideguard/executor-kit';
import type { FaultPlan } from 'sideguard/sandbox';
import { stripeClientSettings, stripeRefundPair } from 'sideguard/stripe';
import Stripe from 'stripe';
import { afterEach } from 'vitest';
import { z } from 'zod';
import { keys, startTestSandbox } from '../../sandbox/sandbox-helpers.js';
import { paymentsWithCustomerUpdates } from './customer-update-operation.js';

export type TestSandbox = Awaited<ReturnType<typeof startTestSandbox>>;
export type IdempotencyMode = 'honour' | 'ignore';

/** A payments-only sandbox (with customer updates) in a temp dir. */
export function startPaymentsSandbox(
  options: { idempotency?: IdempotencyMode; faults?: FaultPlan } = {},
): Promise<TestSandbox> {
  return startTestSandbox({
    providers: [paymentsWithCustomerUpdates],
    idempotency: { payments: options.idempotency ?? 'honour' },
    ...(options.faults === undefined ? {} : { faults: options.faults }),
  });
}

/** A fault plan that applies `fault` to the first request of one payments operation. */
export function firstRequestFault(
  operation: string,
  fault: FaultPlan['rules'][number]['fault'],
): FaultPlan {
  return { version: 1, rules: [{ provider: 'payments', operation, requests: [0], fault }] };
}

const location = (dataUrl: string) => {
  const url = new URL(dataUrl);
  return { host: url.hostname, port: Number(url.port), protocol: 'http' as const };
};

/** The official client on the executor kit: the safe setup. `close` ends its connections. */
export function kitStripe(
  dataUrl: string,
  options: { timeoutMs?: number } = {},
): { stripe: Stripe; transport: ExecutorTransport; close(): Promise<void> } {
  const transport = createExecutorTransport();
  const stripe = new Stripe(keys.paymentsWriter, {
    ...location(dataUrl),
    ...stripeClientSettings(transport, options),
  });
  return { stripe, transport, close: () => transport.close() };
}

/** The official client with its own transport, as most code creates it. */
export function naiveStripe(dataUrl: string, maxNetworkRetries = 0): Stripe {
  return new Stripe(keys.paymentsWriter, { ...location(dataUrl), maxNetworkRetries });
}

/** A guard on a memory store with a manual clock. */
export function createTestGuard(): { guard: Guard; clock: ManualClock } {
  const clock = createManualClock();
  const guard = createGuard({
    store: createMemoryStore(),
    keyRing: createDevelopmentKeyRing('sideguard-stripe-tests'),
    clock,
    ids: createSequentialIds(),
  });
  return { guard, clock };
}

export const refundInput = z.object({
  orderId: z.string(),
  chargeId: z.string(),
  amountMinor: z.number().int().positive(),
  reason: z.enum(['duplicate', 'fraudulent', 'requested_by_customer']),
  /** Retry metadata: not part of the effect. */
  requestId: z.string().optional(),
});
export type RefundInput = z.output<typeof refundInput>;

/** How long after an unknown outcome the guard verifies (and the lease, which must not exceed it). */
export const SETTLING_MS = 5_000;

/** The refund action, with an executor/verifier pair supplied by the test. */
export function refundAction(pair: {
  execute: Parameters<typeof defineAction<typeof refundInput>>[0]['execute'];
  verify: Parameters<typeof defineAction<typeof refundInput>>[0]['verify'];
}) {
  return defineAction({
    type: { namespace: 'support', name: 'stripe_refund', version: 1 },
    input: refundInput,
    protectedFields: ['orderId', 'chargeId', 'amountMinor'],
    policy: () => ({ decision: 'allow', reason: 'test_policy' }),
    ...pair,
    verificationDelayMs: SETTLING_MS,
    executionLeaseMs: SETTLING_MS,
    allowResendAfterFinalAbsence: true,
  });
}

/** The refund action on the kit's Stripe pair. */
export function kitRefundAction(stripe: Stripe) {
  return refundAction(
    stripeRefundPair({
      stripe,
      provider: 'payments',
      refund: (input: RefundInput) => ({
        charge: input.chargeId,
        amount: input.amountMinor,
        reason: input.reason,
        metadata: { order_id: input.orderId },
      }),
    }),
  );
}

/** A refund input on a seeded charge. */
export function refundArgs(overrides: Partial<RefundInput> = {}): RefundInput {
  return {
    orderId: 'ord_1001',
    chargeId: 'ch_sg_001',
    amountMinor: 500,
    reason: 'requested_by_customer',
    requestId: 'req-1',
    ...overrides,
  };
}

export const TENANT = 'acme';

/** How many refunds the sandbox committed for one effect (its own count, not the guard's). */
export async function refundsForEffect(sandbox: TestSandbox, effect: string): Promise<number> {
  const observations = await sandbox.control.observations();
  return observations.writes.byEffect[effect]?.byOperation['payments.create_refund'] ?? 0;
}

/** Registers clean-up steps that run after each test, last registered first. */
export function cleanupAfterEach(): (step: () => Promise<void>) => void {
  const steps: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of steps.splice(0).reverse()) await step();
  });
  return (step) => {
    steps.push(step);
  };
}

/** Sandboxes, clients and transports that are closed after each test. */
export function useStripeTestBed() {
  const defer = cleanupAfterEach();
  return {
    defer,
    async sandbox(options: Parameters<typeof startPaymentsSandbox>[0] = {}): Promise<TestSandbox> {
      const sandbox = await startPaymentsSandbox(options);
      defer(() => sandbox.stop());
      return sandbox;
    },
    kit(dataUrl: string, options: { timeoutMs?: number } = {}) {
      const client = kitStripe(dataUrl, options);
      defer(() => client.close());
      return client;
    },
    transport(): ExecutorTransport {
      const transport = createExecutorTransport();
      defer(() => transport.close());
      return transport;
    },
  };
}

/** Runs a refund action for the test tenant with `refundArgs(overrides)`. */
export function runRefund(
  guard: Guard,
  action: ActionDefinition<typeof refundInput>,
  overrides: Partial<RefundInput> = {},
) {
  return guard.run(action, { tenant: TENANT, principal: 'agent', input: refundArgs(overrides) });
}

/**
 * Waits until the sandbox has committed `count` writes of `operation` (e.g. a released request
 * whose client already gave up), polling its observations; fails after `attempts` polls.
 */
export async function untilCommitted(
  sandbox: TestSandbox,
  operation: string,
  count = 1,
  attempts = 500,
): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const observations = await sandbox.control.observations();
    if ((observations.writes.byOperation[operation] ?? 0) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the sandbox never committed ${count} × ${operation}`);
}
