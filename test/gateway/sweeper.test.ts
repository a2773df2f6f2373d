/**
 * The sweeper over a real SQLite store with a manual clock: one pass expires due proposals and
 * reconciles due verifications in every tenant, counts what it did, and reports (never throws
 * for) a sweep that fails; the interval runner never overlaps passes and stops on close.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSweeper, sweepOnce } from '../../src/gateway/sweeper.js';
import { createSqliteStore, type SqliteStore } from '../../src/stores/sqlite/index.js';
import { createHarness, refundAction, refundArgs } from '../support/guard-harness.js';

let dir: string;
let store: SqliteStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sideguard-sweeper-'));
  store = createSqliteStore({ path: join(dir, 'guard.db') });
});

afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const OVER_AUTO_LIMIT = { amount: '250.00' };

describe('sweepOnce', () => {
  it('expires due proposals in every tenant once, and leaves ones not yet due alone', async () => {
    const { guard, refund, clock } = createHarness({ store });
    const a = await guard.prepare(refund, {
      tenant: 'tenant-a',
      input: refundArgs(OVER_AUTO_LIMIT),
      principal: 'support',
    });
    const b = await guard.prepare(refund, {
      tenant: 'tenant-b',
      input: refundArgs({ ...OVER_AUTO_LIMIT, orderId: 'ord_2' }),
      principal: 'support',
    });
    expect([a.status, b.status]).toEqual(['awaiting_authority', 'awaiting_authority']);

    const early = await sweepOnce({ guard, store, actions: [refund] });
    expect(early).toMatchObject({ expired: 0, verified: 0, tenants: 2, errors: [] });

    clock.advance(900_000);
    const progress: string[] = [];
    const due = await sweepOnce({
      guard,
      store,
      actions: [refund],
      onProgress: ({ tenant, results }) => progress.push(`${tenant}:${results}`),
    });
    expect(due).toMatchObject({ expired: 2, verified: 0, unresolved: 0, tenants: 2, errors: [] });
    expect(progress.sort()).toEqual(['tenant-a:1', 'tenant-b:1']);
    expect((await store.getProposal('tenant-a', a.proposal))?.status).toBe('expired');
    expect((await store.getProposal('tenant-b', b.proposal))?.status).toBe('expired');

    const again = await sweepOnce({ guard, store, actions: [refund] });
    expect(again).toMatchObject({ expired: 0, tenants: 0 });
  });

  it('reconciles a lost response into verified, and counts an unknown one as still unresolved', async () => {
    const { guard, provider, clock } = createHarness({ store });
    const refund = refundAction(provider, { verificationDelayMs: 60_000 });
    provider.steps = ['lost_after_write', 'lost_before_write'];
    const written = await guard.run(refund, {
      tenant: 'tenant-a',
      input: refundArgs(),
      principal: 'support',
    });
    const unknown = await guard.run(refund, {
      tenant: 'tenant-a',
      input: refundArgs({ orderId: 'ord_lost' }),
      principal: 'support',
    });
    expect(written.status).toBe('failed_unknown');
    expect(unknown.status).toBe('failed_unknown');
    provider.absentAnswer = 'unknown';
    expect(await sweepOnce({ guard, store, actions: [refund] })).toMatchObject({
      verified: 0,
      unresolved: 0,
    });

    clock.advance(60_000);
    const summary = await sweepOnce({ guard, store, actions: [refund] });
    expect(summary).toMatchObject({ verified: 1, unresolved: 1, expired: 0, errors: [] });
    expect((await store.getProposal('tenant-a', written.proposal))?.status).toBe('verified');
    expect(provider.calls.execute).toBe(2);
    expect(provider.writes.size).toBe(1);
  });

  it('counts a sweep that throws with its action, tenant and message, and goes on', async () => {
    const { guard, refund } = createHarness({ store });
    const summary = await sweepOnce({ guard, store, actions: [refund], tenant: '' });
    expect(summary.errors).toHaveLength(1);
    expect(summary.errors[0]).toMatchObject({ action: refund.typeName, tenant: '' });
    expect(summary.errors[0]?.message).not.toBe('');
  });
});

describe('startSweeper', () => {
  it('runs one pass at a time: a second runNow while one runs joins it', async () => {
    const { guard, refund, clock } = createHarness({ store });
    await guard.prepare(refund, {
      tenant: 'tenant-a',
      input: refundArgs(OVER_AUTO_LIMIT),
      principal: 'support',
    });
    clock.advance(900_000);
    const passes: number[] = [];
    const sweeper = startSweeper({
      guard,
      store,
      actions: [refund],
      intervalMs: 86_400_000,
      onPass: (summary) => passes.push(summary.expired),
    });
    const first = sweeper.runNow();
    const second = sweeper.runNow();
    expect(second).toBe(first);
    expect((await first).expired).toBe(1);
    expect((await sweeper.runNow()).expired).toBe(0);
    expect(passes).toEqual([1, 0]);
    await sweeper.close();
    await sweeper.close();
  });

  it('refuses an interval outside 100 ms to one day', () => {
    const { guard, refund } = createHarness({ store });
    expect(() => startSweeper({ guard, store, actions: [refund], intervalMs: 5 })).toThrow(
      /intervalMs must be a whole number of ms from 100/,
    );
  });
});

describe('sideguard serve', () => {
  const configFile = join(import.meta.dirname, '..', 'cli', 'fixtures', 'approvals.config.mjs');

  it('runs the sweeper over every declared action and stops it on close; `sweeper: false` runs none', async () => {
    const { serveGateway } = await import('sideguard/gateway');
    const { createDevelopmentKeyRing } = await import('sideguard');
    const keyRing = createDevelopmentKeyRing('serve-sweeper-tests');
    const served = await serveGateway({
      configFile,
      keyRing,
      port: 0,
      sweeper: { intervalMs: 100 },
    });
    try {
      expect(served.sweeper).toBeDefined();
      const [action] = served.runtime.table.actions.values();
      if (action === undefined) throw new Error('the fixture declares an action');
      await served.runtime.guard.prepare(action, {
        tenant: 'acme',
        input: { orderId: 'ord_serve', amount: '500' },
        principal: 'support',
      });
      const summary = await served.sweeper?.runNow();
      expect(summary).toMatchObject({ actions: 1, tenants: 1, expired: 0, errors: [] });
    } finally {
      await served.close();
    }
    const quiet = await serveGateway({ configFile, keyRing, port: 0, sweeper: false });
    expect(quiet.sweeper).toBeUndefined();
    expect(quiet.notifications).toBeUndefined();
    await quiet.close();
  });
});
