import { describe, expect, it } from 'vitest';
import { createHarness, refundArgs } from '../../test/support/guard-harness.js';
import { StoreInvariantError } from './errors.js';
import { readLedgerAnchor } from './ledger-anchor.js';

describe('readLedgerAnchor', () => {
  it("gives the tenant's head with the time of its last event, and nothing for a tenant without a ledger", async () => {
    const h = createHarness();
    await h.guard.run(h.refund, { tenant: h.tenant, input: refundArgs(), principal: 'agent' });
    const events = await h.store.readLedger({ tenant: h.tenant });
    const last = events.at(-1)!;
    expect(await readLedgerAnchor(h.store, h.tenant)).toEqual({
      tenant: h.tenant,
      sequence: last.sequence,
      hash: last.hash,
      at: last.at,
    });
    expect(await readLedgerAnchor(h.store, 'tenant-without-ledger')).toBeUndefined();
  });

  it('still gives the head once retention removed its event (without a time)', async () => {
    const h = createHarness();
    await h.guard.run(h.refund, { tenant: h.tenant, input: refundArgs(), principal: 'agent' });
    const head = (await h.store.ledgerHead(h.tenant))!;
    await h.store.truncateLedger(h.tenant, head.sequence);
    expect(await readLedgerAnchor(h.store, h.tenant)).toEqual({
      tenant: h.tenant,
      ...head,
      at: null,
    });
  });

  it('refuses a head that names an event the chain does not hold', async () => {
    const h = createHarness();
    await h.guard.run(h.refund, { tenant: h.tenant, input: refundArgs(), principal: 'agent' });
    const head = (await h.store.ledgerHead(h.tenant))!;
    const lying = { ...h.store, ledgerHead: async () => ({ ...head, hash: '0'.repeat(64) }) };
    await expect(readLedgerAnchor(lying, h.tenant)).rejects.toSatisfy(
      (error) => error instanceof StoreInvariantError && error.code === 'ledger_head_mismatch',
    );
  });
});
