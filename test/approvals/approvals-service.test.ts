import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalsError } from '../../src/approvals/index.js';
import { createMemoryStore } from '../../src/index.js';
import {
  type ApprovalsFixture,
  createApprovalsFixture,
  fixtureApprovers,
  OPERATOR,
  PROPOSER,
  TENANT,
} from './approvals-fixture.js';

let fixture: ApprovalsFixture | undefined;
async function setup(...args: Parameters<typeof createApprovalsFixture>) {
  fixture = await createApprovalsFixture(...args);
  return fixture;
}
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

async function refusal(promise: Promise<unknown>): Promise<ApprovalsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApprovalsError);
  return error as ApprovalsError;
}

/** Asserts that `act` is refused with `code` and writes nothing to the ledger or the record. */
async function refusedUnchanged(
  f: ApprovalsFixture,
  proposal: string,
  act: () => Promise<unknown>,
  code: string,
): Promise<ApprovalsError> {
  const before = {
    ledger: (await f.ledger()).length,
    record: await f.store.getProposal(TENANT, proposal),
  };
  const error = await refusal(act());
  expect(error.code).toBe(code);
  expect((await f.ledger()).length).toBe(before.ledger);
  expect(await f.store.getProposal(TENANT, proposal)).toEqual(before.record);
  return error;
}

describe('approvals service: listing and showing', () => {
  it('lists proposals awaiting the viewer, soonest to expire first, with filters', async () => {
    const f = await setup();
    const first = await f.propose({ orderId: 'ord_1' });
    f.clock.advance(60_000);
    const second = await f.propose({ orderId: 'ord_2' }, 'agent-other');
    await f.propose({ orderId: 'ord_small', amount: '5.00' }); // allowed: never pending
    const viewer = await f.login('finance-b');
    const all = await f.service.listPending(viewer);
    expect(all.map((item) => item.proposal)).toEqual([first, second]);
    expect(all[0]).toMatchObject({
      tenant: TENANT,
      actionType: 'support.refund@1',
      principal: PROPOSER,
      agent: 'support-bot',
      preview: { summary: 'Refund 500.00 EUR on ord_1' },
      approvals: { required: 2, approvedBy: [], rejectedBy: null },
      yourDecision: null,
    });
    expect(
      (await f.service.listPending(viewer, { requester: 'agent-other' })).map((i) => i.proposal),
    ).toEqual([second]);
    expect(await f.service.listPending(viewer, { action: 'other.action@1' })).toEqual([]);
    expect(await f.service.listPending(viewer, { tenant: 'elsewhere' })).toEqual([]);
    // An operator is no approver: their inbox is empty, their stuck queue is theirs.
    expect(await f.service.listPending(await f.login(OPERATOR))).toEqual([]);
  });

  it('shows exactly what would happen: preview, protected fields, commitment, policy, tally', async () => {
    const f = await setup();
    const proposal = await f.propose();
    await f.service.approve({ proposal }, await f.login('finance-b'));
    const details = await f.service.show({ proposal }, await f.login('finance-a'));
    const record = await f.store.getProposal(TENANT, proposal);
    expect(details).toMatchObject({
      proposal,
      tenant: TENANT,
      status: 'awaiting_authority',
      policy: { decision: 'require_approval', reasonCode: 'amount_over_auto_limit' },
      principal: PROPOSER,
      agent: 'support-bot',
      preview: { summary: 'Refund 500.00 EUR on ord_1001' },
      protectedFields: [
        { name: 'orderId', value: 'ord_1001' },
        { name: 'amount', value: '500.00' },
        { name: 'currency', value: 'EUR' },
        { name: 'customerId', value: 'cus_ada' },
      ],
      commitment: record?.commitment,
      semanticEffectKey: record?.semanticEffectKey,
      approvals: { required: 2, approvedBy: ['finance-b'], rejectedBy: null },
      viewer: { id: 'finance-a', isAuthority: true, decided: null, mayDecide: true },
    });
    expect(details.approvals.authorities.find((a) => a.id === 'finance-b')).toMatchObject({
      decision: 'approve',
      channelAssurance: 'medium',
    });
  });

  it('answers not-found alike for a forged id, another tenant and someone who may not read', async () => {
    const f = await setup();
    const proposal = await f.propose();
    const viewer = await f.login('finance-b');
    const forged = await refusal(f.service.show({ proposal: 'prop_forged' }, viewer));
    const otherTenant = await refusal(f.service.show({ proposal, tenant: 'elsewhere' }, viewer));
    const outsider = await refusal(f.service.show({ proposal }, await f.login('outsider')));
    const hostile = await refusal(f.service.show({ proposal: '<script>\n' }, viewer));
    for (const error of [forged, otherTenant, outsider, hostile]) {
      expect(error.code).toBe('proposal_not_found');
    }
    expect(outsider.message).toBe(
      (
        await refusal(f.service.show({ proposal: proposal.replace(/.$/, 'x') }, viewer))
      ).message.replace(proposal.replace(/.$/, 'x'), proposal),
    );
  });
});

