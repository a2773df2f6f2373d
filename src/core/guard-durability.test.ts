/**
 * Which commits the guard defers (decision 124): only the outcome recorded after the provider
 * call; never the insert, the claim with `commit_started`, authority or erasure. The event sink
 * still sees events only once durable: a deferred commit's events wait for the store's `sync`,
 * and events committed after them wait behind them.
 */
import { describe, expect, it } from 'vitest';
import {
  createHarness,
  ERASER,
  type FakeProvider,
  type ProviderStep,
  refundAction,
  refundArgs,
} from '../../test/support/guard-harness.js';
import { createMemoryStore, type GuardEvent, type GuardStore, type StoreCommit } from '../index.js';

const principal = 'agent-svc';

/** The harness's refund without its drift check: `run` may insert it already claimed. */
const withoutDriftCheck = (provider: FakeProvider) =>
  refundAction(provider, { resolve: undefined } as never);

/** A memory store that records each commit's durability by event type, and each sync. */
function recordingStore() {
  const inner = createMemoryStore();
  const log: string[] = [];
  const store: GuardStore = {
    ...inner,
    kind: inner.kind,
    commit(write: StoreCommit) {
      const types = write.events.map((event) => event.type).join('+');
      log.push(`commit ${types} ${write.durability ?? 'synced'}`);
      return inner.commit(write);
    },
    // The memory store keeps nothing; this one says it syncs, so the guard waits for it.
    async sync() {
      log.push('sync');
    },
  };
  return { store, log };
}

describe('durability of the guard commits', () => {
  const cases: readonly { step: ProviderStep; outcome: string; deferred: string }[] = [
    {
      step: 'ok',
      outcome: 'verified',
      deferred: 'commit committed+verification_observed deferred',
    },
    { step: 'fail_known', outcome: 'failed_known', deferred: 'commit commit_failed deferred' },
    {
      // Verified at once afterwards (no settling window), in synced commits.
      step: 'lost_after_write',
      outcome: 'verified',
      deferred: 'commit commit_outcome_unknown deferred',
    },
  ];
  for (const { step, outcome, deferred } of cases) {
    it(`run (${step}): the insert with the claim is one synced commit, only the outcome is deferred`, async () => {
      const { store, log } = recordingStore();
      const { guard, tenant, provider } = createHarness({ store });
      provider.steps = [step];
      const result = await guard.run(withoutDriftCheck(provider), {
        tenant,
        input: refundArgs(),
        principal,
      });
      expect(result.outcome).toBe(outcome);
      const commits = log.filter((line) => line.startsWith('commit'));
      // The insert and the claim are one synced commit (decision 124).
      expect(commits.slice(0, 2)).toEqual([
        'commit contract_validated+policy_decided+idempotency_decided+commit_started synced',
        deferred,
      ]);
      expect(commits.filter((line) => line.endsWith('deferred'))).toEqual([deferred]);
    });
  }

  it('run of an action with a drift check: the insert and the claim stay two synced commits', async () => {
    const { store, log } = recordingStore();
    const { guard, refund, tenant } = createHarness({ store });
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result.outcome).toBe('verified');
    expect(log.filter((line) => line.startsWith('commit'))).toEqual([
      'commit contract_validated+policy_decided+idempotency_decided synced',
      'commit commit_started synced',
      'commit committed+verification_observed deferred',
    ]);
  });

  it('a proposal awaiting approval and its erasure stay synced', async () => {
    const { store, log } = recordingStore();
    const { guard, refund, tenant } = createHarness({ store });
    const prepared = await guard.prepare(refund, {
      tenant,
      input: refundArgs({ amount: '500.00' }),
      principal,
    });
    expect(prepared.status).toBe('awaiting_authority');
    await guard.erase(refund, { tenant, proposal: prepared.proposal, reader: ERASER });
    expect(log.filter((line) => line.startsWith('commit')).length).toBeGreaterThan(1);
    expect(log.filter((line) => line.endsWith('deferred'))).toEqual([]);
  });

  it('the sink gets a deferred commit’s events only after the store synced, and keeps the commit order', async () => {
    const { store, log } = recordingStore();
    const seen: GuardEvent[] = [];
    const { guard, refund, tenant } = createHarness({
      store,
      events: (event) => {
        log.push(`sink ${event.type}`);
        seen.push(event);
      },
    });
    await guard.run(refund, { tenant, input: refundArgs(), principal });
    // The next run's synced events were committed while the first run's deferred ones waited.
    await guard.run(refund, { tenant, input: refundArgs({ orderId: 'ord_2' }), principal });
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen.map((event) => event.sequence)).toEqual(
      Array.from({ length: seen.length }, (_, index) => index + 1),
    );
    expect(seen).toHaveLength(12);
    const outcome = log.indexOf('commit committed+verification_observed deferred');
    const synced = log.indexOf('sync', outcome);
    expect(synced).toBeGreaterThan(outcome);
    expect(log.indexOf('sink committed')).toBeGreaterThan(synced);
  });
});
