import { describe, expect, it } from 'vitest';
import {
  decide,
  ledgerOf,
  ofType,
  PRINCIPAL,
  prepareForApproval,
} from '../../test/support/evidence-helpers.js';
import { createHarness, refundAction, refundArgs } from '../../test/support/guard-harness.js';

const MINUTE = 60_000;
const principal = PRINCIPAL;

/** A harness whose drift check lets `advanceMs` pass on the guard's clock before answering. */
function slowResolve(advanceMs: number, options: Parameters<typeof createHarness>[0] = {}) {
  const h = createHarness(options);
  const refund = refundAction(h.provider, {
    resolve: async () => {
      h.provider.calls.resolve += 1;
      h.clock.advance(advanceMs);
      return { kind: 'current' };
    },
  });
  return { ...h, refund };
}

/** Prepares the allowed refund and executes it once. */
async function prepareAndExecute(h: ReturnType<typeof slowResolve>) {
  const prepared = await h.guard.prepare(h.refund, {
    tenant: h.tenant,
    input: refundArgs(),
    principal,
  });
  const result = await h.guard.execute(h.refund, { tenant: h.tenant, proposal: prepared.proposal });
  return { prepared, result };
}

describe('time of check after the drift check (window 1)', () => {
  it('does not execute a proposal whose time to live ends while resolve runs', async () => {
    const h = slowResolve(15 * MINUTE);
    const { prepared, result } = await prepareAndExecute(h);
    expect(result).toMatchObject({ outcome: 'expired', status: 'expired' });
    expect(h.provider.calls).toMatchObject({ resolve: 1, execute: 0 });
    expect(ofType(await ledgerOf(h, prepared.proposal), 'commit_started')).toHaveLength(0);
  });

  it('does not execute when the approvals in force lapse while resolve runs', async () => {
    const h = slowResolve(2 * MINUTE);
    const { proposal } = await prepareForApproval(h, {}, h.refund);
    await decide(h, proposal, 'finance-a', { validForMs: MINUTE }, h.refund);
    await decide(h, proposal, 'finance-b', { validForMs: MINUTE }, h.refund);
    const result = await h.guard.execute(h.refund, { tenant: h.tenant, proposal });
    expect(result).toMatchObject({ status: 'awaiting_authority', reasonCode: 'authority_lapsed' });
    expect(h.provider.calls).toMatchObject({ resolve: 1, execute: 0 });
    expect(ofType(await ledgerOf(h, proposal), 'authority_lapsed')).toHaveLength(1);
  });

  it('starts the lease when it is granted, after resolve, so it never ends before it began', async () => {
    const h = slowResolve(45_000);
    expect(h.refund.executionLeaseMs).toBe(30_000);
    const { prepared, result } = await prepareAndExecute(h);
    expect(result.outcome).toBe('verified');
    const [started] = ofType(await ledgerOf(h, prepared.proposal), 'commit_started');
    const at = Date.parse(String(started?.at));
    expect(at).toBe(h.clock.now());
    expect(Date.parse(String(started?.data.leaseExpiresAt)) - at).toBe(h.refund.executionLeaseMs);
    const claim = await h.store.getEffectClaim(
      h.tenant,
      `${h.refund.typeName}#${result.semanticEffectKey}`,
    );
    expect(claim?.claimedAtMs).toBe(at);
  });

  it('with the recheck_after_resolve_skipped breakage, executes the proposal that expired during resolve', async () => {
    const h = slowResolve(15 * MINUTE, { breakages: new Set(['recheck_after_resolve_skipped']) });
    const { result } = await prepareAndExecute(h);
    expect(result.status).toBe('verified');
    expect(h.provider.calls.execute).toBe(1);
  });
});