describe('approvals service: decisions', () => {
  it('two approvals authorize with server-built evidence; the guard then executes once', async () => {
    const f = await setup();
    const proposal = await f.propose();
    const first = await f.service.approve({ proposal }, await f.login('finance-b'), {
      reason: 'customer called',
    });
    expect(first).toMatchObject({
      status: 'awaiting_authority',
      approvals: { approvedBy: ['finance-b'] },
    });
    const second = await f.service.approve({ proposal }, await f.login('finance-a'));
    expect(second).toMatchObject({
      status: 'authorized',
      approvals: { required: 2, approvedBy: ['finance-a', 'finance-b'] },
    });
    const recorded = (await f.ledger(proposal)).filter((e) => e.type === 'authority_recorded');
    expect(
      recorded.map((e) => [e.data.authority, e.data.decision, e.data.channelAssurance]),
    ).toEqual([
      ['finance-b', 'approve', 'medium'],
      ['finance-a', 'approve', 'high'],
    ]);
    expect(recorded[1]?.data.evidenceDigest).toBe(second.evidenceDigest);
    expect(recorded[0]?.data.noteDigest).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(recorded[1]?.data).not.toHaveProperty('noteDigest');
    const executed = await f.guard.execute(f.refund, { tenant: TENANT, proposal });
    expect(executed.status).toBe('verified');
    expect(f.provider.calls.execute).toBe(1);
  });

  it('refuses approving twice and changes nothing', async () => {
    const f = await setup();
    const proposal = await f.propose();
    const approver = await f.login('finance-b');
    await f.service.approve({ proposal }, approver);
    const error = await refusedUnchanged(
      f,
      proposal,
      () => f.service.approve({ proposal }, approver),
      'already_decided',
    );
    expect(error.message).toContain('already approved');
    await refusedUnchanged(
      f,
      proposal,
      () => f.service.deny({ proposal }, approver, { reason: 'changed my mind' }),
      'already_decided',
    );
  });

  it('refuses a reader who is not a declared approver, and a login whose assurance is too low', async () => {
    const f = await setup({
      approvers: await fixtureApprovers({ 'finance-a': { assurance: 'medium' } }),
    });
    const proposal = await f.propose();
    const operatorError = await refusedUnchanged(
      f,
      proposal,
      async () => f.service.approve({ proposal }, await f.login(OPERATOR)),
      'approver_not_declared',
    );
    expect(operatorError.message).toContain('finance-a, finance-b, finance-c');
    const weak = await refusedUnchanged(
      f,
      proposal,
      async () => f.service.approve({ proposal }, await f.login('finance-a')),
      'evidence_refused',
    );
    expect(weak.message).toContain('high channel assurance');
    await refusedUnchanged(
      f,
      proposal,
      async () => f.service.approve({ proposal }, await f.login('outsider')),
      'proposal_not_found',
    );
  });

  it('refuses an expired proposal (and settles it expired) and a decided one', async () => {
    const f = await setup();
    const expiring = await f.propose({ orderId: 'ord_exp' });
    f.clock.advance(f.refund.proposalTtlMs + 1);
    const error = await refusal(
      f.service.approve({ proposal: expiring }, await f.login('finance-b')),
    );
    expect(error.code).toBe('proposal_expired');
    expect((await f.store.getProposal(TENANT, expiring))?.status).toBe('expired');
    expect((await f.ledger(expiring)).some((e) => e.type === 'authority_recorded')).toBe(false);
    await refusedUnchanged(
      f,
      expiring,
      async () => f.service.approve({ proposal: expiring }, await f.login('finance-c')),
      'proposal_expired',
    );

    const denied = await f.propose({ orderId: 'ord_den' });
    await f.service.deny({ proposal: denied }, await f.login('finance-c'), { reason: 'fraud' });
    expect((await f.store.getProposal(TENANT, denied))?.status).toBe('denied');
    const late = await refusedUnchanged(
      f,
      denied,
      async () => f.service.approve({ proposal: denied }, await f.login('finance-b')),
      'proposal_not_pending',
    );
    expect(late.message).toContain('already denied');
  });

  it('refuses a proposal superseded by a raced twin for the same effect, naming the owner', async () => {
    // The memory store lets two prepares race (both are stored, as across processes).
    const f = await setup({ store: createMemoryStore() });
    const [a, b] = await Promise.all([
      f.propose({ requestId: 'r-a' }),
      f.propose({ requestId: 'r-b' }),
    ]);
    expect(a).not.toBe(b);
    await f.service.approve({ proposal: a }, await f.login('finance-a'));
    await f.service.approve({ proposal: a }, await f.login('finance-b'));
    await f.service.approve({ proposal: b }, await f.login('finance-a'));
    await f.service.approve({ proposal: b }, await f.login('finance-b'));
    await f.guard.execute(f.refund, { tenant: TENANT, proposal: a });
    await f.guard.execute(f.refund, { tenant: TENANT, proposal: b });
    expect((await f.store.getProposal(TENANT, b))?.status).toBe('superseded');
    const error = await refusedUnchanged(
      f,
      b,
      async () => f.service.approve({ proposal: b }, await f.login('finance-c')),
      'proposal_not_pending',
    );
    expect(error.message).toContain(`superseded: another proposal for the same effect took it`);
    expect(error.message).toContain(a);
    expect(f.provider.calls.execute).toBe(1);
  });

  it('requires a reason to deny and refuses an oversized one', async () => {
    const f = await setup();
    const proposal = await f.propose();
    const approver = await f.login('finance-b');
    await refusedUnchanged(
      f,
      proposal,
      () => f.service.deny({ proposal }, approver, {}),
      'invalid_request',
    );
    await refusedUnchanged(
      f,
      proposal,
      () => f.service.deny({ proposal }, approver, { reason: 'x'.repeat(1001) }),
      'invalid_request',
    );
  });

  it('lets one of a racing deny and approve win and tells the other what happened', async () => {
    const f = await setup();
    const proposal = await f.propose();
    await f.service.approve({ proposal }, await f.login('finance-a'));
    const [approve, deny] = await Promise.allSettled([
      f.service.approve({ proposal }, await f.login('finance-b')),
      f.service.deny({ proposal }, await f.login('finance-c'), { reason: 'not this one' }),
    ]);
    const outcomes = [approve.status, deny.status].sort();
    expect(outcomes).toEqual(['fulfilled', 'rejected']);
    const loser = (approve.status === 'rejected' ? approve : deny) as PromiseRejectedResult;
    expect(loser.reason).toBeInstanceOf(ApprovalsError);
    expect((loser.reason as ApprovalsError).code).toBe('proposal_not_pending');
    const status = (await f.store.getProposal(TENANT, proposal))?.status;
    expect(status).toBe(approve.status === 'fulfilled' ? 'authorized' : 'denied');
    const recorded = (await f.ledger(proposal)).filter((e) => e.type === 'authority_recorded');
    expect(recorded).toHaveLength(2);
  });
});

