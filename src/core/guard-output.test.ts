import { describe, expect, it } from 'vitest';
import { createHarness, refundAction, refundArgs } from '../../test/support/guard-harness.js';

const principal = 'agent-svc';
const responseBody = { id: 're_1', customer: 'Ada Lovelace <ada@example.com>', amount: 4200 };

function harnessWithOutput(output: unknown = responseBody) {
  const harness = createHarness();
  const base = refundAction(harness.provider);
  const refund = refundAction(harness.provider, {
    execute: async (input, context) => {
      const result = await base.config.execute(input, context);
      return result.kind === 'accepted' ? { ...result, output: output as never } : result;
    },
  });
  return { ...harness, refund };
}

describe('the private output of a write', () => {
  it('goes back to the executing call and to every duplicate, with one provider write', async () => {
    const { guard, refund, tenant, provider } = harnessWithOutput();
    const first = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(first).toMatchObject({ outcome: 'verified', output: responseBody });
    const retry = await guard.run(refund, {
      tenant,
      input: refundArgs({ requestId: 'req-2' }),
      principal,
    });
    expect(retry).toMatchObject({ outcome: 'replayed', proposal: first.proposal });
    expect(retry.output).toEqual(responseBody);
    const again = await guard.execute(refund, { tenant, proposal: first.proposal });
    expect(again).toMatchObject({ outcome: 'replayed', output: responseBody });
    const view = await guard.read(refund, { tenant, proposal: first.proposal, reader: principal });
    expect(view.output).toEqual(responseBody);
    expect(provider.calls.execute).toBe(1);
  });

  it('is stored only encrypted and never reaches the ledger', async () => {
    const { guard, refund, tenant, store } = harnessWithOutput();
    const first = await guard.run(refund, { tenant, input: refundArgs(), principal });
    const record = await store.getProposal(tenant, first.proposal);
    expect(record?.output).toBeTruthy();
    expect(JSON.stringify(record)).not.toContain('Ada Lovelace');
    expect(await guard.exportLedger({ tenant })).not.toContain('Ada Lovelace');
  });

  it('comes from the verifier when the executor lost the response', async () => {
    const { guard, tenant, provider } = createHarness();
    const base = refundAction(provider);
    const refund = refundAction(provider, {
      verify: async (input, context) => {
        const found = await base.config.verify(input, context);
        return found.kind === 'present' ? { ...found, output: { fetched: true } } : found;
      },
    });
    provider.steps = ['lost_after_write'];
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result).toMatchObject({ outcome: 'verified', output: { fetched: true } });
    const duplicate = await guard.run(refund, {
      tenant,
      input: refundArgs({ requestId: 'req-2' }),
      principal,
    });
    expect(duplicate.output).toEqual({ fetched: true });
    expect(provider.writes.size).toBe(1);
  });

  it('is refused, not kept, when it is not canonical JSON — the write is still recorded', async () => {
    const { guard, refund, tenant, provider } = harnessWithOutput({ amount: 42.5 });
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result.outcome).toBe('verified');
    expect(result.output).toBeUndefined();
    const ledger = await guard.exportLedger({ tenant });
    expect(ledger).toContain('"outputNotKept":"output_not_canonical"');
    expect(provider.writes.size).toBe(1);
  });

  it('is refused when larger than 256 KiB', async () => {
    const { guard, refund, tenant } = harnessWithOutput({ body: 'x'.repeat(300 * 1024) });
    const result = await guard.run(refund, { tenant, input: refundArgs(), principal });
    expect(result).toMatchObject({ outcome: 'verified' });
    expect(result.output).toBeUndefined();
    expect(await guard.exportLedger({ tenant })).toContain('output_too_large');
  });

  it('is destroyed by erasure', async () => {
    const { guard, refund, tenant, store } = harnessWithOutput();
    const first = await guard.run(refund, { tenant, input: refundArgs(), principal });
    const erased = await guard.erase(refund, {
      tenant,
      proposal: first.proposal,
      reader: principal,
    });
    expect(erased.outcome).toBe('erased');
    expect((await store.getProposal(tenant, first.proposal))?.output).toBeNull();
    const view = await guard.read(refund, { tenant, proposal: first.proposal, reader: principal });
    expect(view.output).toBeUndefined();
  });
});
