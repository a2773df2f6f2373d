/**
 * A test harness for guard unit tests: a counting in-process provider whose behaviour per call
 * is scripted, a refund action shaped like the issue's, a manual clock and sequential ids.
 * (Integration tests use the real sandbox over HTTP instead of this provider.)
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Breakage } from '../../src/core/breakages.js';
import { createGuardCore } from '../../src/core/guard.js';
import {
  type ActionConfig,
  type ActionDefinition,
  approvals,
  createDevelopmentKeyRing,
  createManualClock,
  createMemoryStore,
  createSequentialIds,
  defineAction,
  type GuardEvent,
  type GuardStore,
  type Receipt,
} from '../../src/index.js';

/** What the provider does on one execute call. */
export type ProviderStep =
  /** Writes and answers. */
  | 'ok'
  /** Refuses before writing (a definite failure). */
  | 'fail_known'
  /** Writes, then the response is lost (the executor reports failed_unknown). */
  | 'lost_after_write'
  /** Never writes and the response is lost. */
  | 'lost_before_write'
  /** Writes, then the executor throws (e.g. a socket reset). */
  | 'throw_after_write'
  /** Writes and then never answers until `release()` is called. */
  | 'hang_after_write';

/** What `verify` answers when no write is found for the key. */
export type AbsentAnswer = 'absent_final' | 'absent_not_final' | 'unknown';

export interface FakeProvider {
  /** Writes by provider idempotency key: the provider's own truth. */
  readonly writes: Map<string, Receipt>;
  readonly calls: { execute: number; verify: number; compensate: number; resolve: number };
  readonly keysSeen: string[];
  /** Steps consumed one per execute call; 'ok' when empty. */
  steps: ProviderStep[];
  absentAnswer: AbsentAnswer;
  /** When true, `resolve` reports drift. */
  drifted: boolean;
  /** Execute calls parked by `hang_after_write`. */
  readonly waiting: (() => void)[];
  /** Releases every hanging execute call. */
  release(): void;
}

export function createFakeProvider(): FakeProvider {
  const waiting: (() => void)[] = [];
  return {
    writes: new Map(),
    calls: { execute: 0, verify: 0, compensate: 0, resolve: 0 },
    keysSeen: [],
    steps: [],
    absentAnswer: 'absent_final',
    drifted: false,
    waiting,
    release() {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

const receiptFor = (key: string): Receipt => ({
  id: `re_${createHash('sha256').update(key).digest('hex').slice(0, 12)}`,
  provider: 'payments',
});

export const refundInput = z.object({
  orderId: z.string(),
  amount: z.string().regex(/^\d+\.\d{2}$/),
  currency: z.string().length(3),
  customerId: z.string(),
  reason: z.string(),
  requestId: z.string().optional(),
});

/** The refund action of the issue: ≤100.00 allowed, ≤1000.00 needs 2-of-3, above is blocked. */
export function refundAction(
  provider: FakeProvider,
  overrides: Partial<ActionConfig<typeof refundInput>> = {},
): ActionDefinition<typeof refundInput> {
  return defineAction({
    type: { namespace: 'support', name: 'refund', version: 1 },
    input: refundInput,
    protectedFields: ['orderId', 'amount', 'currency', 'customerId'],
    policy: (input) => {
      const amount = Number(input.amount);
      if (amount > 1000) return { decision: 'block', reason: 'amount_over_hard_limit' };
      if (amount > 100) return { decision: 'require_approval', reason: 'amount_over_auto_limit' };
      return { decision: 'allow', reason: 'within_auto_limit' };
    },
    approval: approvals.mOfN(2, [
      { id: 'finance-a', requiredAssurance: 'high' },
      'finance-b',
      'finance-c',
    ]),
    preview: (input) => ({
      summary: `Refund ${input.amount} ${input.currency} on ${input.orderId}`,
    }),
    execute: async (_input, context) => {
      provider.calls.execute += 1;
      provider.keysSeen.push(context.providerIdempotencyKey);
      const step = provider.steps.shift() ?? 'ok';
      const key = context.providerIdempotencyKey;
      const write = () => {
        const existing = provider.writes.get(key);
        if (existing) return existing;
        const receipt = receiptFor(`${key}#${provider.writes.size}`);
        provider.writes.set(key, receipt);
        return receipt;
      };
      switch (step) {
        case 'ok':
          return { kind: 'accepted', receipt: write() };
        case 'fail_known':
          return { kind: 'failed_known', reason: 'provider_rejected' };
        case 'lost_after_write':
          write();
          return { kind: 'failed_unknown', reason: 'response_lost' };
        case 'lost_before_write':
          return { kind: 'failed_unknown', reason: 'response_lost' };
        case 'throw_after_write':
          write();
          throw new Error('socket hang up');
        case 'hang_after_write': {
          const receipt = write();
          await new Promise<void>((resolve) => provider.waiting.push(resolve));
          return { kind: 'accepted', receipt };
        }
      }
    },
    verify: async (_input, context) => {
      provider.calls.verify += 1;
      const receipt = provider.writes.get(context.providerIdempotencyKey);
      if (receipt) return { kind: 'present', receipt };
      if (provider.absentAnswer === 'unknown') return { kind: 'unknown', reason: 'provider_down' };
      return { kind: 'absent', final: provider.absentAnswer === 'absent_final' };
    },
    resolve: async () => {
      provider.calls.resolve += 1;
      return provider.drifted
        ? { kind: 'drifted', reason: 'order_refunded_elsewhere' }
        : { kind: 'current' };
    },
    compensate: async (_input, context) => {
      provider.calls.compensate += 1;
      return {
        kind: 'compensated',
        receipt: {
          id: `rev_${context.compensationIdempotencyKey.slice(3, 15)}`,
          provider: 'payments',
        },
      };
    },
    ...overrides,
  });
}

/** A valid refund input; override fields per test. */
export function refundArgs(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    orderId: 'ord_1001',
    amount: '42.00',
    currency: 'EUR',
    customerId: 'cus_ada',
    reason: 'damaged_item',
    requestId: 'req-1',
    ...overrides,
  };
}

export interface HarnessOptions {
  readonly store?: GuardStore;
  readonly events?: (event: GuardEvent) => void | Promise<void>;
  readonly onEventSinkError?: (error: unknown) => void;
  readonly audience?: string;
  /** Test-only guarantees to switch off. @default none */
  readonly breakages?: ReadonlySet<Breakage>;
}

/** A guard over a memory store with a manual clock, sequential ids and a fake provider. */
export function createHarness(options: HarnessOptions = {}) {
  const clock = createManualClock();
  const store = options.store ?? createMemoryStore();
  const keyRing = createDevelopmentKeyRing('sideguard-tests');
  const provider = createFakeProvider();
  let counter = 0;
  const guard = createGuardCore({
    store,
    keyRing,
    clock,
    ids: createSequentialIds(),
    // Deterministic bytes are fine for tests; production uses node:crypto.
    randomBytes: (size) => {
      counter += 1;
      const bytes = new Uint8Array(size);
      for (let i = 0; i < size; i++) bytes[i] = (counter * 31 + i * 7) & 0xff;
      return bytes;
    },
    ...(options.events ? { events: options.events } : {}),
    ...(options.onEventSinkError ? { onEventSinkError: options.onEventSinkError } : {}),
    ...(options.audience ? { audience: options.audience } : {}),
    ...(options.breakages ? { breakages: options.breakages } : {}),
  });
  const refund = refundAction(provider);
  return { clock, store, keyRing, provider, guard, refund, tenant: 'tenant-a' };
}
