/**
 * `verifyLedger` and `exportLedgerChunks` read the chain a page at a time (issue 14: constant
 * memory however long the chain). Paging must not weaken detection: a chain cut at its end, an
 * entry added after the head, and an entry changed on a later page are still found, and entries a
 * busy tenant appends while the check reads are read too (no false alarm).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createGuard } from '../create-guard.js';
import { createMemoryStore } from '../stores/memory/memory-store.js';
import { defineAction } from './action.js';
import { createDevelopmentKeyRing } from './key-ring.js';
import type { LedgerEvent } from './ledger.js';
import type { GuardStore, LedgerQuery } from './store.js';

const TENANT = 'tenant-pages';

const noop = defineAction({
  type: { namespace: 'test', name: 'noop', version: 1 },
  input: z.object({ effect: z.string() }),
  protectedFields: ['effect'],
  policy: () => ({ decision: 'allow', reason: 'tests_allow' }),
  async execute(_input, context) {
    return {
      kind: 'accepted',
      receipt: { id: `r_${context.providerIdempotencyKey.slice(3, 20)}`, provider: 'test' },
    };
  },
  async verify(_input, context) {
    return {
      kind: 'present',
      receipt: { id: `r_${context.providerIdempotencyKey.slice(3, 20)}`, provider: 'test' },
    };
  },
});

/** A store whose ledger reads can be edited on the way out, and that counts page sizes. */
function observedStore(inner: GuardStore) {
  const pages: number[] = [];
  let edit: (events: LedgerEvent[], query: LedgerQuery) => Promise<LedgerEvent[]> = async (e) => e;
  const store: GuardStore = {
    ...inner,
    commit: (write) => inner.commit(write),
    async readLedger(query) {
      const events = await edit([...(await inner.readLedger(query))], query);
      if (query.proposal === undefined) pages.push(events.length);
      return events;
    },
  };
  return {
    store,
    pages,
    setEdit(next: typeof edit) {
      edit = next;
    },
  };
}

async function guardWithHistory(actions: number) {
  const observed = observedStore(createMemoryStore());
  const guard = createGuard({ store: observed.store, keyRing: createDevelopmentKeyRing() });
  for (let index = 0; index < actions; index += 1) {
    const result = await guard.run(noop, {
      tenant: TENANT,
      principal: 'tests',
      input: { effect: `e-${index}` },
    });
    expect(result.outcome).toBe('verified');
  }
  const head = await observed.store.ledgerHead(TENANT);
  if (head === undefined) throw new Error('no head');
  return { guard, observed, head };
}

describe('ledger verification and export, page by page', () => {
  it('verifies a chain of several pages and exports it in chunks equal to the one-string export', async () => {
    const { guard, observed, head } = await guardWithHistory(400);
    expect(head.sequence).toBeGreaterThan(2000);
    observed.pages.length = 0;
    const verdict = await guard.verifyLedger({ tenant: TENANT });
    expect(verdict).toEqual({ kind: 'valid', count: head.sequence, head });
    expect(Math.max(...observed.pages)).toBeLessThanOrEqual(1000);
    expect(observed.pages.length).toBeGreaterThanOrEqual(3);

    const chunks: string[] = [];
    for await (const chunk of guard.exportLedgerChunks({ tenant: TENANT })) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThanOrEqual(3);
    const text = chunks.join('');
    expect(text).toBe(await guard.exportLedger({ tenant: TENANT }));
    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as LedgerEvent);
    expect(lines.map((event) => event.sequence)).toEqual(
      Array.from({ length: head.sequence }, (_, index) => index + 1),
    );
  });

  it('finds the newest entries removed, though every page it read is a valid chain', async () => {
    const { guard, observed, head } = await guardWithHistory(150);
    observed.setEdit(async (events) =>
      events.filter((event) => event.sequence <= head.sequence - 3),
    );
    const verdict = await guard.verifyLedger({ tenant: TENANT });
    expect(verdict).toMatchObject({ kind: 'invalid', reason: 'head_mismatch' });
    expect(verdict.kind === 'invalid' && verdict.message).toMatch(
      /entries were removed from the end/,
    );
  });

  it('finds an entry added after the head', async () => {
    const { guard, observed, head } = await guardWithHistory(150);
    const last = (
      await observed.store.readLedger({ tenant: TENANT, afterSequence: head.sequence - 1 })
    )[0];
    observed.setEdit(async (events, query) =>
      last !== undefined && (events.at(-1)?.sequence ?? query.afterSequence ?? 0) >= head.sequence
        ? [...events, { ...last, sequence: head.sequence + 1, previousHash: head.hash }]
        : events,
    );
    const verdict = await guard.verifyLedger({ tenant: TENANT });
    expect(verdict.kind).toBe('invalid');
  });

  it('finds an entry changed on a later page', async () => {
    const { guard, observed } = await guardWithHistory(200);
    observed.setEdit(async (events) =>
      events.map((event) =>
        event.sequence === 1100 ? { ...event, at: '2020-01-01T00:00:00.000Z' } : event,
      ),
    );
    const verdict = await guard.verifyLedger({ tenant: TENANT });
    expect(verdict).toMatchObject({ kind: 'invalid', sequence: 1100 });
  });

  it('reads entries a busy tenant appends while it verifies, and passes', async () => {
    const { guard, observed } = await guardWithHistory(150);
    let appended = 0;
    observed.setEdit(async (events, query) => {
      // Another caller commits between two of the check's reads.
      if (query.proposal === undefined && appended < 3) {
        appended += 1;
        await guard.run(noop, {
          tenant: TENANT,
          principal: 'tests',
          input: { effect: `late-${appended}` },
        });
      }
      return events;
    });
    const verdict = await guard.verifyLedger({ tenant: TENANT });
    observed.setEdit(async (events) => events);
    const head = await observed.store.ledgerHead(TENANT);
    expect(appended).toBe(3);
    expect(verdict).toEqual({ kind: 'valid', count: head?.sequence, head });
  });
});
