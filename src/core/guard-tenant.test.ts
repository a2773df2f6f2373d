import { describe, expect, it } from 'vitest';
import { evidenceFor, PRINCIPAL, present } from '../../test/support/evidence-helpers.js';
import { createHarness, refundArgs } from '../../test/support/guard-harness.js';
import { ContractViolationError } from './errors.js';

/** One tenant name, two spellings: NFC (U+00E9) and NFD (e + U+0301). */
const NFC = 'caf\u00e9-gmbh';
const NFD = 'cafe\u0301-gmbh';

async function refusal(attempt: Promise<unknown>): Promise<ContractViolationError> {
  const error = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ContractViolationError);
  expect((error as ContractViolationError).code).toBe('tenant_not_nfc');
  expect((error as Error).message).toMatch(/normalize\("NFC"\)/);
  return error as ContractViolationError;
}

describe('tenant names', () => {
  it('are one tenant per name: the NFC spelling works and the NFD spelling is refused, storing nothing', async () => {
    expect(NFC).not.toBe(NFD);
    expect(NFD.normalize('NFC')).toBe(NFC);
    const h = createHarness();
    const first = await h.guard.run(h.refund, {
      tenant: NFC,
      input: refundArgs(),
      principal: PRINCIPAL,
    });
    expect(first.status).toBe('verified');

    // Canonical JSON would give the NFD spelling the same effect key: it must never get that far.
    await refusal(
      h.guard.run(h.refund, { tenant: NFD, input: refundArgs(), principal: PRINCIPAL }),
    );
    await refusal(
      h.guard.prepare(h.refund, {
        tenant: NFD,
        input: refundArgs(),
        principal: PRINCIPAL,
        mode: 'dry_run',
      }),
    );
    expect(h.provider.writes.size).toBe(1);
    expect(await h.store.readLedger({ tenant: NFD })).toEqual([]);
    expect(await h.store.ledgerHead(NFD)).toBeUndefined();
  });

  it('refuses the other spelling at every entry point, before it looks anything up', async () => {
    const h = createHarness();
    const { proposal } = await h.guard.prepare(h.refund, {
      tenant: NFC,
      input: refundArgs({ amount: '500.00' }),
      principal: PRINCIPAL,
    });
    const address = { tenant: NFD, proposal };
    const reader = { ...address, reader: PRINCIPAL };
    const evidence = await evidenceFor({ ...h, tenant: NFC }, proposal, 'finance-a');
    const attempts: Promise<unknown>[] = [
      h.guard.execute(h.refund, address),
      h.guard.reconcile(h.refund, address),
      h.guard.resumeVerification(h.refund, address),
      h.guard.compensate(h.refund, address),
      h.guard.expireDue(h.refund, address),
      h.guard.sweep(h.refund, { tenant: NFD }),
      h.guard.read(h.refund, reader),
      h.guard.erase(h.refund, reader),
      h.guard.exportLedger({ tenant: NFD }),
      h.guard.verifyLedger({ tenant: NFD }),
      h.guard.replay(address),
      present({ ...h, tenant: NFD }, evidence, 'finance-a'),
    ];
    for (const attempt of attempts) await refusal(attempt);
    expect((await h.store.getProposal(NFC, proposal))?.revision).toBe(1);
  });

  it('rejects evidence naming the other spelling of the session tenant as a tenant mismatch', async () => {
    const h = { ...createHarness(), tenant: NFC };
    const { proposal } = await h.guard.prepare(h.refund, {
      tenant: NFC,
      input: refundArgs({ amount: '500.00' }),
      principal: PRINCIPAL,
    });
    const evidence = await evidenceFor(h, proposal, 'finance-a');
    const result = await present(h, { ...evidence, tenant: NFD }, 'finance-a');
    expect(result).toMatchObject({ outcome: 'rejected', reasonCode: 'evidence_tenant_mismatch' });
  });
});
