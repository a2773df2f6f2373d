/**
 * A duplicate caller in the process that holds an effect's execution waits for that execution's
 * answer instead of being sent away with `in_progress` (issue 14's storm target: every caller a
 * definite outcome). One executor call still; an executor that calls the guard for its own
 * proposal is not made to wait for itself.
 */
import { describe, expect, it } from 'vitest';
import { createHarness, refundAction, refundArgs } from '../../test/support/guard-harness.js';
import type { Guard } from './guard/guard-types.js';

const principal = 'agent-svc';

describe('duplicates of an execution in flight in this process', () => {
  it('wait for its answer: one executor call, every caller verified or replayed with the receipt', async () => {
    const { guard, tenant, provider } = createHarness();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const slow = refundAction(provider, {
      execute: async (_input, context) => {
        provider.calls.execute += 1;
        entered();
        await gate;
        return {
          kind: 'accepted',
          receipt: { id: `re_${context.providerIdempotencyKey.slice(3, 15)}`, provider: 'fake' },
        };
      },
      verify: async (_input, context) => ({
        kind: 'present',
        receipt: { id: `re_${context.providerIdempotencyKey.slice(3, 15)}`, provider: 'fake' },
      }),
    });
    const prepared = await guard.prepare(slow, { tenant, input: refundArgs(), principal });
    const first = guard.execute(slow, { tenant, proposal: prepared.proposal });
    await started;
    let settled = 0;
    const duplicates = Array.from({ length: 8 }, () =>
      guard.execute(slow, { tenant, proposal: prepared.proposal }).then((result) => {
        settled += 1;
        return result;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(0);
    release();
    const results = [await first, ...(await Promise.all(duplicates))];
    expect(provider.calls.execute).toBe(1);
    expect(results.map((result) => result.outcome)).toEqual([
      'verified',
      ...Array.from({ length: 8 }, () => 'replayed'),
    ]);
    for (const result of results) expect(result.result?.receipts).toHaveLength(1);
  });

  it('does not make an executor that calls the guard for its own proposal wait for itself', async () => {
    const { guard, tenant, provider } = createHarness();
    const inner: { outcome?: string | undefined } = {};
    let self: Guard | undefined;
    const reentrant = refundAction(provider, {
      execute: async (_input, context) => {
        provider.calls.execute += 1;
        const again = await self?.execute(reentrant, {
          tenant: context.tenant,
          proposal: context.proposal,
        });
        inner.outcome = again?.outcome;
        return { kind: 'accepted', receipt: { id: 're_reentrant', provider: 'fake' } };
      },
      verify: async () => ({ kind: 'present', receipt: { id: 're_reentrant', provider: 'fake' } }),
    });
    self = guard;
    const result = await guard.run(reentrant, { tenant, input: refundArgs(), principal });
    expect(result.outcome).toBe('verified');
    expect(inner.outcome).toBe('in_progress');
    expect(provider.calls.execute).toBe(1);
  });
});
