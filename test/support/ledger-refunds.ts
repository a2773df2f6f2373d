/** Refunds run through a guard over a given store, for the `ledger` CLI tests' chains. */
import { expect } from 'vitest';
import {
  createDevelopmentKeyRing,
  createGuard,
  createManualClock,
  type GuardStore,
} from '../../src/index.js';
import { createFakeProvider, refundAction, refundArgs } from './guard-harness.js';

/** Runs refunds `ord_<from>` … for `tenant`, each verified; returns the guard. */
export async function runRefunds(store: GuardStore, tenant: string, from: number, count: number) {
  const guard = createGuard({
    store,
    keyRing: createDevelopmentKeyRing(),
    clock: createManualClock(),
  });
  const refund = refundAction(createFakeProvider());
  for (let index = from; index < from + count; index++) {
    const result = await guard.run(refund, {
      tenant,
      input: refundArgs({ orderId: `ord_${index}` }),
      principal: 'agent',
    });
    expect(result.status).toBe('verified');
  }
  return guard;
}
