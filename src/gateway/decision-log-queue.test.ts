/**
 * The decision log's group commit (decision 070) against the real memory store: decisions land on
 * their tenant's hash chain in order and in batches, a full buffer makes `record` wait instead of
 * dropping, a failing store is retried until it takes the batch, `close` flushes, and what cannot
 * be written by then is reported with its count. Hostile strings are stored well-formed and short.
 */
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../core/canonical-json.js';
import { verifyLedgerChain } from '../core/ledger.js';
import type { GuardStore, StoreCommit } from '../core/store.js';
import { createMemoryStore } from '../stores/memory/memory-store.js';
import { DECISION_FIELD_MAX_LENGTH } from './decision-ledger-draft.js';
import { createDecisionLog, type GatewayDecisionEvent } from './decision-log.js';

const decision = (
  n: number,
  overrides: Partial<GatewayDecisionEvent> = {},
): GatewayDecisionEvent => ({
  v: 1,
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  door: 'http',
  tenant: 'acme',
  decision: 'forward',
  reason: 'declared_read',
  upstream: 'payments',
  subject: `GET /v1/refunds/:id#${n}`,
  binding: 'refund-read',
  agent: 'support-bot',
  principal: 'support-team',
  code: 'forward',
  status: 200,
  ...overrides,
});

/** The memory store, with commits counted and optionally held or failed by the test. */
function instrumentedStore() {
  const store = createMemoryStore();
  const state = {
    commits: 0,
    failNext: 0,
    gate: undefined as Promise<void> | undefined,
  };
  const wrapped: Pick<GuardStore, 'commit'> = {
    async commit(write: StoreCommit) {
      state.commits += 1;
      if (state.gate !== undefined) await state.gate;
      if (state.failNext > 0) {
        state.failNext -= 1;
        throw new Error('database unreachable');
      }
      return store.commit(write);
    },
  };
  return { store, wrapped, state };
}

const subjects = async (store: GuardStore, tenant = 'acme') =>
  (await store.readLedger({ tenant })).map((event) => event.data.subject);