describe('approvals service: operators and timeline', () => {
  /** The outage case: the write's outcome is unknown, verification cannot tell. */
  async function unresolved(f: ApprovalsFixture) {
    f.provider.steps = ['lost_before_write'];
    f.provider.absentAnswer = 'unknown';
    const run = await f.guard.run(f.refund, {
      tenant: TENANT,
      input: {
        orderId: 'ord_out',
        amount: '42.00',
        currency: 'EUR',
        customerId: 'cus_ada',
        reason: 'late',
      },
      principal: PROPOSER,
    });
    for (let attempt = 0; attempt < 10; attempt++) {
      const record = await f.store.getProposal(TENANT, run.proposal);
      if (record?.status === 'verification_unresolved') break;
      f.clock.advance(Math.max(f.refund.executionLeaseMs, f.refund.verificationDelayMs) + 1);
      await f.guard.reconcile(f.refund, { tenant: TENANT, proposal: run.proposal });
    }
    expect((await f.store.getProposal(TENANT, run.proposal))?.status).toBe(
      'verification_unresolved',
    );
    return run.proposal;
  }

  it('lists stuck proposals for operators and records an attested absence in the ledger', async () => {
    const f = await setup();
    const proposal = await unresolved(f);
    const operator = await f.login(OPERATOR);
    expect(await f.service.stuck(operator)).toMatchObject([
      { proposal, status: 'verification_unresolved', resolvable: true },
    ]);
    expect(await f.service.stuck(await f.login('finance-b'))).toEqual([]);
    await refusedUnchanged(
      f,
      proposal,
      async () =>
        f.service.resolve({ proposal }, await f.login('finance-b'), {
          finding: { kind: 'absent' },
        }),
      'operator_not_declared',
    );
    const resolved = await f.service.resolve({ proposal }, operator, {
      finding: { kind: 'absent' },
      note: 'Checked the payments dashboard: no refund for ord_out',
    });
    expect(resolved).toMatchObject({
      status: 'failed_known',
      reasonCode: 'operator_attested_absent',
    });
    const [attested] = (await f.ledger(proposal)).filter((e) => e.type === 'operator_resolved');
    expect(attested?.data).toMatchObject({ operator: OPERATOR, finding: 'absent' });
    await refusedUnchanged(
      f,
      proposal,
      () => f.service.resolve({ proposal }, operator, { finding: { kind: 'absent' } }),
      'proposal_not_resolvable',
    );
    expect(await f.service.stuck(operator)).toEqual([]);
  });

  it('gives the timeline from the ledger with the chain verdict', async () => {
    const f = await setup();
    const proposal = await f.propose();
    await f.service.approve({ proposal }, await f.login('finance-a'));
    await f.service.approve({ proposal }, await f.login('finance-b'));
    await f.guard.execute(f.refund, { tenant: TENANT, proposal });
    const timeline = await f.service.timeline({ proposal }, await f.login('finance-c'));
    expect(timeline.decisionPath).toEqual(
      expect.arrayContaining([
        'policy_decided',
        'authority_recorded',
        'authority_satisfied',
        'commit_started',
        'committed',
      ]),
    );
    expect(timeline.receipts).toHaveLength(1);
    expect(timeline.chain.kind).toBe('valid');
    expect((await refusal(f.service.timeline({ proposal }, await f.login('outsider')))).code).toBe(
      'proposal_not_found',
    );
  });
});