describe('decision log', () => {
  it('seals every decision on its tenant’s chain in order, many per commit', async () => {
    const { store, wrapped, state } = instrumentedStore();
    const log = createDecisionLog(wrapped, { maxBatch: 64, flushIntervalMs: 5 });
    for (let n = 0; n < 200; n += 1) {
      await log.record(decision(n, n % 10 === 0 ? { tenant: 'globex' } : {}));
    }
    expect(log.pending).toBeGreaterThan(0);
    await log.flush();
    expect(log.pending).toBe(0);
    const acme = await store.readLedger({ tenant: 'acme' });
    expect(acme).toHaveLength(180);
    expect(acme.every((event) => event.type === 'gateway_decided' && event.proposal === null)).toBe(
      true,
    );
    expect(acme.map((event) => event.data.subject)).toEqual(
      [...Array(200).keys()].filter((n) => n % 10 !== 0).map((n) => `GET /v1/refunds/:id#${n}`),
    );
    expect(verifyLedgerChain(acme)).toMatchObject({ kind: 'valid', count: 180 });
    expect(verifyLedgerChain(await store.readLedger({ tenant: 'globex' }))).toMatchObject({
      kind: 'valid',
      count: 20,
    });
    // Batches of up to 64, one commit per tenant per batch: 200 decisions take a handful.
    expect(state.commits).toBeLessThanOrEqual(12);
    await log.close();
  });

  it('makes record wait when the buffer is full, and never drops a decision', async () => {
    const { store, wrapped, state } = instrumentedStore();
    let release: () => void = () => {};
    state.gate = new Promise((done) => {
      release = done;
    });
    const log = createDecisionLog(wrapped, { maxBatch: 2, capacity: 4, flushIntervalMs: 1 });
    const admitted: number[] = [];
    const records = [...Array(7).keys()].map((n) =>
      log.record(decision(n)).then(() => admitted.push(n)),
    );
    await new Promise((done) => setTimeout(done, 20));
    // Four fit (two of them being written); the other three wait for room.
    expect(admitted).toEqual([0, 1, 2, 3]);
    expect(log.pending).toBe(7);
    state.gate = undefined;
    release();
    await Promise.all(records);
    expect(admitted).toEqual([0, 1, 2, 3, 4, 5, 6]);
    await log.flush();
    expect(await subjects(store)).toEqual(
      [...Array(7).keys()].map((n) => `GET /v1/refunds/:id#${n}`),
    );
    await log.close();
  });

  it('retries a batch the store refused and keeps the order', async () => {
    const { store, wrapped, state } = instrumentedStore();
    state.failNext = 2;
    const errors: { code?: string }[] = [];
    const log = createDecisionLog(wrapped, {
      flushIntervalMs: 1,
      retryDelayMs: 1,
      onError: (error) => errors.push(error as { code?: string }),
    });
    await log.record(decision(1));
    await log.record(decision(2));
    await log.flush();
    await log.record(decision(3));
    await log.flush();
    expect(errors.map((error) => error.code)).toEqual([
      'decision_log_write_failed',
      'decision_log_write_failed',
    ]);
    expect(await subjects(store)).toEqual([1, 2, 3].map((n) => `GET /v1/refunds/:id#${n}`));
    expect(verifyLedgerChain(await store.readLedger({ tenant: 'acme' })).kind).toBe('valid');
    await log.close();
  });

  it('flushes on close, including decisions recorded while closing', async () => {
    const { store, wrapped } = instrumentedStore();
    const log = createDecisionLog(wrapped, { flushIntervalMs: 60_000 });
    await log.record(decision(1));
    const closing = log.close();
    await log.record(decision(2));
    await closing;
    expect(await subjects(store)).toEqual([1, 2].map((n) => `GET /v1/refunds/:id#${n}`));
  });

  it('reports how many decisions a dead store left unwritten at close, and any recorded after', async () => {
    const { store, wrapped, state } = instrumentedStore();
    state.failNext = Number.POSITIVE_INFINITY;
    const errors: { code?: string; data?: { count?: number } }[] = [];
    const log = createDecisionLog(wrapped, {
      flushIntervalMs: 1,
      retryDelayMs: 1,
      maxRetryDelayMs: 5,
      closeTimeoutMs: 50,
      onError: (error) => errors.push(error as (typeof errors)[number]),
    });
    await log.record(decision(1));
    await log.record(decision(2));
    await log.close();
    const lost = errors.find((error) => error.code === 'decision_log_unwritten');
    expect(lost?.data?.count).toBe(2);
    await log.record(decision(3));
    expect(errors.at(-1)?.code).toBe('decision_log_closed');
    expect(await store.readLedger({ tenant: 'acme' })).toEqual([]);
  });

  it('stores hostile names well-formed, bounded and verbatim otherwise', async () => {
    const { store, wrapped } = instrumentedStore();
    const log = createDecisionLog(wrapped, { flushIntervalMs: 1 });
    const hostile = [
      'lone \uD800 surrogate',
      '</script><script>alert(1)</script>',
      "'; DROP TABLE ledger; --\u0000\n\u001b[31m",
      `long ${'x'.repeat(10_000)}`,
    ];
    for (const [n, subject] of hostile.entries()) {
      await log.record(decision(n, { door: 'mcp', decision: 'deny', subject }));
    }
    await log.flush();
    const stored = await subjects(store);
    expect(stored[0]).toBe('lone \uFFFD surrogate');
    expect(stored[1]).toBe(hostile[1]);
    expect(stored[2]).toBe(hostile[2]);
    expect(String(stored[3])).toHaveLength(DECISION_FIELD_MAX_LENGTH);
    expect(String(stored[3]).endsWith('…')).toBe(true);
    const events = await store.readLedger({ tenant: 'acme' });
    expect(() => canonicalize(events)).not.toThrow();
    expect(verifyLedgerChain(events).kind).toBe('valid');
    await log.close();
  });
});
